"""The settings build_session adds: what it adds and that the user's own settings win."""

from __future__ import annotations

import os
import weakref
import zipfile
from typing import Any

import pytest

from cdc_spark.runtime import jit
from cdc_spark.runtime.class_sharing import DRIVER_OPTIONS
from cdc_spark.runtime.jit import COMPILE_HUGE_METHODS, EXECUTOR_OPTIONS, compiles_huge_methods, with_huge_methods
from cdc_spark.runtime.masters import local_cores, runs_in_driver
from cdc_spark.runtime.memory_pages import DRIVER_MEMORY_ENV, PAGE_SIZE, g1_region_bytes, local_page_size, memory_bytes
from cdc_spark.session import CODEGEN_CACHE, CRC_CHECK_OFF_UTC, DATAFRAME_DEBUGGING, session_settings
from cdc_testing.spark_plans import jobs_started


def test_a_local_session_keeps_generated_code_between_batches_and_follows_the_cores() -> None:
    settings = session_settings("local[2]", {"spark.jars": "given.jar"})
    assert int(settings[CODEGEN_CACHE]) >= 1000  # Spark's 100 evicted each batch's classes before the next batch
    assert settings["spark.sql.shuffle.partitions"] == "2"
    assert settings["spark.sql.adaptive.enabled"] == "true"
    assert "spark.jars" not in settings


def test_a_session_builds_columns_without_pysparks_call_site_capture_unless_the_user_wants_it() -> None:
    assert session_settings("yarn", {"spark.jars.packages": "x:y:1"})[DATAFRAME_DEBUGGING] == "false"
    assert DATAFRAME_DEBUGGING not in session_settings("yarn", {DATAFRAME_DEBUGGING: "true", "spark.jars": "x.jar"})


@pytest.mark.spark
def test_the_test_session_builds_columns_without_a_py4j_round_trip_of_call_site_capture(spark: Any) -> None:
    from pyspark.errors.utils import is_debugging_enabled

    assert spark.conf.get(DATAFRAME_DEBUGGING) == "false"
    assert not is_debugging_enabled()  # what PySpark reads (once) before wrapping every Column function


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


def test_a_master_url_tells_whether_the_executors_are_the_drivers_jvm() -> None:
    assert [local_cores(m) for m in ("local", "local[3]", "local[3, 2]", "local[*]")] == [1, 3, 3, os.cpu_count()]
    assert runs_in_driver(" local[2] ")
    for master in ("local-cluster[2,1,1024]", "spark://host:7077", "yarn", "k8s://https://host", "localhost"):
        assert local_cores(master) is None and not runs_in_driver(master), master


def test_the_executors_jvm_options_are_asked_once_per_application(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "_ANSWERS", weakref.WeakKeyDictionary())
    first = jit.executors_compile_huge_methods(spark)
    assert dict(jit._ANSWERS) == {spark.sparkContext: first}

    def asked(master: str) -> bool:
        raise AssertionError(f"the JVM was asked again ({master})")

    monkeypatch.setattr(jit, "runs_in_driver", asked)
    assert jit.executors_compile_huge_methods(spark) == first


def test_a_local_driver_gets_memory_pages_of_a_quarter_of_its_g1_region() -> None:
    # G1 sizes regions as the heap over 2,048, a power of two from 1 to 32 MB; half a region is humongous
    assert g1_region_bytes(memory_bytes("1g") or 0) == 1 << 20
    assert g1_region_bytes(memory_bytes("3g") or 0) == 1 << 20  # 1.5 MB rounds down
    assert g1_region_bytes(memory_bytes("4g") or 0) == 2 << 20
    assert g1_region_bytes(memory_bytes("200g") or 0) == 32 << 20
    assert [local_page_size(m) for m in (None, "2048", "2g", "3g", "4G", "24g", "64g", "100g", "200g")] == [
        "256k",  # Spark's default driver memory, 1 GB
        "256k",  # a bare number is MiB, as Spark reads it
        "256k",
        "511k",  # 1 MB regions: 8,192 pages of 256 KB would hold 2 GB of the 3
        "512k",
        "4095k",
        "8192k",
        "16383k",
        None,  # no page under half a 32 MB region makes 200 GB in 8,192: Spark's own default
    ]
    for memory in ("1g", "3g", "4g", "24g", "31g", "64g", "100g"):  # the pages hold the heap, none humongous
        heap = memory_bytes(memory) or 0
        page = memory_bytes(local_page_size(memory) or "") or 0
        assert 8192 * page >= heap
        assert page + 16 <= g1_region_bytes(heap) // 2  # a long[] of the page, its header included


