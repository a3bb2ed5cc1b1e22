"""The driver JVM's class-sharing archive: when a session maps it, and that the archive made is one the JVM of a
real ``cdc apply`` accepts (``-Xshare:on`` fails the JVM's start otherwise)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cdc_core.messagelines import write_lines
from cdc_spark.runtime.class_sharing import (
    DRIVER_CLASS_PATH,
    DRIVER_OPTIONS,
    SWITCH_ENV,
    archive_path,
    connectors_of,
    driver_options,
    install_prefix,
)
from cdc_spark.session import session_settings

JARS = "/jars/delta-spark.jar,/jars/iceberg-spark-runtime.jar"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CDC_JVM_CACHE", str(tmp_path))
    monkeypatch.delenv(SWITCH_ENV, raising=False)
    return tmp_path


def _archive(connectors: str) -> Path:
    path = archive_path(connectors)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"archive")
    return path


def test_a_local_driver_maps_the_archive_made_for_its_connectors(cache: Path) -> None:
    given = {"spark.jars": JARS}
    unmapped = session_settings("local[2]", given)  # none made yet
    assert not [option for option in unmapped[DRIVER_OPTIONS].split() if option.startswith("-XX:SharedArchiveFile")]
    path = _archive(connectors_of({**unmapped, **given}))  # the connectors and the driver's own class path
    assert path.is_relative_to(cache)
    options = session_settings("local[2]", {"spark.jars": JARS})[DRIVER_OPTIONS]
    assert f"-XX:SharedArchiveFile={path}" in options.split()
    cluster = _archive(JARS)  # a local-cluster session's driver has no class path entries of its own
    assert f"-XX:SharedArchiveFile={cluster}" in str(driver_options("local-cluster[2,1,1024]", {}, JARS)).split()


def test_another_pyspark_installation_has_archives_of_its_own(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JVM maps an archive only with the class path it was made with, Spark's jars from pyspark's directory:
    the same pyspark version installed elsewhere (another virtualenv) must not find this one's archive."""
    import pyspark

    here = archive_path(JARS)
    assert here.name.startswith(install_prefix())
    monkeypatch.setattr(pyspark, "__file__", str(cache / "elsewhere" / "pyspark" / "__init__.py"))
    assert not archive_path(JARS).name.startswith(here.name[: len(install_prefix())])
    assert archive_path(JARS).name[len(install_prefix()) :] == here.name[len(install_prefix()) :]


def test_other_connectors_a_cluster_the_users_own_options_or_the_switch_keep_it_off(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _archive(JARS)
    assert archive_path(JARS + ",/jars/more.jar") != archive_path(JARS)
    assert driver_options("local[2]", {}, JARS + ",/jars/more.jar") is None
    assert driver_options("yarn", {}, JARS) is None
    assert driver_options(None, {}, JARS) is None
    assert driver_options("local[2]", {DRIVER_OPTIONS: "-Xmx1g"}, JARS) is None
    assert driver_options("local[2]", {}, "") is None
    monkeypatch.setenv(SWITCH_ENV, "off")
    assert driver_options("local[2]", {}, JARS) is None


def test_the_connectors_are_the_jars_or_else_the_coordinates() -> None:
    assert connectors_of({"spark.jars": "a.jar", "spark.jars.packages": "g:a:1"}) == "a.jar"
    assert connectors_of({"spark.jars.packages": "g:a:1"}) == "g:a:1"
    assert connectors_of({}) == ""
    # the JVM maps an archive only with the class path it was made with
    assert connectors_of({"spark.jars": "a.jar", DRIVER_CLASS_PATH: "fs.jar"}) == "a.jar|fs.jar"
    assert connectors_of({DRIVER_CLASS_PATH: "fs.jar"}) == ""


def test_an_archive_is_made_for_a_local_master_only() -> None:
    from cdc_spark.class_archive import ClassSharingError, create

    with pytest.raises(ClassSharingError, match="local master"):
        create("yarn")


@pytest.mark.spark
@pytest.mark.slow
def test_the_archive_made_is_mapped_by_a_cold_cdc_apply(tmp_path: Path) -> None:
    from cdc_spark.class_archive import create
    from cdc_spark.demo import differences
    from cdc_testing.changefeed import encode, generate

    pytest.importorskip("cdc_debezium")
    made = create()
    assert made.is_file() and made.stat().st_size > 10_000_000
    assert not list(made.parent.glob("*.part"))  # no partial file
    assert list(made.parent.glob(f"{install_prefix()}*")) == [made]  # no older archive of this installation
    settings = session_settings("local[2]", {})
    assert f"-XX:SharedArchiveFile={made}" in settings[DRIVER_OPTIONS].split()

    feed = generate(seed=4, transactions=8)
    messages = tmp_path / "changes.jsonl"
    with messages.open("w", encoding="utf-8") as handle:
        write_lines(encode(feed, "debezium", {"enable-tidb-extension": True}), handle)
    target = tmp_path / "tables"
    strict = f"{settings[DRIVER_OPTIONS]} -Xshare:on"  # an archive the JVM cannot map stops it from starting
    command = [sys.executable, "-m", "cdc_spark.cli", "apply", "--protocol", "debezium",
               "--source", f"file://{messages}", "--target", str(target), "--once", "--master", "local[2]",
               "--conf", f"{DRIVER_OPTIONS}={strict}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert differences(str(target), feed) == []
