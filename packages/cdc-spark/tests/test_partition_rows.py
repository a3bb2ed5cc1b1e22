"""How many rows each partition of a table holds, read from the format's metadata (``rows_by_partition``): what a
batch counts to choose how it writes the SCD1 key state (:mod:`cdc_spark.sinks.scd1_batch`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.session_conf import session_conf
from cdc_spark.sinks.delta import DeltaFormat, path_identifier
from cdc_spark.sinks.iceberg import IcebergFormat, register_hadoop_catalog

pytestmark = pytest.mark.spark

# 5 rows of "a" in one file, then 5 more in a second; 3 of "b"; 1 of "c"
ROWS = [("a", n) for n in range(5)] + [("b", n) for n in range(3)] + [("c", 1)]


def written(spark: Any, into: Any) -> None:
    frame = spark.createDataFrame(ROWS, "t string, k int")
    into(frame, "overwrite")
    into(frame.where("t = 'a'"), "append")


@pytest.mark.parametrize("listed", [True, False], ids=["checksum", "file-list"])
def test_delta_counts_a_partitions_rows_from_its_log(spark: Any, tmp_path: Path, listed: bool) -> None:
    """Delta keeps a small table's files in the version's checksum (read on the driver); without them (a table of
    many files, or the setting off) the snapshot's file list is read by a Spark job. Both give the same counts."""
    location = str(tmp_path / "x")
    with session_conf(spark, {"spark.databricks.delta.allFilesInCrc.enabled": str(listed).lower()}):
        written(spark, lambda frame, mode: frame.write.format("delta").mode(mode).partitionBy("t").save(location))
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog
    checksum = log.forTableWithSnapshot(spark._jsparkSession, location)._2().checksumOpt()
    assert checksum.isDefined() and checksum.get().allFiles().isDefined() == listed
    counted = DeltaFormat(spark, root=str(tmp_path)).rows_by_partition(path_identifier(location), "t", ["a", "b", "z"])
    assert counted == {"a": 10, "b": 3}


def test_iceberg_counts_a_partitions_rows_from_its_manifests(spark: Any, tmp_path: Path) -> None:
    """Iceberg's scan planning reads the manifests' row counts on the driver: no Spark job."""
    catalog = register_hadoop_catalog(spark, str(tmp_path / "warehouse"), "rows")
    name = f"{catalog}.db.x"
    spark.sql(f"CREATE TABLE {name} (t string, k int) USING iceberg PARTITIONED BY (t)")
    written(spark, lambda frame, _mode: frame.writeTo(name).append())  # into the empty table: the same rows
    iceberg = IcebergFormat(spark, catalog=catalog, own=True)
    spark.sparkContext.setJobGroup("count-iceberg-rows", "rows_by_partition")
    try:
        counted = iceberg.rows_by_partition(name, "t", ["a", "b", "z"])
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert counted == {"a": 10, "b": 3}
    assert list(spark.sparkContext.statusTracker().getJobIdsForGroup("count-iceberg-rows")) == []  # the driver's
    assert iceberg.rows_by_partition(name, "k", ["1"]) is None  # not a partition column: not counted


def test_a_count_given_what_describe_read_does_not_load_the_table_again(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch counts the key state's rows through what it described at its start: on Delta that version's snapshot
    (a later commit is not seen, and the log is not listed again), on Iceberg the loaded table."""
    more = spark.createDataFrame([("b", 9)], "t string, k int")
    location = str(tmp_path / "x")
    delta = DeltaFormat(spark, root=str(tmp_path))
    written(spark, lambda frame, mode: frame.write.format("delta").mode(mode).partitionBy("t").save(location))
    info = delta.describe(path_identifier(location), None)
    more.write.format("delta").mode("append").save(location)
    assert delta.rows_by_partition(path_identifier(location), "t", ["a", "b"], info) == {"a": 10, "b": 3}
    assert delta.rows_by_partition(path_identifier(location), "t", ["a", "b"]) == {"a": 10, "b": 4}

    catalog = register_hadoop_catalog(spark, str(tmp_path / "warehouse"), "versions")
    name = f"{catalog}.db.x"
    spark.sql(f"CREATE TABLE {name} (t string, k int) USING iceberg PARTITIONED BY (t)")
    iceberg = IcebergFormat(spark, catalog=catalog, own=True)
    written(spark, lambda frame, _mode: frame.writeTo(name).append())
    described = iceberg.describe(name, None)

    def loaded_again(*_args: Any) -> None:
        raise AssertionError("the table was loaded again")

    monkeypatch.setattr(IcebergFormat, "_load", loaded_again)
    assert iceberg.rows_by_partition(name, "t", ["a", "b"], described) == {"a": 10, "b": 3}


def test_a_table_that_does_not_exist_has_no_rows(spark: Any, tmp_path: Path) -> None:
    delta = DeltaFormat(spark, root=str(tmp_path))
    assert delta.rows_by_partition(path_identifier(str(tmp_path / "none")), "t", ["a"]) == {}
