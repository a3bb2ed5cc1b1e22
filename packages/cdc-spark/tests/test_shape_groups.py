"""The shapes job's aggregate: each group's newest and oldest message by rank (commit ts, partition, offset,
position), whichever way Spark aggregates it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.jvm.shapes import _fetched, _rank, groups_and_ranges, shape_groups
from cdc_spark.decoding.task_clock import task_clock_function

# a few hundred messages: interpreted, as cdc apply's decode of a small batch runs the aggregate
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("batch_expressions")]

LONG_MAX = 2**63 - 1

# (shape, partition, commit ts or None, offset, rows): ties in ts broken by offset, a ts of the largest long, messages
# without one, offsets of every size a long has
MESSAGES = [
    ("a", 0, 5, 10, 1),
    ("a", 0, 5, 3, 4),
    ("a", 0, None, 99, 2),
    ("a", 1, LONG_MAX, 0, 3),
    ("a", 1, LONG_MAX, 7, 1),
    ("a", 1, 0, LONG_MAX, 2),
    ("b", 0, None, 1, 1),
    ("b", 0, None, 2, 5),
    ("b", 0, 1, LONG_MAX - 1, 1),
]


@pytest.fixture(params=["alone", "by-task"])
def grouping(request: pytest.FixtureRequest) -> str:
    """The aggregate alone, or by Spark task too (the task clock's ranges found with it) and its parts joined."""
    return str(request.param)


def _groups(
    spark: Any, messages: list[tuple[str, int, int | None, int, int]], grouping: str = "alone"
) -> dict[tuple[str, int], Any]:
    from pyspark.sql import functions as F

    rows = [("jvm", "db", "t", shape, True, "topic", p, ts, offset, n) for shape, p, ts, offset, n in messages]
    frame = spark.createDataFrame(
        spark.sparkContext.parallelize(rows, 4),  # in list order, four tasks: a group may be read by several
        f"{A.ROUTE} string, {A.DATABASE} string, {A.TABLE} string, {A.SHAPE} string, {A.SAMPLE} boolean,"
        f" topic string, partition int, {A.TS} long, offset long, rows int",
    )
    prepared = frame.withColumn(A.RANK, A.rank(F.col("rows") - 1))
    if grouping == "alone":
        found = shape_groups(prepared)
    else:
        function = task_clock_function(spark)
        if function is None:
            pytest.skip("needs the project's Java code")
        found, ranges = groups_and_ranges(prepared, task_clock=function)
        assert ranges is not None
        assert len(ranges) > len(found) or len(messages) < 8  # some group was read by several tasks, and joined
    return {(row[A.SHAPE], row["partition"]): row for row in found}


def _expected(messages: list[tuple[str, int, int | None, int, int]]) -> dict[tuple[str, int], tuple[Any, Any]]:
    ranks: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {}
    for shape, partition, ts, offset, rows in messages:
        ranks.setdefault((shape, partition), []).append((-1 if ts is None else ts, partition, offset, rows - 1))
    return {group: (max(found), min(found)) for group, found in ranks.items()}


def test_each_group_has_its_newest_and_oldest_rank(spark: Any, grouping: str) -> None:
    groups = _groups(spark, MESSAGES, grouping)
    expected = _expected(MESSAGES)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == expected
    assert expected[("a", 0)][0] == (5, 0, 10, 0)  # the later offset of two at one ts, not the message of more rows


def test_random_ranks_agree_with_tuples(spark: Any, grouping: str) -> None:
    chosen = random.Random(7)
    messages = [
        (chosen.choice("ab"), chosen.randrange(3), chosen.choice([None, chosen.randrange(4), LONG_MAX]),
         chosen.choice([chosen.randrange(50), LONG_MAX - chosen.randrange(50)]), chosen.randrange(1, 4))
        for _ in range(300)
    ]  # fmt: skip
    unique = list({(m[1], m[3]): m for m in messages}.values())  # one message per partition and offset, as Kafka
    groups = _groups(spark, unique, grouping)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(unique)


def test_negative_offsets_are_ranked_too(spark: Any, grouping: str) -> None:
    """A frame of the user's own with offsets below zero (no Kafka source gives one) is aggregated by the rank
    struct itself."""
    messages = [("a", 0, 5, -3, 1), ("a", 0, 5, -10, 2), ("a", 0, 4, 8, 1)]
    groups = _groups(spark, messages, grouping)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(messages)


def test_groups_in_ts_order_are_ranked_by_their_offsets(spark: Any, grouping: str) -> None:
    """Where each group's messages come in ts order (ties and messages without a ts among them, as a TiCDC partition
    holds them), its newest and oldest message are its last and first offsets: the one aggregate of longs ranks them,
    as the tuples do."""
    chosen = random.Random(11)
    messages = []
    for partition in range(3):
        ts: int | None = None
        for offset in sorted(chosen.sample(range(10_000), 120)):
            if chosen.random() < 0.7:
                ts = chosen.randrange(1, 50) + (ts or 0)
            untimed = chosen.random() < 0.1
            messages.append((chosen.choice("ab"), partition, None if untimed else ts, offset, chosen.randrange(1, 4)))
    in_order = [m for m in messages if m[2] is not None or m[3] < 100]  # untimed ones only before the timed ones
    groups = _groups(spark, in_order, grouping)
    assert all("rank_offset" in row.__fields__ for row in groups.values())  # no second aggregate
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(in_order)


def test_one_group_out_of_ts_order_ranks_every_group_again(spark: Any, grouping: str) -> None:
    """A group whose last offset is not its newest ts (a message written again after a restart, say) sends the batch
    to the exact aggregate of (ts, offset); so does one whose first offset is not its oldest ts."""
    for late in [("a", 0, 6, 40, 1), ("a", 0, 6, 1, 3)]:  # last offset not the newest ts; first not the oldest
        messages = [("a", 0, 5, 10, 2), ("a", 0, 7, 20, 1), ("b", 1, 1, 5, 1), late]
        groups = _groups(spark, messages, grouping)
        assert all("rank_offset" not in row.__fields__ for row in groups.values()), late
        assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(messages)


def test_a_cache_of_typed_changes_counts_messages_and_rows_apart(spark: Any) -> None:
    """Where the cache holds a row per typed change (a speculation), the aggregate counts a message once (its row at
    position 0) and its changes by table and goodness; its rank is the message's, whichever row is read."""
    from pyspark.sql import functions as F

    # (partition, ts, offset, changes, table index, bad changes)
    messages = [(0, 5, 1, 3, 0, 1), (0, None, 2, 2, 0, 0), (0, 7, 3, 1, 1, 0), (1, 6, 1, 4, 0, 4)]
    rows = [
        ("jvm", "db", f"t{tidx}", "s", True, "topic", p, ts, offset, changes - 1, position, tidx, position < bad)
        for p, ts, offset, changes, tidx, bad in messages
        for position in range(changes)
    ]
    frame = spark.createDataFrame(
        rows,
        f"{A.ROUTE} string, {A.DATABASE} string, {A.TABLE} string, {A.SHAPE} string, {A.SAMPLE} boolean,"
        f" topic string, partition int, {A.TS} long, offset long, last int, {A.POSITION} int, __tidx int,"
        " __change_bad boolean",
    )
    groups = shape_groups(frame.withColumn(A.RANK, A.rank(F.col("last"))), changes=True)
    found = {(r["__tidx"], r["partition"], r["__change_bad"]): r for r in groups}
    assert {key: (r["messages"], r["rows"], r["untimed"]) for key, r in found.items()} == {
        (0, 0, True): (1, 1, 0),  # the bad first change of the message at offset 1
        (0, 0, False): (1, 4, 1),  # its two good ones, and the two of the untimed message (counted once)
        (1, 0, False): (1, 1, 0),
        (0, 1, True): (1, 4, 0),  # every change bad
    }
    ranks: dict[tuple[int, int, bool], list[tuple[int, int, int, int]]] = {}
    for row in rows:
        ts, offset, last, tidx, bad = row[7], row[8], row[9], row[11], row[12]
        ranks.setdefault((tidx, row[6], bad), []).append((-1 if ts is None else ts, row[6], offset, last))
    assert {key: (_rank(r, "rank"), _rank(r, "oldest")) for key, r in found.items()} == {
        key: (max(ranked), min(ranked)) for key, ranked in ranks.items()
    }


def test_samples_are_fetched_by_topic_partition_and_offset(spark: Any) -> None:
    """The same offset in other partitions and topics (and a frame's own null partition) is not fetched; two frames
    are read in one call; a frame's condition fetches every message where it holds, listed apart (a small residue)."""
    from pyspark.sql import functions as F

    stamp = F.lit(None).cast("timestamp")
    rows = [(b"k", f"{topic}{p}@{offset}".encode(), topic, p, offset) for topic in ("a", "b") for p in (0, 1, None)
            for offset in (0, 7)]  # fmt: skip
    schema = "key binary, value binary, topic string, partition int, offset long"
    first = spark.createDataFrame(rows, schema).withColumn("timestamp", stamp)
    second = spark.createDataFrame([(None, b"other", "c", 0, 7)], schema).withColumn("timestamp", stamp)
    fetched, whole = _fetched(
        (first, {("a", 1, 7), ("b", None, 0)}, None), (second, {("c", 0, 7)}, None), (first, set(), None)
    )
    assert {key: bytes(row["value"]) for key, row in fetched.items()} == {
        ("a", 1, 7): b"a1@7",
        ("b", None, 0): b"bNone@0",
        ("c", 0, 7): b"other",
    }
    assert whole == []
    assert _fetched((first, set(), None)) == ({}, [])
    fetched, whole = _fetched((first, {("a", 1, 7)}, F.col("partition") == 0), (second, {("c", 0, 7)}, None))
    assert sorted(bytes(row["value"]) for row in whole) == [b"a0@0", b"a0@7", b"b0@0", b"b0@7"]
    assert sorted(bytes(row["value"]) for row in fetched.values()) == [
        b"a0@0",
        b"a0@7",
        b"a1@7",
        b"b0@0",
        b"b0@7",
        b"other",
    ]


def test_the_aggregate_runs_as_one_spark_job_and_leaves_the_session_as_it_was(spark: Any) -> None:
    """Planned adaptively, the aggregate's map side would be a job of its own and its second stage another, planned
    after it; it runs as one, and the session's own settings are back afterwards."""
    group = "shape-groups-one-job"
    before = spark.conf.get("spark.sql.adaptive.enabled", None)
    context = spark.sparkContext
    context.setJobGroup(group, "the shapes' aggregate")
    in_ts_order = [("a", 0, 5, 3, 1), ("a", 0, 6, 10, 2), ("b", 1, 1, 4, 1)]  # one aggregate finds every rank
    try:
        groups = _groups(spark, in_ts_order)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert len(context.statusTracker().getJobIdsForGroup(group)) == 1
    assert sorted(groups) == [("a", 0), ("b", 1)]
    assert spark.conf.get("spark.sql.adaptive.enabled", None) == before
