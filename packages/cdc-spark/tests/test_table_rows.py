"""A table's rows of a batch's checkpoint, filtered as the checkpoint is read: the same rows as a filter on the
whole frame, only the table's rows read by Spark, and the whole frame where the plan above the checkpoint does not
commute with the filter."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdc_spark.batch_cache import table_rows
from cdc_spark.decoding import decode
from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_testing.changefeed import encode, generate

pytestmark = pytest.mark.spark


def _checkpoint(spark: Any) -> Any:
    """A batch of three tables' rows (4, 2 and 1 of them, interleaved, over two partitions), kept as a local
    checkpoint, under projections and a filter as the decode's are."""
    tables = [0, 1, 0, 2, 0, 1, 0]
    rows = [(i, t, f"row {i}", None if i == 3 else i * 10) for i, t in enumerate(tables)]
    frame = spark.createDataFrame(rows, "id INT, __tidx INT, note STRING, size INT").repartition(2, "id")
    kept = frame.localCheckpoint()
    return kept.withColumn("label", kept.note).where("id >= 0").select("id", "__tidx", "label", "size")


def _leaf_rows(frame: Any) -> int:
    """How many rows the frame's plan reads from its checkpoint."""
    plan = frame._jdf.queryExecution().analyzed()
    while plan.children().size():
        plan = plan.children().apply(0)
    assert plan.getClass().getSimpleName() == "LogicalRDD"
    return int(plan.rdd().count())


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in frame.collect())


@pytest.mark.parametrize(
    "above",
    [
        pytest.param(lambda f: f, id="as it is"),
        # a kept plan put over a new checkpoint gives the new columns the old ids under plain renames
        pytest.param(lambda f: f.select(*(f[c].alias(c) for c in f.columns)).where("size > 0"), id="renamed"),
    ],
)
def test_a_tables_rows_are_read_from_the_checkpoint_alone(spark: Any, above: Any) -> None:
    frame = above(_checkpoint(spark))
    for table, count in ((0, 4), (1, 2), (2, 1), (7, 0)):
        rows = table_rows(frame, table)
        assert _leaf_rows(rows) == count
        assert _rows(rows.where(f"__tidx = {table}")) == _rows(frame.where(f"__tidx = {table}"))
        assert rows.columns == frame.columns


@pytest.mark.parametrize(
    "above",
    [
        pytest.param(lambda f: f.limit(3), id="a limit sees every table's rows"),
        pytest.param(lambda f: f.groupBy("__tidx").count(), id="an aggregate"),
        pytest.param(lambda f: f.withColumn("__tidx", f.__tidx + 0), id="the table's index computed again"),
        pytest.param(
            lambda f: f.select(f.id.alias("__tidx"), f.__tidx.alias("table"), "label"), id="another column named so"
        ),
        pytest.param(lambda f: f.where("rand() < 2"), id="a filter that is not deterministic"),
        pytest.param(lambda f: f.join(f.select("id"), "id"), id="a join of two reads"),
    ],
)
def test_plans_that_do_not_commute_with_the_filter_read_every_row(spark: Any, above: Any) -> None:
    frame = above(_checkpoint(spark))
    assert table_rows(frame, 0) is frame


def test_a_decoded_batchs_tables_each_read_their_own_rows(spark: Any) -> None:
    messages = encode(generate(seed=5, transactions=30), "canal-json", {})
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", 0, i, stamp, 0, None) for i, m in enumerate(messages)]
    # the second batch is typed in its shapes' pass, and the third is made of the second's kept plans
    # (JvmCaches.cache_plans) put over its own checkpoint, which rename that checkpoint's columns
    for batch in range(3):
        decoded = decode(spark.createDataFrame(rows, KAFKA_COLUMNS), "canal-json", {}, plan="jvm")
        try:
            tables = decoded.tables()
            assert len(tables) > 1
            for database, table in tables:
                changes = decoded.table(database, table)
                assert (batch, _leaf_rows(changes)) == (batch, changes.count()) and changes.count() > 0
        finally:
            decoded.release()
