"""Partitions of a Delta version read as the Parquet files it lists (:mod:`cdc_spark.sinks.delta_partitions`): the
rows a Delta scan of the partition gives, of the version described, one listing for the count and the reads, and
the tables whose files a plain read would get wrong left to Delta. Partitions replaced from such a listing in the
sink's own transaction (:mod:`cdc_spark.sinks.delta_overwrite`): what Delta's dynamic overwrite leaves, with its
conflicts."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.merge import scd1
from cdc_spark.merge.columns import COLUMN_SEQUENCES, DELETED_AT, IMAGE_SEQUENCE, KEY, SEQUENCE, TABLE
from cdc_spark.merge.statements import literal
from cdc_spark.session_conf import session_conf
from cdc_spark.sinks.delta import DeltaFormat, path_identifier
from cdc_spark.sinks.scd1_batch import DECODE_SEQUENCE
from cdc_testing.spark_frames import scanned_frame
from cdc_testing.spark_plans import jobs_started

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
    scanned_frame(spark, [], schema).write.format("delta").partitionBy(TABLE).save(location)
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
    changes = scanned_frame(spark, [(i, n, op, (ts, 0, ts, 0)) for i, n, op, ts in rows], schema)
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
    target = scanned_frame(spark, [(1, "a")], "id int, name string")
    sink.format.create_from(sink.format.target("shop.t"), target.schema, target, {}, None)
    old = scanned_frame(
        spark,
        [(1, (5, 0, 5, 0), None, None, None)],
        f"id int, {SEQUENCE} {DECODE_SEQUENCE}, {DELETED_AT} timestamp, {IMAGE_SEQUENCE} {DECODE_SEQUENCE},"
        f" {COLUMN_SEQUENCES} map<string, {DECODE_SEQUENCE}>",
    )
    sink.format.create_from(sink.format.state("shop.t"), old.schema, old, {}, None)
    apply_rows(spark, tmp_path, "shop.t", [(1, "stale", "update", 4)])
    stored = spark.read.format("delta").load(str(tmp_path / "shop" / "t"))
    assert [tuple(row) for row in stored.collect()] == [(1, "a")]


def replacement(spark: Any) -> Any:
    """New rows of two of the key state's tables: one partition's keys changed and moved on, one's cut to two."""
    return key_state_rows(spark, TABLES[0], range(50, 70)).unionByName(key_state_rows(spark, TABLES[1], range(2)))


def whole(spark: Any, location: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.read.format("delta").load(location).collect())


@pytest.mark.parametrize("in_checksum", [True, False], ids=["checksum", "file-list"])
def test_partitions_replaced_in_a_commit_of_the_sinks_own_leave_what_delta_overwrite_leaves(
    spark: Any, tmp_path: Path, in_checksum: bool
) -> None:
    """The partitions the rows have rows of are replaced, the others kept, as by Delta's dynamic overwrite; the
    commit records the batch; with the files in the checksum no job lists them (the overwrite runs such jobs)."""
    from cdc_spark.sinks.delta_overwrite import replace_partitions

    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    with session_conf(spark, {CRC_FILES: str(in_checksum).lower()}):
        key_state(spark, ours)
        key_state(spark, theirs)
    mark = ("job-1", 7)

    def by_delta() -> None:
        with session_conf(spark, {"spark.sql.sources.partitionOverwriteMode": "dynamic"}):
            replacement(spark).write.format("delta").mode("overwrite").save(theirs)

    def by_sink() -> None:
        assert replace_partitions(spark, ours, replacement(spark), TABLE, transaction=mark, user_metadata='{"b":7}')

    delta_jobs = len(jobs_started(spark, "by-delta", by_delta))
    sink_jobs = len(jobs_started(spark, "by-sink", by_sink))
    assert whole(spark, ours) == whole(spark, theirs)
    assert len(through_delta(spark, ours, TABLES[0])) == 20 and len(through_delta(spark, ours, TABLES[1])) == 2
    assert len(through_delta(spark, ours, TABLES[2])) == 3  # not written: kept
    if in_checksum:
        assert sink_jobs < delta_jobs
    history = spark.sql(f"DESCRIBE HISTORY {path_identifier(ours)} LIMIT 1").collect()[0]
    assert history["operation"] == "WRITE" and history["userMetadata"] == '{"b":7}'
    assert history["operationParameters"]["mode"] == "Overwrite"
    info = DeltaFormat(spark, root=str(tmp_path)).describe(path_identifier(ours), "job-1")
    assert info is not None and info.last_batch == 7


