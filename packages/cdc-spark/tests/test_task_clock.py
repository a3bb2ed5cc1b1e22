"""The running clock read by each task as it reads (``cdc_spark.decoding.task_clock``), against the newest ts
before each message of its topic-partition worked out here in Python, and its refusal of input out of offset order
or of commit order."""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.task_clock import CLOCK, seeded, task_seeds

TOPICS = ("items", "orders")


def _messages(seed: int, back: bool = False) -> list[tuple[str, int, int, int | None]]:
    """(topic, partition, offset, ts): two topics of two partitions, gaps in the offsets, a third without a ts, and
    the ts of each partition rising, some equal (a partition is in commit order); with ``back``, an odd step back."""
    chance = random.Random(seed)
    rows = []
    for topic in TOPICS:
        for partition in (0, 1):
            offset, ts = chance.randrange(5), 1000
            for _ in range(40):
                offset += chance.choice((1, 1, 2, 7))
                ts += chance.choice((3, 5, 0, -2) if back else (3, 5, 0))
                rows.append((topic, partition, offset, None if chance.random() < 0.34 else ts))
    return rows


def _expected(rows: list[tuple[str, int, int, int | None]]) -> dict[tuple[str, int, int], int | None]:
    """Per message without a ts, the newest ts of the messages before it in its topic-partition."""
    newest: dict[tuple[str, int], int] = {}
    clocks: dict[tuple[str, int, int], int | None] = {}
    for topic, partition, offset, ts in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        if ts is None:
            clocks[(topic, partition, offset)] = newest.get((topic, partition))
        else:
            newest[(topic, partition)] = max(ts, newest.get((topic, partition), ts))
    return clocks


def _frame(spark: Any, rows: list[tuple[str, int, int, int | None]]) -> Any:
    return spark.createDataFrame(rows, f"topic string, partition int, offset long, {A.TS} long")


def _clocks(frame: Any) -> dict[tuple[str, int, int], int | None]:
    seeds = task_seeds(frame, TOPICS)
    assert seeds is not None
    found = seeds.clocked(frame).where(f"{A.TS} is null").collect()
    return {(r["topic"], r["partition"], r["offset"]): r[CLOCK] for r in found}


@pytest.mark.parametrize("tasks", [1, 3, 5])
def test_each_task_reads_the_clock_of_the_messages_before_its_own(spark: Any, tasks: int) -> None:
    """The messages in offset order, as Kafka's source reads them, over ``tasks`` tasks: with more than one, a
    topic-partition's offsets are split into ranges read by different tasks, each seeded with the ranges below."""
    rows = _messages(seed=tasks)
    frame = _frame(spark, rows).repartitionByRange(tasks, "topic", "partition", "offset")
    frame = frame.sortWithinPartitions("topic", "partition", "offset").cache()
    try:
        seeds = task_seeds(frame, TOPICS)
        assert seeds is not None
        if tasks > 1:
            assert seeds.seeds  # some range starts after another task's
        assert _clocks(frame) == _expected(rows)
    finally:
        frame.unpersist()


def test_a_message_of_several_rows_takes_the_clock_before_it_on_each(spark: Any) -> None:
    """A message's changes repeat its offset: each row has the clock before the message, not its own first row's."""
    rows = [("items", 0, 1, 10), ("items", 0, 2, 20), ("items", 0, 2, None), ("items", 0, 3, None)]
    frame = _frame(spark, rows).coalesce(1).cache()
    try:
        assert _clocks(frame) == {("items", 0, 2): 10, ("items", 0, 3): 20}
    finally:
        frame.unpersist()


@pytest.mark.parametrize("disorder", ["backwards", "interleaved", "commit-ts-back"])
def test_messages_out_of_offset_order_have_no_task_clock(spark: Any, disorder: str) -> None:
    """Offsets going back within a task, two tasks each in order but reading offsets of one topic-partition in
    between each other's, or offsets in order with commit ts going back: no seeds (the decode then sorts with a
    window)."""
    from pyspark.sql import functions as F

    frame = _frame(spark, _messages(seed=7, back=disorder == "commit-ts-back"))
    if disorder == "commit-ts-back":
        frame = frame.repartitionByRange(2, "topic", "partition", "offset").sortWithinPartitions("offset")
    elif disorder == "backwards":
        frame = frame.repartitionByRange(2, "topic", "partition", "offset").sortWithinPartitions(F.desc("offset"))
    else:
        frame = frame.repartition(2).sortWithinPartitions("topic", "partition", "offset")  # round robin
    frame = frame.cache()
    try:
        assert task_seeds(frame, TOPICS) is None
    finally:
        frame.unpersist()


