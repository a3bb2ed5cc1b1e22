"""The codec path's first pass brings the driver only small rows: a dead letter's payload stays in the executors."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_spark.decoding import decode
from cdc_spark.decoding.python_path import PythonPath
from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_testing.changefeed import encode, generate

pytestmark = pytest.mark.spark

GARBAGE = b'{"payload": "' + b"x" * 4096 + b'"'  # unterminated JSON: a dead letter with a sizeable payload


def test_dead_letters_are_collected_as_coordinates_and_carry_their_payload(spark: Any) -> None:
    messages = list(encode(generate(seed=3, transactions=5), "canal-json"))
    messages.insert(3, Message(value=GARBAGE, partition=1))
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS).cache()

    first = PythonPath.run(frame, "canal-json", {}).first
    dead = first.of_kind("dead")
    assert [(r["topic"], r["offset"]) for r in dead] == [("shop", 3)]
    collected = {key for row in first.rows for key, value in row.asDict().items() if value is not None}
    assert not collected & {"key", "value"}  # nothing of any message's payload reached the driver

    decoded = decode(frame, "canal-json", plan="python")
    try:
        letters = [r.asDict() for r in decoded.dead_letters().collect()]
        assert [(r["offset"], r["value"], r["error_type"]) for r in letters] == [(3, GARBAGE, "DecodeError")]
    finally:
        decoded.release()


@pytest.mark.parametrize("plan", ["python", "jvm"])
def test_a_batch_without_control_rows_or_dead_letters_gives_empty_frames_planned_in_the_jvm(
    spark: Any, plan: str
) -> None:
    """No control row and no dead letter: both frames are empty, with the contract's columns, and planned as empty
    local relations where nothing distributed makes them, not as scans of a Python RDD (whose write ran a job of its
    own, 0.2-0.3 s a batch). The codec plan's dead letters include the second pass's untyped rows: a real frame."""
    from cdc_spark.decoding.spark_types import CONTROL_SCHEMA, DEAD_LETTER_SCHEMA

    changefeed = generate(seed=5, transactions=4)
    messages = [m for m in encode(changefeed, "canal-json") if b'"isDdl":false' in m.value]
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", 0, i, stamp, 0, None) for i, m in enumerate(messages)]
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS)

    decoded = decode(frame, "canal-json", plan=plan)
    try:
        assert decoded.tables()  # the batch has changes
        for output, schema in ((decoded.control(), CONTROL_SCHEMA), (decoded.dead_letters(), DEAD_LETTER_SCHEMA)):
            assert output.schema == spark.createDataFrame([], schema).schema
            assert output.collect() == []
            if plan == "python" and schema is DEAD_LETTER_SCHEMA:
                continue
            optimized = output._jdf.queryExecution().optimizedPlan().toString()
            assert optimized.startswith("LocalRelation <empty>"), optimized
    finally:
        decoded.release()
