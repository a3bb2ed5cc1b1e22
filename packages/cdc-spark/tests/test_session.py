"""The settings build_session adds: what it adds and that the user's own settings win."""

from __future__ import annotations

from cdc_spark.class_sharing import DRIVER_OPTIONS
from cdc_spark.jit import COMPILE_HUGE_METHODS, EXECUTOR_OPTIONS, compiles_huge_methods, with_huge_methods
from cdc_spark.session import CODEGEN_CACHE, session_settings


def test_a_local_session_keeps_generated_code_between_batches_and_follows_the_cores() -> None:
    settings = session_settings("local[2]", {"spark.jars": "given.jar"})
    assert int(settings[CODEGEN_CACHE]) >= 1000  # Spark's 100 evicted each batch's classes before the next batch
    assert settings["spark.sql.shuffle.partitions"] == "2"
    assert settings["spark.sql.adaptive.enabled"] == "true"
    assert "spark.jars" not in settings


def test_the_users_codegen_cache_size_wins() -> None:
    settings = session_settings("yarn", {CODEGEN_CACHE: "50", "spark.jars.packages": "x:y:1"})
    assert CODEGEN_CACHE not in settings
    assert "spark.sql.shuffle.partitions" not in settings


def test_local_jvms_compile_huge_methods_unless_the_user_sets_their_options() -> None:
    settings = session_settings("local[2]", {"spark.jars": "given.jar"})
    assert compiles_huge_methods(settings[DRIVER_OPTIONS].split())
    assert compiles_huge_methods(settings[EXECUTOR_OPTIONS].split())
    cluster = session_settings("local-cluster[2,1,1024]", {"spark.jars": "given.jar"})
    assert compiles_huge_methods(cluster[EXECUTOR_OPTIONS].split())
    own = session_settings("local[2]", {DRIVER_OPTIONS: "-Xss4m", EXECUTOR_OPTIONS: "-Xss4m", "spark.jars": "x.jar"})
    assert DRIVER_OPTIONS not in own and EXECUTOR_OPTIONS not in own
    platform = session_settings("yarn", {"spark.jars.packages": "x:y:1"})  # spark-defaults.conf's are not replaced
    assert DRIVER_OPTIONS not in platform and EXECUTOR_OPTIONS not in platform


def test_the_last_switch_given_to_the_jvm_wins() -> None:
    assert not compiles_huge_methods([])
    assert compiles_huge_methods(["-Xmx1g", COMPILE_HUGE_METHODS])
    assert not compiles_huge_methods([COMPILE_HUGE_METHODS, "-XX:+DontCompileHugeMethods"])
    assert compiles_huge_methods(with_huge_methods("-Xss4m").split())
