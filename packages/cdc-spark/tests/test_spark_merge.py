"""The Spark MERGE sink: SQL the Spark parser accepts, and a typed error on a catalog without MERGE."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.apply import build_spec, plan_batch
from cdc_spark.sinks.spark_merge import MergeUnsupportedError, SparkMergeSink, create_sql, merge_sql, truncate_sql

pytestmark = pytest.mark.spark

SCHEMA = (
    "id int, `na me` string, _cdc_op string, "
    "_cdc_sequence struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
)
ROWS = [(1, "a", "insert", (1, 0, 1, 0)), (1, "b", "update", (2, 0, 2, 0)), (2, None, "truncate", (3, 0, 3, 0))]


def parse(spark: Any, sql: str) -> str:
    """Parse with Spark's own SQL parser (raises ParseException on a syntax error)."""
    return str(spark._jsparkSession.sessionState().sqlParser().parsePlan(sql).nodeName())


@pytest.mark.parametrize("scd", [1, 2])
def test_generated_statements_parse(spark: Any, scd: int) -> None:
    changes = spark.createDataFrame(ROWS, SCHEMA)
    plan = plan_batch(changes, build_spec(changes, table="shop.t", keys=["id"], scd=scd))
    assert plan.truncate_sequence is not None
    merge = merge_sql(plan, "cat.db.`shop_t`", "src")
    assert parse(spark, merge) == "MergeIntoTable"
    assert "`na me`" in merge
    assert parse(spark, truncate_sql(plan, "cat.db.`shop_t`")) == "UpdateTable"
    assert "__cdc_changed__" not in create_sql(plan, "cat.db.t", "iceberg")
    if scd == 1:
        assert "s.`__cdc_sequence` > t.`__cdc_sequence`" in merge
        newer = "s.`__cdc_changed__na me` > t.`__cdc_sequence`"
        assert f"CASE WHEN {newer} THEN s.`na me` ELSE t.`na me` END" in merge
    else:
        assert "WHEN MATCHED AND s.`__cdc_drop` THEN DELETE" in merge


def test_catalog_without_merge_is_a_typed_error(spark: Any, tmp_path: Path) -> None:
    stored = "id int, `na me` string, __cdc_sequence string, __cdc_deleted boolean, __cdc_updated_at timestamp"
    spark.createDataFrame([], stored).write.parquet(str(tmp_path / "plain"))
    spark.read.parquet(str(tmp_path / "plain")).createOrReplaceTempView("cdc_plain")
    try:
        changes = spark.createDataFrame(ROWS[:2], SCHEMA)
        sink = SparkMergeSink(spark, table_name="cdc_plain")
        plan = plan_batch(changes, build_spec(changes, table="shop.t", keys=["id"]))
        with pytest.raises(MergeUnsupportedError, match=r"cdc_plain.*MERGE"):
            sink.write(plan, None)
        with pytest.raises(MergeUnsupportedError, match="Delta Lake or Iceberg"):
            SparkMergeSink(spark, prefix="default").write(plan, None)  # no delta data source on this Spark
    finally:
        spark.catalog.dropTempView("cdc_plain")