def test_only_a_local_driver_gets_the_page_size_and_the_users_own_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    jars = {"spark.jars": "given.jar"}
    monkeypatch.setenv(DRIVER_MEMORY_ENV, "4g")  # the launcher's heap when no setting names one
    assert session_settings("local[2]", jars)[PAGE_SIZE] == "512k"
    monkeypatch.delenv(DRIVER_MEMORY_ENV)
    assert session_settings("local[2]", {**jars, "spark.driver.memory": "8g"})[PAGE_SIZE] == "1024k"  # 4 MB regions
    assert session_settings("local[2]", jars)[PAGE_SIZE] == "256k"
    assert PAGE_SIZE not in session_settings("local[2]", {**jars, PAGE_SIZE: "64m"})
    assert PAGE_SIZE not in session_settings("yarn", {"spark.jars.packages": "x:y:1"})
    assert PAGE_SIZE not in session_settings("local[2]", {**jars, "spark.driver.memory": "lots"})  # Spark says why


@pytest.mark.spark
def test_the_test_session_sorts_in_pages_below_the_humongous_size(spark: Any) -> None:
    assert spark.conf.get(PAGE_SIZE) == "256k"  # its driver has 2 GB: 1 MB regions
    manager = spark.sparkContext._jvm.org.apache.spark.SparkEnv.get().memoryManager()
    assert manager.pageSizeBytes() == 256 * 1024
    rows = spark.range(50_000).selectExpr("id % 7 AS k", "uuid() AS u").orderBy("k", "u").collect()
    assert len(rows) == 50_000 and rows[0].k == 0  # a sort of more than one page's rows still works


def _jobs_of_a_delta_append(spark: Any, path: str, check_every_commit: str) -> int:
    """Spark jobs of the second commit to a Delta table, in a session set to a time zone that is not UTC."""
    session = spark.newSession()
    session.conf.set("spark.sql.session.timeZone", "Europe/Berlin")
    session.conf.set(CRC_CHECK_OFF_UTC, check_every_commit)
    rows = session.range(20).selectExpr("id", "timestamp'2024-05-01 12:00:00' AS at")
    rows.write.format("delta").save(path)
    # job ids stay listed under their group: one group per table
    return len(jobs_started(spark, f"append-{path}", lambda: rows.write.format("delta").mode("append").save(path)))


def test_a_session_off_utc_commits_to_delta_without_rebuilding_the_file_list_each_time(
    spark: Any, tmp_path: Any
) -> None:
    """Delta checks each commit's file list against a rebuild of the table's state where the time zone is not UTC;
    the session's setting leaves that to the checkpoints, as in UTC, and the user's own setting wins."""
    ours = session_settings("local[2]", {"spark.jars": "given.jar"})[CRC_CHECK_OFF_UTC]
    assert CRC_CHECK_OFF_UTC not in session_settings("yarn", {CRC_CHECK_OFF_UTC: "true", "spark.jars": "x.jar"})
    checked = _jobs_of_a_delta_append(spark, str(tmp_path / "checked"), "true")  # Delta's default
    unchecked = _jobs_of_a_delta_append(spark, str(tmp_path / "unchecked"), ours)
    assert unchecked < checked, (unchecked, checked)
    assert spark.read.format("delta").load(str(tmp_path / "unchecked")).count() == 40


