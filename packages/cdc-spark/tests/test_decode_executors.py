"""Executor-side decode gives exactly what the driver-side decoder gives, for every installed JSON protocol,
on a realistic changefeed (several tables, many column types, updates, deletes, a DDL) plus broken messages."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_core.registry import installed_codecs
from cdc_spark import decode as executor
from cdc_spark import driver_decode as driver
from cdc_spark.changefeed import encode, generate
from cdc_spark.source.columns import KAFKA_COLUMNS

pytestmark = pytest.mark.spark

PROTOCOLS = [p for p in ("debezium", "canal-json", "simple") if p in installed_codecs()]


def _frame(spark: Any, messages: list[Message]) -> Any:
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    return spark.createDataFrame(rows, KAFKA_COLUMNS)


def _rows(frame: Any) -> list[Any]:
    return sorted(
        frame.collect(), key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"])
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_executor_decode_equals_driver_decode(spark: Any, protocol: str) -> None:
    changefeed = generate(seed=7, transactions=25)
    messages = list(encode(changefeed, protocol))
    messages.insert(5, Message(value=b'{"not": "a change"', partition=0))
    frame = _frame(spark, messages)

    expected = driver.decode(frame, protocol)
    actual = executor.decode_in_executors(frame, protocol)

    assert actual.tables() == expected.tables()
    assert len(actual.tables()) >= 2
    for database, table in expected.tables():
        assert actual.schemas()[(database, table)] == expected.schemas()[(database, table)]
        want, got = _rows(expected.table(database, table)), _rows(actual.table(database, table))
        assert got == want
        # Same names and types; the executor frame does not promise non-null metadata columns.
        assert (
            actual.table(database, table).schema.simpleString() == expected.table(database, table).schema.simpleString()
        )
    key = ("kind", "partition", "offset")
    assert sorted(actual.control().collect(), key=lambda r: [r[k] for k in key]) == sorted(
        expected.control().collect(), key=lambda r: [r[k] for k in key]
    )
    dead = actual.dead_letters().collect()
    assert [r["offset"] for r in dead] == [r["offset"] for r in expected.dead_letters().collect()] == [5]
    assert dead[0]["error_type"] == "DecodeError"
    actual.release()
