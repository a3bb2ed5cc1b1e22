"""Frames of the driver's rows made in the JVM: the rows ``createDataFrame`` gives, without a Python RDD."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_spark.decoding.spark_types import CONTROL_SCHEMA
from cdc_spark.local_frames import rows_frame

pytestmark = pytest.mark.spark

# control rows as the codec's first pass gives them: DDL text with quotes, new lines, non-ASCII and a character
# outside the basic plane, a lone surrogate (a JSON escape the codec decoded), None, the largest TSO and offset
ROWS = [
    ("ddl", "shop", "orders", 449_731_286_212_280_321, 'ALTER TABLE `orders` ADD `note` text COMMENT "a\\b"\n',
     "AlterTable", '{"columns": []}', 0, 17),
    ("ddl", "boutique", "客户", 2**63 - 1, "CREATE TABLE `客户` (`名` varchar(8)) -- 🙂 \ud800", None, None, 2**31 - 1,
     2**63 - 1),
    ("ddl", "shop", "\udc00\ud83d\ude42\ud83d", 1, "a pair split in two code points: each half is U+FFFD", None, None,
     0, 0),
    ("watermark", None, None, 0, None, None, None, None, None),
]  # fmt: skip


def test_rows_come_back_as_create_data_frame_gives_them(spark: Any) -> None:
    made = rows_frame(spark, ROWS, CONTROL_SCHEMA)
    expected = spark.createDataFrame(ROWS, CONTROL_SCHEMA)
    assert made.schema == expected.schema
    assert made.collect() == expected.collect()
    assert made.collect()[0]["sql"] == ROWS[0][4]  # quotes, backslash and new line kept
    plan = made._jdf.queryExecution().executedPlan().toString()
    assert "ExistingRDD" not in plan and "PythonRDD" not in plan, plan  # no Python worker reads it


def test_no_rows_is_an_empty_local_relation_and_a_short_row_is_refused(spark: Any) -> None:
    empty = rows_frame(spark, [], CONTROL_SCHEMA)
    assert empty.schema == spark.createDataFrame([], CONTROL_SCHEMA).schema
    assert empty._jdf.queryExecution().optimizedPlan().toString().startswith("LocalRelation <empty>")
    with pytest.raises(ValueError, match="a row of 2 values for the 9 fields"):
        rows_frame(spark, [("ddl", "shop")], CONTROL_SCHEMA)


def test_no_rows_keeps_the_schema_exactly_and_is_planned_in_the_jvm(spark: Any) -> None:
    """The key state's schema (fields that may not be null, a map, structs): as ``createDataFrame([], schema)``
    gives it, but an empty local relation, which a join with a table's changes reads without a Python worker."""
    from pyspark.sql.types import _parse_datatype_string

    from cdc_spark.local_frames import no_rows
    from cdc_spark.merge.scd1 import state_schema
    from cdc_spark.sinks.scd1_batch import DECODE_SEQUENCE

    schema = state_schema(_parse_datatype_string(DECODE_SEQUENCE))
    made = no_rows(spark, schema)
    assert made.schema == schema == spark.createDataFrame([], schema).schema
    assert [f.nullable for f in made.schema.fields][:2] == [False, False]
    assert made.collect() == []
    assert made._jdf.queryExecution().optimizedPlan().toString().startswith("LocalRelation <empty>")
