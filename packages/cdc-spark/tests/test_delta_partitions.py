"""Partitions of a Delta version read as the Parquet files it lists (:mod:`cdc_spark.sinks.delta_partitions`): the
rows a Delta scan of the partition gives, of the version described, one listing for the count and the reads, and
the tables whose files a plain read would get wrong left to Delta."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.merge import scd1
from cdc_spark.merge.columns import COLUMN_SEQUENCES, DELETED_AT, IMAGE_SEQUENCE, KEY, SEQUENCE, TABLE
from cdc_spark.merge.statements import literal
from cdc_spark.session_conf import session_conf
from cdc_spark.sinks.delta import DeltaFormat, path_identifier
from cdc_spark.sinks.scd1_batch import DECODE_SEQUENCE

pytestmark = pytest.mark.spark

# partition values as table names can be: a dot, a space, and characters a path escapes or a glob would expand
TABLES = ["db.orders", "db.order items", "db.a%b=c{1}[*]?"]
CRC_FILES = "spark.databricks.delta.allFilesInCrc.enabled"


def key_state_rows(spark: Any, table: str, keys: range) -> Any:
    """Rows of the SCD1 key state's schema: every column type it holds (struct sequences, a timestamp, a map)."""
    seq = "named_struct('commit_ts', id * 10, 'partition', 0, 'offset', id, 'position', 0)"
    return spark.range(keys.start, keys.stop).selectExpr(
        f"{literal(table)} AS {TABLE}",
        f"CAST(id AS STRING) AS {KEY}",
        f"{seq} AS {SEQUENCE}",
        f"CASE WHEN id % 3 = 0 THEN TIMESTAMP '2026-11-30 10:00:00.123456' END AS {DELETED_AT}",
        f"CASE WHEN id % 2 = 0 THEN {seq} END AS {IMAGE_SEQUENCE}",
        f"CASE WHEN id % 4 = 0 THEN map('name', {seq}) END AS {COLUMN_SEQUENCES}",
    )


def key_state(spark: Any, location: str, **properties: str) -> None:
    """A key state of three tables' keys, written in two commits (one partition has files of both)."""
    from pyspark.sql.types import StructType

    schema: StructType = scd1.state_schema(StructType.fromDDL(DECODE_SEQUENCE))
    spark.createDataFrame([], schema).write.format("delta").partitionBy(TABLE).save(location)
    for key, value in properties.items():
        spark.sql(f"ALTER TABLE {path_identifier(location)} SET TBLPROPERTIES ('{key}' = '{value}')")
    first = key_state_rows(spark, TABLES[0], range(40)).unionByName(key_state_rows(spark, TABLES[1], range(7)))
    first.write.format("delta").mode("append").save(location)
    key_state_rows(spark, TABLES[0], range(40, 55)).write.format("delta").mode("append").save(location)
    key_state_rows(spark, TABLES[2], range(3)).write.format("delta").mode("append").save(location)


def apply_rows(spark: Any, root: Path, table: str, rows: list[tuple[int, str | None, str, int]]) -> None:
    """One batch of (id, name, operation, commit ts) changes of ``table`` applied to Delta tables under ``root``."""
    from cdc_spark.apply import apply_changes

    schema = f"id int, name string, _cdc_op string, _cdc_sequence {DECODE_SEQUENCE}"
    changes = spark.createDataFrame([(i, n, op, (ts, 0, ts, 0)) for i, n, op, ts in rows], schema)
    apply_changes(changes, str(root), ["id"], table=table, table_format="delta")


def through_delta(spark: Any, location: str, table: str) -> list[tuple[Any, ...]]:
    frame = spark.read.format("delta").load(location).where(f"{TABLE} = {literal(table)}")
    return sorted(tuple(row) for row in frame.collect())


@pytest.mark.parametrize("in_checksum", [True, False], ids=["checksum", "file-list"])
def test_each_partition_read_from_its_files_gives_what_delta_gives(
    spark: Any, tmp_path: Path, in_checksum: bool
) -> None:
    location = str(tmp_path / "keys")
    with session_conf(spark, {CRC_FILES: str(in_checksum).lower()}):
        key_state(spark, location)
    delta = DeltaFormat(spark, root=str(tmp_path))
    name = path_identifier(location)
    info = delta.describe(name, None)
    assert info is not None
    checksum = info.loaded.checksumOpt()
    assert checksum.isDefined() and checksum.get().allFiles().isDefined() == in_checksum
    wanted = [*TABLES, "db.never_written"]
    reader = delta.partition_reader(name, TABLE, wanted, info)
    assert reader is not None
    for table in TABLES:
        read = reader(spark, table)
        delta_schema = spark.read.format("delta").load(location).schema
        assert [(f.name, f.dataType) for f in read.schema.fields] == [(f.name, f.dataType) for f in delta_schema]
        expected = through_delta(spark, location, table)
        assert sorted(tuple(row) for row in read.collect()) == expected
        assert expected  # every partition has rows: the comparison is not of two empty lists
    assert {row[0] for row in reader(spark, TABLES[0]).collect()} == {TABLES[0]}
    assert reader(spark, TABLES[0]).count() == 55  # both commits' files of the partition
    assert reader(spark, "db.never_written").collect() == []
    assert delta.rows_by_partition(name, TABLE, wanted, info) == {TABLES[0]: 55, TABLES[1]: 7, TABLES[2]: 3}