@pytest.mark.parametrize("concurrent", [0, 2], ids=["same-partition", "other-partition"])
def test_a_concurrent_append_to_a_replaced_partition_fails_the_replace(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, concurrent: int
) -> None:
    """Another job appends to the key state while the replace writes (between its read of the version and its
    commit): into a partition the replace writes, the replace fails and the other job's rows stay; into another
    partition, both land."""
    from py4j.protocol import Py4JJavaError

    from cdc_spark.sinks import delta_overwrite

    location = str(tmp_path / "keys")
    key_state(spark, location)
    listing = delta_overwrite.partition_actions

    def after_another_job(*args: Any) -> Any:
        key_state_rows(spark, TABLES[concurrent], range(900, 905)).write.format("delta").mode("append").save(location)
        return listing(*args)

    monkeypatch.setattr(delta_overwrite, "partition_actions", after_another_job)
    replace = functools.partial(
        delta_overwrite.replace_partitions, spark, location, replacement(spark), TABLE, transaction=None
    )
    if concurrent == 0:
        with pytest.raises(Py4JJavaError, match="ConcurrentAppendException"):
            replace(user_metadata=None)
        assert len(through_delta(spark, location, TABLES[0])) == 55 + 5  # the other job's rows, not the replace's
        assert len(through_delta(spark, location, TABLES[1])) == 7
    else:
        assert replace(user_metadata=None)
        assert len(through_delta(spark, location, TABLES[0])) == 20
        assert len(through_delta(spark, location, TABLES[2])) == 3 + 5


def test_a_table_partitioned_otherwise_is_left_to_delta(spark: Any, tmp_path: Path) -> None:
    """Partitioned by another column, or not at all: nothing written, False (the caller overwrites with Delta)."""
    from cdc_spark.sinks.delta_overwrite import replace_partitions

    for partitioned in ([KEY], []):
        location = str(tmp_path / f"by_{len(partitioned)}")
        key_state_rows(spark, TABLES[0], range(4)).write.format("delta").partitionBy(*partitioned).save(location)
        before = whole(spark, location)
        assert not replace_partitions(spark, location, replacement(spark), TABLE, transaction=None, user_metadata=None)
        assert whole(spark, location) == before
        assert spark.sql(f"DESCRIBE HISTORY {path_identifier(location)}").count() == 1


def test_the_sinks_key_state_is_replaced_in_its_own_transaction(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's key state write goes through the sink's own replace, and the next batch reads what it wrote."""
    from cdc_spark.sinks import delta

    replaced: list[bool] = []
    original = delta.replace_partitions

    def spied(*args: Any, **kwargs: Any) -> bool:
        replaced.append(original(*args, **kwargs))
        return replaced[-1]

    monkeypatch.setattr(delta, "replace_partitions", spied)
    apply_rows(spark, tmp_path, "shop.t", [(1, "one", "insert", 1), (2, "two", "insert", 1)])
    apply_rows(spark, tmp_path, "shop.t", [(1, None, "delete", 2), (3, "three", "insert", 2)])
    assert replaced and all(replaced)
    apply_rows(spark, tmp_path, "shop.t", [(1, "late", "update", 1)])  # older than the delete the state holds
    target = spark.read.format("delta").load(str(tmp_path / "shop" / "t"))
    assert sorted(tuple(row) for row in target.collect()) == [(2, "two"), (3, "three")]
