"""A first stage's physical plan kept over a leaf of the messages' rows: the next batch's rows through the kept plan,
not the first batch's, and a frame planned as any other wherever the plan cannot be kept."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_spark.decoding.kept_passes import KeptPasses
from cdc_spark.decoding.kept_plans import KeptPlans, lineage_of
from cdc_spark.runtime.java_names import static_method
from cdc_testing.spark_frames import scanned_frame

pytestmark = pytest.mark.spark

MESSAGES = "id BIGINT, note STRING"


def _messages(spark: Any, base: int) -> Any:
    return scanned_frame(spark, [(base + i, f"m{base + i}") for i in range(6)], MESSAGES)


def _typed(source: Any) -> Any:
    """A pass in small: projections and a filter, row by row."""
    from pyspark.sql import functions as F

    return source.where(F.col("id") % 3 != 0).select((F.col("id") * 2).alias("doubled"), F.upper("note").alias("up"))


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in frame.collect())


def _kept_class(frame: Any) -> str:
    name: str = frame._jdf.queryExecution().analyzed().getClass().getName()
    return name


def test_the_next_batchs_rows_go_through_the_plan_kept_for_the_first(spark: Any) -> None:
    plans, passes = KeptPlans("__leaf__"), KeptPasses()
    results = []
    for base in (0, 100, 200):
        messages = _messages(spark, base)
        leaf = passes.leaf(messages)
        assert leaf is not None
        frame = plans.frame("typed", leaf, _typed)
        kept = passes.persist(frame, leaf, {})
        assert _kept_class(kept) == "org.apache.spark.sql.execution.LogicalRDD"  # kept for the batch
        results.append(_rows(kept))
        assert results[-1] == _rows(_typed(messages))  # this batch's rows
    assert results[1] == [(200, "M100"), (202, "M101"), (206, "M103"), (208, "M104")]
    # the first frame is built (no lineage), the second plans the physical plan, the third reuses it
    assert (plans.built, plans.reused) == (1, 2)
    assert (passes.planned, passes.reused) == (1, 1)


def test_a_frame_without_a_lineage_or_not_row_by_row_is_persisted_as_any_frame(spark: Any) -> None:
    from pyspark.sql import functions as F

    passes = KeptPasses()

    def counted(source: Any) -> Any:
        return source.groupBy((F.col("id") % 2).alias("odd")).count()  # an exchange: a plan of one run

    plans = KeptPlans("__leaf__")
    for base in (0, 10, 20):
        messages = _messages(spark, base)
        leaf = passes.leaf(messages)
        assert leaf is not None
        grouped = plans.frame("counted", leaf, counted)
        assert _rows(passes.persist(grouped, leaf, {})) == [(0, 3), (1, 3)]
        direct = _typed(leaf)  # built here, not from a kept plan: no lineage
        assert lineage_of(direct) is None
        assert _rows(passes.persist(direct, leaf, {})) == _rows(_typed(messages))
    assert plans.reused == 2 and (passes.planned, passes.reused) == (0, 0)


def test_a_kept_plan_takes_no_leaf_of_other_columns(spark: Any) -> None:
    """The JVM side checks the leaf's columns itself: another type is no fit (the caller then plans anew)."""
    passes = KeptPasses()
    first = passes.leaf(_messages(spark, 0))
    assert first is not None
    kept = static_method(spark._jvm, "cdc.spark.plans.PhysicalPlans", "of")(_typed(first)._jdf, first._jdf)
    assert kept is not None
    other = passes.leaf(scanned_frame(spark, [(1, "x")], "id INT, note STRING"))
    assert other is not None
    assert kept.checkpoint(other._jdf) is None
    same = passes.leaf(_messages(spark, 30))
    assert same is not None
    from pyspark.sql import DataFrame

    assert _rows(DataFrame(kept.checkpoint(same._jdf), spark)) == _rows(_typed(_messages(spark, 30)))


def test_a_kept_plans_later_runs_put_the_first_runs_steps_over_their_rows(spark: Any) -> None:
    """After its first run a kept plan generates no code: it puts that run's partition steps over the next leaf;
    each batch's rows are still its own, on every partition."""
    from pyspark.sql import DataFrame

    passes = KeptPasses()
    first = passes.leaf(_messages(spark, 0))
    assert first is not None
    kept = static_method(spark._jvm, "cdc.spark.plans.PhysicalPlans", "of")(_typed(first)._jdf, first._jdf)
    for base in (0, 40, 80):
        batch = scanned_frame(spark, [(base + i, f"m{base + i}") for i in range(30)], MESSAGES).repartition(3)
        leaf = passes.leaf(batch)
        assert leaf is not None
        rows = DataFrame(kept.checkpoint(leaf._jdf), spark)
        assert rows.rdd.getNumPartitions() == 3
        assert _rows(rows) == _rows(_typed(batch))
    assert kept.replayed() == 2
