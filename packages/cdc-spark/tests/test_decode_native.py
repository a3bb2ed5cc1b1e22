"""Canal-JSON decoded in the JVM equals the executor decoder row for row, and it really ran in the JVM.

Inputs: the realistic changefeed (three tables, updates, deletes, a DDL) as TiCDC writes it, and every column
type of the kitchen-sink table (zero dates included) as official Canal writes it (full mysqlType with ENUM/SET
members, partial old images) with TiDB's extension fields, plus messages the native plan must leave to Python.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from cdc_core.events import DDLEvent, DDLType, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec, installed_codecs
from cdc_spark import decode as executor
from cdc_spark import native_canal
from cdc_spark.changefeed import encode, generate
from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_testing.strategies import kitchen_sink_schema, row_changes

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif("canal-json" not in installed_codecs(), reason="needs cdc-canal"),
]


def _frame(spark: Any, messages: list[Message]) -> Any:
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    return spark.createDataFrame(rows, KAFKA_COLUMNS)


def _rows(frame: Any) -> list[Any]:
    return sorted(
        frame.collect(), key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"])
    )


def _assert_same(native: Any, python: Any) -> None:
    assert native.tables() == python.tables()
    for database, table in python.tables():
        assert native.schemas()[(database, table)] == python.schemas()[(database, table)]
        got, want = native.table(database, table), python.table(database, table)
        assert got.schema.simpleString() == want.schema.simpleString()
        assert _rows(got) == _rows(want), f"{database}.{table}"


def test_ticdc_changefeed_decodes_natively_and_equal(spark: Any) -> None:
    messages = list(encode(generate(seed=7, transactions=25), "canal-json"))
    messages.insert(5, Message(value=b'{"not": "a change"', partition=0))
    frame = _frame(spark, messages)

    native = native_canal.decode(frame, "canal-json")
    python = executor.decode_in_executors(frame, "canal-json")

    _assert_same(native, python)
    assert native.native_tables, "no table was decoded in the JVM"
    dead = native.dead_letters().collect()
    assert [r["offset"] for r in dead] == [5]
    assert sorted(native.control().collect()) == sorted(python.control().collect())
    native.release()
    python.release()


def _kitchen_sink_messages(count: int) -> list[Message]:
    schema = kitchen_sink_schema()
    events: list[RowChange] = []

    @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_changes(schema, zero_dates=True))
    def draw(change: RowChange) -> None:
        events.append(change)

    draw()
    encoder = get_codec("canal-json").encoder(
        {"flavour": "canal", "content-compatible": True, "enable-tidb-extension": True, "time-zone": "Asia/Shanghai"}
    )
    messages: list[Message] = []
    for number, event in enumerate(events):
        for message in encoder.encode(event):
            messages.append(Message(value=message.value, key=message.key, partition=number % 3))
    return messages


def test_every_column_type_as_official_canal_writes_it(spark: Any) -> None:
    messages = _kitchen_sink_messages(40)
    frame = _frame(spark, messages)
    options = {"time-zone": "Asia/Shanghai"}

    native = native_canal.decode(frame, "canal-json", options)
    python = executor.decode_in_executors(frame, "canal-json", options)

    _assert_same(native, python)
    assert native.native_tables == python.tables()
    assert any(r["_cdc_zero_dates"] for r in _rows(native.table(*native.native_tables[0])))
    assert any(r["_cdc_changed_columns"] for r in _rows(native.table(*native.native_tables[0])))
    native.release()
    python.release()


def test_a_table_the_jvm_cannot_read_goes_to_python_whole(spark: Any) -> None:
    messages = _kitchen_sink_messages(6)
    schema = kitchen_sink_schema()
    encoder = get_codec("canal-json").encoder({"enable-tidb-extension": True})
    truncate = DDLEvent(ddl_type=DDLType.TRUNCATE, sql=f"TRUNCATE TABLE {schema.table}", database=schema.database,
                        table=schema.table, commit_ts=(1 << 62) + 5)  # fmt: skip
    messages += [Message(value=m.value, partition=0) for m in encoder.encode(truncate)]
    bad_value = messages[0].value.replace(b'"data":[{"id":"', b'"data":[{"id":"x')  # type: ignore[union-attr]
    frame = _frame(spark, [*messages, Message(value=bad_value, partition=1)])

    native = native_canal.decode(frame, "canal-json")
    python = executor.decode_in_executors(frame, "canal-json")

    assert native.native_tables == []
    _assert_same(native, python)
    assert "truncate" in {r["_cdc_op"] for r in _rows(native.table(schema.database, schema.table))}
    assert [r["error_type"] for r in native.dead_letters().collect()] == ["DecodeError"]
    native.release()
    python.release()
