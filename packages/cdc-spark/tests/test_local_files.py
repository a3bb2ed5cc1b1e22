"""A local session's ``file:`` paths go through the project's local file system (cdc/spark/fs), which starts no
process per file and answers what Hadoop's own does."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.runtime.java_names import java_class, static_method
from cdc_spark.runtime.local_files import CLASSES, FILE_SYSTEM
from cdc_spark.runtime.masters import runs_in_driver

pytestmark = pytest.mark.spark

_HADOOP: Any = "org.apache.hadoop"


def _local_master(spark: Any) -> bool:
    return runs_in_driver(str(spark.sparkContext.master))


def _uri(spark: Any, text: str) -> Any:
    return java_class(spark._jvm, "java.net.URI")(text)


def _raw(spark: Any, name: str) -> Any:
    """A raw local file system of class ``name``, set up as Hadoop sets one up."""
    made = java_class(spark._jvm, name)()
    made.initialize(_uri(spark, "file:///"), spark.sparkContext._jsc.hadoopConfiguration())
    return made


def _path(spark: Any, text: str) -> Any:
    return java_class(spark._jvm, f"{_HADOOP}.fs.Path")(text)


def _status(found: Any) -> tuple[Any, ...]:
    return (found.isFile(), found.isDirectory(), found.isSymlink(), found.getLen(), str(found.getPath()))


def _link_status(fs: Any, path: Any) -> tuple[Any, ...] | str:
    from py4j.protocol import Py4JJavaError

    try:
        found = fs.getFileLinkStatus(path)
    except Py4JJavaError as exc:
        return str(exc.java_exception.getClass().getName())
    link = str(found.getSymlink()) if found.isSymlink() else None
    return (*_status(found), link)


def test_a_local_session_maps_file_paths_to_the_projects_file_systems(spark: Any) -> None:
    if not _local_master(spark):
        pytest.skip("only a local master's session is given the classes")
    jvm, conf = spark._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    assert spark.sparkContext.getConf().get(FILE_SYSTEM) == CLASSES[FILE_SYSTEM]
    found = static_method(jvm, f"{_HADOOP}.fs.FileSystem", "get")(_uri(spark, "file:///"), conf)
    assert found.getRawFileSystem().getClass().getName() == "cdc.spark.fs.NoShellRawLocalFileSystem"
    context = static_method(jvm, f"{_HADOOP}.fs.AbstractFileSystem", "get")(_uri(spark, "file:///"), conf)
    assert context.getClass().getName() == "cdc.spark.fs.NoShellLocalFs"


def test_delta_commits_and_parquet_writes_start_no_process(spark: Any, tmp_path: Path) -> None:
    """A JFR recording of the JVM's process starts: Hadoop's own local file system runs ``chmod`` for each file it
    creates and ``readlink`` twice for each rename of a Delta commit; through the session's there are none. The
    recording must see the one ``readlink`` Hadoop is asked to run directly, or it proves nothing."""
    if not _local_master(spark):
        pytest.skip("only a local master's session is given the classes")
    jvm = spark._jvm
    recording = java_class(jvm, "jdk.jfr.Recording")()
    recording.enable("jdk.ProcessStart")
    recording.start()
    try:
        rows = spark.range(20).selectExpr("id", "cast(id as string) as name")
        table = str(tmp_path / "table")
        rows.write.format("delta").save(table)
        rows.write.format("delta").mode("append").save(table)
        rows.write.parquet(str(tmp_path / "plain"))
        static_method(jvm, f"{_HADOOP}.fs.FileUtil", "readLink")(java_class(jvm, "java.io.File")(table))
    finally:
        recording.stop()
    dump = java_class(jvm, "java.io.File")(str(tmp_path / "processes.jfr")).toPath()
    recording.dump(dump)
    recording.close()
    events = static_method(jvm, "jdk.jfr.consumer.RecordingFile", "readAllEvents")(dump)
    commands = [str(event.getString("command")) for event in events]
    assert spark.read.format("delta").load(table).count() == 40
    files = [command for command in commands if command.split(" ")[0] in ("chmod", "readlink")]
    assert files == [f"readlink {table}"], commands


def test_permissions_set_are_the_ones_hadoop_sets(spark: Any, tmp_path: Path) -> None:
    ours = _raw(spark, "cdc.spark.fs.NoShellRawLocalFileSystem")
    hadoops = _raw(spark, f"{_HADOOP}.fs.RawLocalFileSystem")
    permission = java_class(spark._jvm, f"{_HADOOP}.fs.permission.FsPermission")
    for mode in ("640", "600", "751", "444", "1777"):
        modes = []
        for name, fs in (("ours", ours), ("hadoops", hadoops)):
            target = tmp_path / f"{name}-{mode}"
            target.mkdir() if mode == "1777" else target.write_text("x")
            os.chmod(target, 0o777 if mode == "444" else 0o400)
            fs.setPermission(_path(spark, str(target)), permission(mode))
            modes.append(stat.S_IMODE(target.stat().st_mode))
        assert modes[0] == modes[1] == int(mode, 8), (mode, modes)
    created = []
    for name, fs in (("ours", ours), ("hadoops", hadoops)):  # create() sets the umask's permission
        fs.create(_path(spark, f"file:{tmp_path}/created-{name}")).close()
        created.append(stat.S_IMODE((tmp_path / f"created-{name}").stat().st_mode))
    assert created[0] == created[1], created


def test_link_statuses_are_the_ones_hadoop_answers(spark: Any, tmp_path: Path) -> None:
    ours = _raw(spark, "cdc.spark.fs.NoShellRawLocalFileSystem")
    hadoops = _raw(spark, f"{_HADOOP}.fs.RawLocalFileSystem")
    (tmp_path / "file").write_text("twelve bytes")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    paths = [f"file:{tmp_path}/{name}" for name in ("file", "dir", "link", "missing")]
    paths += [f"{tmp_path}/{name}" for name in ("file", "link", "dangling", "missing")]
    for text in paths:
        answers = [_link_status(fs, _path(spark, text)) for fs in (ours, hadoops)]
        assert answers[0] == answers[1], (text, answers)
    assert _link_status(ours, _path(spark, f"{tmp_path}/link"))[2] is True  # a link by a plain path is one
    assert _link_status(ours, _path(spark, f"file:{tmp_path}/missing")) == "java.io.FileNotFoundException"
