"""The decode's caches are computed once, carry no lineage into the plans that read them, and are freed by release.

A frame stamped with ``current_timestamp()`` (taken anew by every query) tells a kept frame, the same stamp at every
read, from one computed again. The RDD
ids the Spark context stores tell what a release freed: other tests' caches in the shared session are left out by
comparing the ids before and after.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_spark.batch_cache import checkpoint_by_key, persist_batch, release
from cdc_spark.decoding import Decoder
from cdc_spark.runtime.java_code import install
from cdc_spark.session_conf import session_conf
from cdc_spark.source.columns import KAFKA_COLUMNS


def _stored_rdds(spark: Any) -> set[int]:
    return {info.id() for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()}


def _canal(number: int, table: str) -> bytes:
    document = {
        "id": number, "database": "shop", "table": table, "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "v": "varchar(20)"}, "sqlType": {"id": 4, "v": 12},
        "data": [{"id": str(number), "v": f"value {number}"}], "_tidb": {"commitTs": 100 + number},
    }  # fmt: skip
    return json.dumps(document).encode()


def test_a_kept_frame_is_computed_once_and_read_without_its_plan(spark: Any) -> None:
    source = spark.range(50).selectExpr("id", "unix_micros(current_timestamp()) AS stamp")
    kept = persist_batch(source)
    first = sorted(tuple(row) for row in kept.collect())
    again = sorted(tuple(row) for row in kept.where("id >= 0").collect())
    assert first == again  # the stamp is not taken again
    assert sorted(tuple(row) for row in source.where("id >= 0").collect()) != first  # as it is by a new query
    derived = kept.where("id > 10")._jdf.queryExecution().executedPlan().toString()
    assert "Range" not in derived  # the plan starts from the kept rows
    release(kept)


def test_release_frees_a_kept_frame_and_a_persisted_one(spark: Any) -> None:
    before = _stored_rdds(spark)
    kept = persist_batch(spark.range(20).selectExpr("id * 2 AS doubled"))
    assert kept.count() == 20
    assert _stored_rdds(spark) - before, "the kept rows are stored"
    persisted = spark.range(5).persist()
    assert persisted.count() == 5
    release(kept)
    release(persisted)
    assert _stored_rdds(spark) - before == set()
    assert not persisted.is_cached


def test_a_decoded_batch_releases_every_cache_it_made(spark: Any) -> None:
    rows = [
        (None, _canal(number, table), "shop", 0, index, None, 0, None)
        for index, (number, table) in enumerate((n, t) for n in range(1, 6) for t in ("orders", "users"))
    ]
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS)
    before = _stored_rdds(spark)
    decoded = Decoder().decode(frame, "canal-json", {})
    assert decoded.paths == {"jvm": 10, "codec": 0}
    values = {table: sorted(r["v"] for r in decoded.table("shop", table).collect()) for table in ("orders", "users")}
    assert values == {table: [f"value {n}" for n in range(1, 6)] for table in ("orders", "users")}
    assert _stored_rdds(spark) - before, "the decode keeps its rows for the batch"
    decoded.release()
    assert _stored_rdds(spark) - before == set()


def _joined_by_key(spark: Any, keys: str) -> Any:
    """A full outer join of two sides shuffled by the key into 4 partitions: its rows are placed (and sorted) by the
    key, which Spark cannot say of such a join's output."""
    left = spark.range(0, 600, 1, 3).selectExpr(f"{keys} AS k", "id AS v").repartition(4, "k")
    right = spark.range(300, 900, 1, 2).selectExpr(f"{keys} AS k2", "id * 10 AS w").repartition(4, "k2")
    return left.join(right, left["k"] == right["k2"], "full_outer").selectExpr("coalesce(k, k2) AS k", "v", "w")


def _join_plan(spark: Any, kept: Any) -> tuple[list[tuple[Any, ...]], str]:
    """``kept`` joined by the key with another frame: the rows and the executed plan's operators."""
    other = spark.range(0, 900, 1, 3).selectExpr("id AS k", "id * 100 AS z")
    joined = other.join(kept, "k", "full_outer")
    rows = sorted(tuple(row) for row in joined.collect())
    plan = joined._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.executedPlan()  # the final plan alone
    return rows, str(plan.toString())


def _exchanges(plan: str) -> list[str]:
    return [line for line in plan.splitlines() if "Exchange hashpartitioning" in line]


def _sorts(plan: str) -> list[str]:
    return [line for line in plan.splitlines() if " Sort [" in line]


@pytest.fixture
def joins_by_sort(spark: Any) -> Any:
    if not install(spark):
        pytest.skip("the project's Java code is not available here")
    with session_conf(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1"}):  # joined as large frames are
        yield spark


def test_a_frame_placed_by_its_key_is_kept_saying_so(joins_by_sort: Any) -> None:
    spark = joins_by_sort
    frame = _joined_by_key(spark, "id")
    expected, unsaid = _join_plan(spark, frame.localCheckpoint())
    assert len(_exchanges(unsaid)) == 2 and len(_sorts(unsaid)) == 2  # as a plain checkpoint is joined
    kept = checkpoint_by_key(frame, ["k"], 4)
    rows, plan = _join_plan(spark, kept)
    assert rows == expected and len(rows) == 900
    # the other side's alone, into the kept frame's partitions
    assert len(_exchanges(plan)) == 1 and ", 4)" in _exchanges(plan)[0], plan
    assert len(_sorts(plan)) == 1, plan  # the kept rows come sorted
    release(kept)


def test_a_frame_placed_but_unsorted_is_kept_saying_where_only(joins_by_sort: Any) -> None:
    spark = joins_by_sort
    scrambled = "(id * 7919) % 1000"  # equal keys meet, each partition's keys out of order
    frame = spark.range(0, 900, 1, 3).selectExpr(f"{scrambled} AS k", "id AS v").repartition(4, "k")
    expected, _ = _join_plan(spark, frame.localCheckpoint())
    rows, plan = _join_plan(spark, checkpoint_by_key(frame, ["k"], 4))
    assert rows == expected
    assert len(_exchanges(plan)) == 1 and len(_sorts(plan)) == 2, plan


@pytest.mark.parametrize(
    ("placement", "partitions"),
    [("round robin", 4), ("by the key, into another number", 3), ("by another column", 4)],
)
def test_a_frame_not_placed_by_its_key_is_kept_saying_nothing(
    joins_by_sort: Any, placement: str, partitions: int
) -> None:
    spark = joins_by_sort
    frame = spark.range(0, 900, 1, 3).selectExpr("id AS k", "id % 7 AS v")
    frame = {
        "round robin": frame.repartition(4),
        "by the key, into another number": frame.repartition(4, "k"),
        "by another column": frame.repartition(4, "v").sortWithinPartitions("k"),
    }[placement]
    expected, _ = _join_plan(spark, frame.localCheckpoint())
    rows, plan = _join_plan(spark, checkpoint_by_key(frame, ["k"], partitions))
    assert rows == expected
    assert len(_exchanges(plan)) == 2, plan