@pytest.mark.spark
def test_the_suites_jvm_compiles_with_both_tiers_while_the_jvms_it_starts_get_the_first(
    spark: Any, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdc_testing.plugin import SHORT_JVM_OPTIONS, SHORT_JVMS_SET, keep_jvm_defaults, short_jvms
    from cdc_testing.processes import SUBMIT_OPTIONS_ENV

    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    )
    assert bean.getVMOption("TieredStopAtLevel").getValue() == "4"  # a whole suite's JVM: C2 pays for itself
    started: dict[str, str] = {}
    assert short_jvms(started) and started == {SUBMIT_OPTIONS_ENV: SHORT_JVM_OPTIONS}  # what `cdc apply` inherits
    own = {SUBMIT_OPTIONS_ENV: "-Xss4m"}
    assert not short_jvms(own) and own == {SUBMIT_OPTIONS_ENV: "-Xss4m"}  # a developer's own are kept

    # the benchmarks undo the plugin's setting, and only the plugin's
    monkeypatch.setenv(SUBMIT_OPTIONS_ENV, SHORT_JVM_OPTIONS)
    was = pytestconfig.stash.get(SHORT_JVMS_SET, False)
    try:
        pytestconfig.stash[SHORT_JVMS_SET] = False
        keep_jvm_defaults(pytestconfig)
        assert os.environ[SUBMIT_OPTIONS_ENV] == SHORT_JVM_OPTIONS
        pytestconfig.stash[SHORT_JVMS_SET] = True
        keep_jvm_defaults(pytestconfig)
        assert SUBMIT_OPTIONS_ENV not in os.environ
    finally:
        pytestconfig.stash[SHORT_JVMS_SET] = was


def test_a_local_session_maps_local_files_to_the_projects_classes_unless_the_user_sets_them() -> None:
    from cdc_spark.runtime.java_code import jar
    from cdc_spark.runtime.local_files import ABSTRACT_FILE_SYSTEM, CLASSES, FILE_SYSTEM, PACKAGE

    ours = session_settings("local[2]", {"spark.jars": "given.jar"})
    assert {key: ours[key] for key in CLASSES} == CLASSES
    assert ours["spark.driver.extraClassPath"] == str(jar(PACKAGE))
    with zipfile.ZipFile(jar(PACKAGE)) as classes:  # the file systems' classes only: the rest loads as before
        assert {name.rsplit("/", 1)[0] for name in classes.namelist()} == {PACKAGE}
    with zipfile.ZipFile(jar()) as main:  # and only there: a Hadoop that broke them leaves the decode's code alone
        assert not [name for name in main.namelist() if name.startswith(PACKAGE)]
        assert [name for name in main.namelist() if name.startswith("cdc/spark/plans/")]
    for own in ({FILE_SYSTEM: "x"}, {ABSTRACT_FILE_SYSTEM: "x"}, {"spark.driver.extraClassPath": "/x.jar"}):
        settings = session_settings("local[2]", {**own, "spark.jars": "given.jar"})
        assert not set(settings) & {FILE_SYSTEM, ABSTRACT_FILE_SYSTEM, "spark.driver.extraClassPath"}, own
    for master in ("local-cluster[2,1,1024]", "yarn"):  # executors in JVMs of their own
        assert FILE_SYSTEM not in session_settings(master, {"spark.jars": "given.jar"})


def test_a_local_session_keeps_hadoops_local_files_where_the_jar_cannot_be_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cdc_spark.runtime import java_code
    from cdc_spark.runtime.local_files import FILE_SYSTEM

    def no_jdk(package: str | None = None) -> Any:
        raise java_code.JavaCodeError("no javac here")

    monkeypatch.setattr(java_code, "jar", no_jdk)
    settings = session_settings("local[2]", {"spark.jars": "given.jar"})
    assert FILE_SYSTEM not in settings and "spark.driver.extraClassPath" not in settings
    assert settings["spark.sql.shuffle.partitions"] == "2"  # the session is otherwise as it was
