"""Canal-JSON decoded in the JVM equals the executor decoder row for row, and it really ran in the JVM.

Inputs: the realistic changefeed (three tables, updates, deletes, a DDL) as TiCDC writes it, and every column
type of the kitchen-sink table (zero dates included) as official Canal writes it (full mysqlType with ENUM/SET
members, partial old images) with TiDB's extension fields, plus messages the native plan must leave to Python.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdc_core.events import DDLEvent, DDLType
from cdc_core.message import Message
from cdc_core.registry import get_codec, installed_codecs
from cdc_spark import decode as executor
from cdc_spark import native_canal
from cdc_testing.changefeed import encode, generate
from cdc_testing.strategies import kitchen_sink_schema

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif("canal-json" not in installed_codecs(), reason="needs cdc-canal"),
]


def _assert_same(native: Any, python: Any, rows: Any) -> None:
    assert native.tables() == python.tables()
    for database, table in python.tables():
        assert native.schemas()[(database, table)] == python.schemas()[(database, table)]
        got, want = native.table(database, table), python.table(database, table)
        assert got.schema.simpleString() == want.schema.simpleString()
        assert rows(got) == rows(want), f"{database}.{table}"


def test_ticdc_changefeed_decodes_natively_and_equal(kafka_frame: Any, change_rows: Any) -> None:
    messages = list(encode(generate(seed=7, transactions=25), "canal-json"))
    messages.insert(5, Message(value=b'{"not": "a change"', partition=0))
    frame = kafka_frame(messages)

    native = native_canal.decode(frame, "canal-json")
    python = executor.decode_in_executors(frame, "canal-json")

    _assert_same(native, python, change_rows)
    assert native.native_tables, "no table was decoded in the JVM"
    dead = native.dead_letters().collect()
    assert [r["offset"] for r in dead] == [5]
    assert sorted(native.control().collect()) == sorted(python.control().collect())
    native.release()
    python.release()


def test_every_column_type_as_official_canal_writes_it(
    kafka_frame: Any, change_rows: Any, kitchen_sink_canal: Any
) -> None:
    messages = kitchen_sink_canal(40)
    frame = kafka_frame(messages)
    options = {"time-zone": "Asia/Shanghai"}

    native = native_canal.decode(frame, "canal-json", options)
    python = executor.decode_in_executors(frame, "canal-json", options)

    _assert_same(native, python, change_rows)
    assert native.native_tables == python.tables()
    assert any(r["_cdc_zero_dates"] for r in change_rows(native.table(*native.native_tables[0])))
    assert any(r["_cdc_changed_columns"] for r in change_rows(native.table(*native.native_tables[0])))
    native.release()
    python.release()


def test_a_table_the_jvm_cannot_read_goes_to_python_whole(
    kafka_frame: Any, change_rows: Any, kitchen_sink_canal: Any
) -> None:
    messages = kitchen_sink_canal(6)
    schema = kitchen_sink_schema()
    encoder = get_codec("canal-json").encoder({"enable-tidb-extension": True})
    truncate = DDLEvent(ddl_type=DDLType.TRUNCATE, sql=f"TRUNCATE TABLE {schema.table}", database=schema.database,
                        table=schema.table, commit_ts=(1 << 62) + 5)  # fmt: skip
    messages += [Message(value=m.value, partition=0) for m in encoder.encode(truncate)]
    bad_value = messages[0].value.replace(b'"data":[{"id":"', b'"data":[{"id":"x')  # type: ignore[union-attr]
    frame = kafka_frame([*messages, Message(value=bad_value, partition=1)])

    native = native_canal.decode(frame, "canal-json")
    python = executor.decode_in_executors(frame, "canal-json")

    assert native.native_tables == []
    _assert_same(native, python, change_rows)
    assert "truncate" in {r["_cdc_op"] for r in change_rows(native.table(schema.database, schema.table))}
    assert [r["error_type"] for r in native.dead_letters().collect()] == ["DecodeError"]
    native.release()
    python.release()
