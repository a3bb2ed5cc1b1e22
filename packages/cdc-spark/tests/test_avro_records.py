"""from_avro in PERMISSIVE mode with its options as a literal map (cdc_spark.decoding.avro_records)."""

from __future__ import annotations

from typing import Any

from cdc_spark.decoding.avro_records import permissive_from_avro

SCHEMA = '{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"s","type":"string"}]}'


def _read(spark: Any, values: list[bytes]) -> Any:
    frame = spark.createDataFrame([(bytearray(v),) for v in values], "b binary")
    return frame.select(permissive_from_avro(frame["b"], SCHEMA).alias("r"))


def test_a_record_is_read_and_an_unreadable_one_is_a_row_of_nulls(spark: Any) -> None:
    # 21 zigzag-encoded is 0x2a, then the string "hi" (length 2 zigzag-encoded is 0x04); the second record ends
    # inside its string
    rows = _read(spark, [b"\x2a\x04hi", b"\x2a\x08h"]).collect()
    assert [r["r"].asDict() if r["r"] is not None else None for r in rows] == [
        {"a": 21, "s": "hi"},
        {"a": None, "s": None},
    ]


def test_the_options_reach_the_plan_as_a_literal_map(spark: Any) -> None:
    # a map(...) expression is evaluated through a builder that two threads planning over one batch can share
    # (see the module): only a literal is safe
    plan = _read(spark, [b"\x2a\x04hi"])._jdf.queryExecution().analyzed()
    reader = plan.projectList().head().child()
    assert reader.prettyName() == "from_avro"
    options = reader.options()
    assert options.getClass().getSimpleName() == "Literal"
    assert options.toString() == "map(keys: [mode], values: [PERMISSIVE])"