def test_a_commit_ts_going_back_within_a_task_leaves_no_task_clock(spark: Any) -> None:
    """A partition whose commit ts go back (TiCDC sent its tail again) is not in commit order: a change without a ts
    there is ordered no later than the next ts after it, which the running maximum does not know. So no seeds."""
    rows = [("items", 0, 1, 10), ("items", 0, 2, 50), ("items", 0, 3, None), ("items", 0, 4, 20)]
    frame = _frame(spark, rows).coalesce(1).cache()
    try:
        assert task_seeds(frame, TOPICS) is None
        assert task_seeds(frame.where("offset < 4"), TOPICS) is not None  # the same, without the step back
    finally:
        frame.unpersist()


def test_ranges_that_go_back_from_the_ones_below_or_from_the_last_batch_have_no_seeds() -> None:
    """Each range in commit order, but a range's oldest ts older than the newest of the ranges below it, or than
    where its partition ended the last batch (``partition_ts``): no seeds, the decode sorts."""
    # task, topic, partition, low and high offset, newest ts, rows that went back, oldest ts
    low = (0, "items", 0, 0, 9, 500, 0, 100)
    in_order = (1, "items", 0, 10, 19, 900, 0, 500)
    back = (1, "items", 0, 10, 19, 900, 0, 499)
    found = seeded("f", TOPICS, [low, in_order])
    assert found is not None and list(found.seeds.values()) == [500]
    assert seeded("f", TOPICS, [low, back]) is None
    assert seeded("f", TOPICS, [low, in_order], {("items", 0): 100}) is not None
    assert seeded("f", TOPICS, [low, in_order], {("items", 0): 101}) is None
    assert seeded("f", TOPICS, [low, in_order], {("items", 1): 900}) is not None  # another partition's clock


def test_the_java_readers_switched_off_leave_no_task_clock(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from cdc_spark.decoding.java_text import SWITCH_ENV

    monkeypatch.setenv(SWITCH_ENV, "off")
    assert task_seeds(_frame(spark, _messages(seed=1)).coalesce(1), TOPICS) is None


@pytest.mark.kafka
@pytest.mark.parametrize("min_partitions", [None, 24], ids=["a-task-per-partition", "partitions-split"])
def test_sparks_kafka_source_reads_in_offset_order_so_avro_tombstones_take_the_task_clock(
    spark: Any, kafka_bootstrap: str, schema_registry: Any, min_partitions: int | None
) -> None:
    """TiCDC Avro with its default tombstone deletes (no commit ts), each key's changes in one of three partitions of a
    real broker, read back by Spark's own Kafka source: each partition in one task, or split over several by
    ``minPartitions``. The running clock is read by the tasks, no window, and the decode equals the codec's."""
    import zlib

    from cdc_core.registry import installed_codecs
    from cdc_spark.decoding import Decoder, decode
    from cdc_testing import kafka
    from cdc_testing.changefeed import encode, generate

    if "avro" not in installed_codecs():
        pytest.skip("needs the avro codec")
    options = {"schema-registry": schema_registry.url}
    messages = encode(generate(seed=13, transactions=60), "avro", {**options, "enable-tidb-extension": True})
    placed = [attrs.evolve(m, partition=zlib.crc32(m.key or b"") % 3) for m in messages if m.value or m.key]
    topic = kafka.unique_topic("clock")
    kafka.create_topic(kafka_bootstrap, topic, partitions=3)
    kafka.produce(kafka_bootstrap, topic, placed)
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
    )
    if min_partitions is not None:
        reader = reader.option("minPartitions", str(min_partitions))
    frame = reader.load().cache()
    decoded: list[Any] = []
    try:
        assert frame.count() == len(placed)
        if min_partitions is not None:
            assert frame.rdd.getNumPartitions() > 3  # some partition's offsets are read by two tasks
        expected = decode(frame, "avro", options, plan="python")
        decoder = Decoder()
        actual = decode(frame, "avro", options, plan="jvm", decoder=decoder)
        decoded += [expected, actual]
        assert set(decoder.jvm.running_clocks) == {"task"}, decoder.jvm.running_clocks
        assert actual.paths["jvm"] > 0
        assert actual.tables() == expected.tables()
        tombstones = 0
        for name in expected.tables():
            want, got = _changes(expected.table(*name)), _changes(actual.table(*name))
            assert got == want, name
            tombstones += sum(1 for r in got if r["_cdc_op"] == "delete" and r["_cdc_commit_ts"] is None)
        assert tombstones > 0
        assert actual.partition_commit_ts() == expected.partition_commit_ts()
        assert actual.dead_letters().count() == expected.dead_letters().count() == 0
    finally:
        for result in decoded:
            result.release()
        frame.unpersist()


def _changes(frame: Any) -> list[dict[str, Any]]:
    rows = [r.asDict(recursive=True) for r in frame.collect()]
    return sorted(rows, key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"]))
