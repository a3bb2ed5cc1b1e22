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


# the tests' change frames (cdc_testing.spark_frames): nested values of every kind its conversion handles
NESTED = (
    "id int, amount decimal(10,2), at timestamp, seq struct<commit_ts:bigint,partition:int,offset:bigint,position:int>,"
    " changed array<string>, sets map<string,struct<s:bigint>>, raw binary"
)


def test_the_tests_frames_hold_the_rows_create_data_frame_gives(spark: Any) -> None:
    import datetime as dt
    from decimal import Decimal

    from pyspark.sql import Row

    from cdc_testing.spark_frames import local_frame, scanned_frame

    rows = [
        (1, Decimal("12.50"), dt.datetime(2024, 5, 1, 8, 30, tzinfo=dt.UTC), (5, 0, 5, 1), ["name"],
         {"name": (5,)}, b"\x00\xff"),
        (2, None, dt.datetime(2024, 5, 1, 8, 30), Row(commit_ts=6, partition=1, offset=6, position=0), [], {}, None),
        (3, Decimal("-0.01"), None, {"commit_ts": 7, "partition": 2, "offset": 7, "position": 0}, None, None, b""),
    ]  # fmt: skip

    def lineage(frame: Any) -> str:  # the RDDs a read of the frame runs
        return str(frame._jdf.queryExecution().toRdd().toDebugString())

    expected = spark.createDataFrame(rows, NESTED)
    assert "PythonRDD" in lineage(expected)
    for made in (local_frame(spark, rows, NESTED), scanned_frame(spark, rows, NESTED)):
        assert made.schema == expected.schema
        assert sorted(made.collect(), key=lambda r: r["id"]) == sorted(expected.collect(), key=lambda r: r["id"])
        assert "PythonRDD" not in lineage(made), lineage(made)  # no Python worker reads it
    with pytest.raises(ValueError, match="3 values for the 4 fields"):
        local_frame(spark, [(1, None, None, (5, 0, 5), None, None, None)], NESTED)