def test_the_version_described_is_read_and_listed_once(spark: Any, tmp_path: Path) -> None:
    """A batch counts the key state's rows, then reads each table's keys, of the version it described: one listing
    (a Spark job where the checksum does not list the files), and a commit after it is not seen."""
    location = str(tmp_path / "keys")
    with session_conf(spark, {CRC_FILES: "false"}):
        key_state(spark, location)
    delta = DeltaFormat(spark, root=str(tmp_path))
    name = path_identifier(location)
    info = delta.describe(name, None)
    assert info is not None
    key_state_rows(spark, TABLES[1], range(100, 110)).write.format("delta").mode("append").save(location)
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("list-key-state", "partition listing")
    try:
        counted = delta.rows_by_partition(name, TABLE, TABLES, info)
        listed = list(tracker.getJobIdsForGroup("list-key-state"))
        reader = delta.partition_reader(name, TABLE, TABLES, info)
        assert list(tracker.getJobIdsForGroup("list-key-state")) == listed  # the count's listing, not another
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert listed  # the file list read by Spark (the snapshot's state, then the partitions' files)
    assert counted is not None and counted[TABLES[1]] == 7
    assert reader is not None and reader(spark, TABLES[1]).count() == 7
    assert len(through_delta(spark, location, TABLES[1])) == 17  # Delta's latest version has the later keys


def test_a_version_with_rows_deleted_in_place_is_read_through_delta(spark: Any, tmp_path: Path) -> None:
    """A deletion vector marks rows of a file deleted without rewriting it: read as plain Parquet they would come
    back, so no reader is given; nor for a column the table is not partitioned by."""
    location = str(tmp_path / "keys")
    key_state(spark, location, **{"delta.enableDeletionVectors": "true"})
    spark.sql(f"DELETE FROM {path_identifier(location)} WHERE {KEY} = '3'")
    delta = DeltaFormat(spark, root=str(tmp_path))
    name = path_identifier(location)
    info = delta.describe(name, None)
    assert info is not None
    assert delta.partition_reader(name, TABLE, TABLES, info) is None

    other = str(tmp_path / "by_key")
    key_state_rows(spark, TABLES[0], range(4)).write.format("delta").partitionBy(KEY).save(other)
    described = delta.describe(path_identifier(other), None)
    assert described is not None
    assert delta.partition_reader(path_identifier(other), TABLE, [TABLES[0]], described) is None


def test_a_batch_reads_its_tables_keys_from_the_files_and_applies_them(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sink's second batch reads the table's stored keys with the reader, and they decide the writes: a delete
    of a stored key removes its row (a key not read as stored would leave it), an update changes only its row."""
    from cdc_spark.sinks import delta

    read: list[str] = []
    original = delta.read_partition

    def spied(listing: Any, session: Any, value: str) -> Any:
        read.append(value)
        return original(listing, session, value)

    monkeypatch.setattr(delta, "read_partition", spied)
    apply_rows(spark, tmp_path, "shop.t", [(1, "one", "insert", 1), (2, "two", "insert", 1), (3, "three", "insert", 1)])
    assert read == []  # the first batch creates the key state: nothing stored to read
    apply_rows(spark, tmp_path, "shop.t", [(1, None, "delete", 2), (2, "deux", "update", 2), (4, "four", "insert", 2)])
    assert read == ["shop.t"]
    target = spark.read.format("delta").load(str(tmp_path / "shop" / "t"))
    assert sorted(tuple(row) for row in target.collect()) == [(2, "deux"), (3, "three"), (4, "four")]


def test_a_batch_that_moves_an_earlier_versions_state_reads_the_keys_it_moved(spark: Any, tmp_path: Path) -> None:
    """The key state exists (another table's) when a table's state table from an earlier version is moved into it
    by the batch: the table's keys are read from the version the move wrote, so a late change older than a moved
    key's sequence is not applied."""
    from cdc_spark.sinks import load_sink

    apply_rows(spark, tmp_path, "shop.other", [(1, "x", "insert", 1)])
    # what an earlier version left for shop.t: its target, and its own state table with key 1 last changed at 5
    sink: Any = load_sink("delta", spark, str(tmp_path))
    target = spark.createDataFrame([(1, "a")], "id int, name string")
    sink.format.create_from(sink.format.target("shop.t"), target.schema, target, {}, None)
    old = spark.createDataFrame(
        [(1, (5, 0, 5, 0), None, None, None)],
        f"id int, {SEQUENCE} {DECODE_SEQUENCE}, {DELETED_AT} timestamp, {IMAGE_SEQUENCE} {DECODE_SEQUENCE},"
        f" {COLUMN_SEQUENCES} map<string, {DECODE_SEQUENCE}>",
    )
    sink.format.create_from(sink.format.state("shop.t"), old.schema, old, {}, None)
    apply_rows(spark, tmp_path, "shop.t", [(1, "stale", "update", 4)])
    stored = spark.read.format("delta").load(str(tmp_path / "shop" / "t"))
    assert [tuple(row) for row in stored.collect()] == [(1, "a")]
