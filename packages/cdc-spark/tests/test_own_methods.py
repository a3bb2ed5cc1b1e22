"""``decoding.jvm.own_methods``: a boundary that puts the projections above it in a generated method of their own,
values unchanged, and the check that a plan's projections all run in whole-stage code."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_spark.decoding.jvm.own_methods import in_whole_stage, own_method
from cdc_spark.session_conf import session_conf
from cdc_testing.spark_plans import consumer_methods, generated_stages

pytestmark = pytest.mark.spark


def _frame(spark: Any) -> Any:
    """Columns of each kind the boundary reads twice (nullable, not null and ordered) or passes (a map not null)."""
    from pyspark.sql import functions as F

    rows = [("a", 1.5, b"\x00\x01"), (None, float("nan"), None), ("c", None, b"")]
    source = spark.createDataFrame(rows, "s string, d double, b binary")
    return source.select(
        "s", "d", "b",
        F.lit(7).alias("seven"),
        F.struct(F.lit(1).alias("x"), F.col("s").alias("y")).alias("pair"),
        F.create_map(F.lit("k"), F.col("s")).alias("map"),
        F.when(F.col("s").isNotNull(), F.struct(F.col("d").alias("v"))).alias("maybe"),
    )  # fmt: skip


def _consumer_methods(frame: Any) -> int:
    """How many projections' consumers the frame's whole-stage code puts in methods of their own."""
    return sum(consumer_methods(source) for source in generated_stages(frame))


def _above(frame: Any) -> Any:
    """A projection over ``frame`` that passes its columns through, as the typing's stages do."""
    from pyspark.sql import functions as F

    return frame.select("*", F.concat_ws("-", F.col("s"), F.col("d").cast("string")).alias("joined"))


def test_a_boundary_keeps_every_value_and_its_column_types(spark: Any) -> None:
    frame = _frame(spark)
    bounded = own_method(frame)
    assert bounded.schema == frame.schema
    # as text: NaN is not equal to itself
    assert [str(r) for r in _above(bounded).collect()] == [str(r) for r in _above(frame).collect()]


def test_the_projection_above_a_boundary_gets_a_method_of_its_own(spark: Any) -> None:
    """Spark's rule the module relies on: checked here, as Spark plans it now."""
    frame = _frame(spark).drop("map")  # every column read twice
    assert _consumer_methods(_above(frame)) == 0
    assert _consumer_methods(_above(own_method(frame))) == 1
    assert _consumer_methods(_above(own_method(_above(own_method(frame))))) == 2


def test_a_map_that_cannot_be_null_is_passed_as_it_is_and_loses_the_boundary(spark: Any) -> None:
    frame = _frame(spark)
    assert "least(map" not in own_method(frame)._jdf.queryExecution().optimizedPlan().toString()
    assert _consumer_methods(_above(own_method(frame))) == 0


def test_in_whole_stage_finds_a_projection_outside_whole_stage_code(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = _frame(spark)
    assert in_whole_stage(_above(own_method(frame)))
    # from_json has no generated code: its projection runs on its own
    parsed = frame.select("*", F.from_json(F.col("s"), "x int").alias("parsed"))
    assert not in_whole_stage(parsed)
    with session_conf(spark, {"spark.sql.codegen.maxFields": "3"}):  # rows too wide for whole-stage code
        assert not in_whole_stage(_above(own_method(frame)))
    with session_conf(spark, {"spark.sql.codegen.wholeStage": "false"}):
        assert not in_whole_stage(_above(frame))
