"""The shapes job's aggregate: each group's newest and oldest message by rank (commit ts, partition, offset,
position), whichever way Spark aggregates it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.jvm_path import _rank, _shape_groups

pytestmark = pytest.mark.spark

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


def _groups(spark: Any, messages: list[tuple[str, int, int | None, int, int]]) -> dict[tuple[str, int], Any]:
    from pyspark.sql import functions as F

    rows = [("jvm", "db", "t", shape, True, "topic", p, ts, offset, n) for shape, p, ts, offset, n in messages]
    frame = spark.createDataFrame(
        rows,
        f"{A.ROUTE} string, {A.DATABASE} string, {A.TABLE} string, {A.SHAPE} string, {A.SAMPLE} boolean,"
        f" topic string, partition int, {A.TS} long, offset long, rows int",
    )
    prepared = frame.withColumn(A.RANK, A.rank(F.col("rows") - 1))
    return {(row[A.SHAPE], row["partition"]): row for row in _shape_groups(prepared)}


def _expected(messages: list[tuple[str, int, int | None, int, int]]) -> dict[tuple[str, int], tuple[Any, Any]]:
    ranks: dict[tuple[str, int], list[tuple[int, int, int, int]]] = {}
    for shape, partition, ts, offset, rows in messages:
        ranks.setdefault((shape, partition), []).append((-1 if ts is None else ts, partition, offset, rows - 1))
    return {group: (max(found), min(found)) for group, found in ranks.items()}


def test_each_group_has_its_newest_and_oldest_rank(spark: Any) -> None:
    groups = _groups(spark, MESSAGES)
    expected = _expected(MESSAGES)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == expected
    assert expected[("a", 0)][0] == (5, 0, 10, 0)  # the later offset of two at one ts, not the message of more rows


def test_random_ranks_agree_with_tuples(spark: Any) -> None:
    chosen = random.Random(7)
    messages = [
        (chosen.choice("ab"), chosen.randrange(3), chosen.choice([None, chosen.randrange(4), LONG_MAX]),
         chosen.choice([chosen.randrange(50), LONG_MAX - chosen.randrange(50)]), chosen.randrange(1, 4))
        for _ in range(300)
    ]  # fmt: skip
    unique = list({(m[1], m[3]): m for m in messages}.values())  # one message per partition and offset, as Kafka
    groups = _groups(spark, unique)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(unique)


def test_negative_offsets_are_ranked_too(spark: Any) -> None:
    """A frame of the user's own with offsets below zero (no Kafka source gives one) is aggregated by the rank
    struct itself."""
    messages = [("a", 0, 5, -3, 1), ("a", 0, 5, -10, 2), ("a", 0, 4, 8, 1)]
    groups = _groups(spark, messages)
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(messages)


def test_groups_in_ts_order_are_ranked_by_their_offsets(spark: Any) -> None:
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
    groups = _groups(spark, in_order)
    assert all("rank_offset" in row.__fields__ for row in groups.values())  # no second aggregate
    assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(in_order)


def test_one_group_out_of_ts_order_ranks_every_group_again(spark: Any) -> None:
    """A group whose last offset is not its newest ts (a message written again after a restart, say) sends the batch
    to the exact aggregate of (ts, offset); so does one whose first offset is not its oldest ts."""
    for late in [("a", 0, 6, 40, 1), ("a", 0, 6, 1, 3)]:  # last offset not the newest ts; first not the oldest
        messages = [("a", 0, 5, 10, 2), ("a", 0, 7, 20, 1), ("b", 1, 1, 5, 1), late]
        groups = _groups(spark, messages)
        assert all("rank_offset" not in row.__fields__ for row in groups.values()), late
        assert {g: (_rank(row, "rank"), _rank(row, "oldest")) for g, row in groups.items()} == _expected(messages)
