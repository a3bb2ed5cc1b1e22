"""The encoder: Go encoding/json bytes, bootstrap emission rules, large-message handling."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from cdc_core.codec import Decoder, Options
from cdc_core.errors import EncodeError
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_simple import OPTIONS, SimpleEncoder

SPEC_ORDER = ["ALTER", "INSERT", "UPDATE", "DELETE", "WATERMARK", "BOOTSTRAP"]


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _encoder(clock: Clock | None = None, /, **options: object) -> SimpleEncoder:
    specs = [s for s in OPTIONS if s.for_encoder]
    return SimpleEncoder(Options(specs, options, protocol="simple"), clock=clock or Clock())


def _types(messages: list[Message]) -> list[str]:
    return [json.loads(m.value or b"")["type"] for m in messages]


def test_spec_messages_encode_back_to_the_same_bytes(
    spec_messages: dict[str, bytes], make_decoder: Callable[..., Decoder]
) -> None:
    decoder = make_decoder()
    encoder = _encoder(**{"send-bootstrap-interval-in-sec": 0})
    for kind in SPEC_ORDER:
        expected = json.dumps(json.loads(spec_messages[kind]), separators=(",", ":")).encode()
        (event,) = decoder.decode(Message(value=spec_messages[kind]))
        if isinstance(event, Watermark | Bootstrap):
            encoder.clock = Clock(json.loads(expected)["buildTs"] / 1000)
        (message,) = encoder.encode(event)
        assert message.value == expected, kind


def _table(*extra: Column) -> TableSchema:
    return TableSchema(
        database="db",
        table="t",
        columns=[Column(name="id", data_type=DataType(mysql_type=MySQLType.INT, length=11), nullable=False), *extra],
        indexes=[Index(name="primary", columns=["id"], unique=True, primary=True)],
        table_id=42,
        version=1000,
    )


def _insert(schema: TableSchema, row: dict[str, Any], commit_ts: int = 2000) -> RowChange:
    return RowChange(
        op=Op.INSERT,
        database=schema.database,
        table=schema.table,
        after=row,
        commit_ts=commit_ts,
        table_id=schema.table_id,
        schema_version=schema.version,
        schema=schema,
    )


def test_go_string_escaping_and_sorted_row_keys() -> None:
    text = DataType(mysql_type=MySQLType.VARCHAR, length=64, charset="utf8mb4", collation="utf8mb4_bin")
    schema = _table(Column(name="b_note", data_type=text), Column(name="a_note", data_type=text))
    event = _insert(schema, {"id": 1, "b_note": '<a href="x">&\u2028\x01\té', "a_note": None})
    (message,) = _encoder(**{"send-bootstrap-interval-in-sec": 0}).encode(event)
    assert message.value == (
        b'{"version":1,"database":"db","table":"t","tableID":42,"type":"INSERT","commitTs":2000,'
        b'"buildTs":1700000000000,"schemaVersion":1000,"data":{"a_note":null,'
        b'"b_note":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u2028\\u0001\\t\xc3\xa9","id":"1"}}'
    )


def test_bootstrap_before_first_row_then_by_count_and_interval() -> None:
    clock = Clock()
    encoder = _encoder(
        clock, **{"send-bootstrap-in-msg-count": 3, "send-bootstrap-interval-in-sec": 60, "partition-num": 3}
    )
    schema = _table()
    sent = encoder.encode(_insert(schema, {"id": 1}))
    assert _types(sent) == ["BOOTSTRAP"] * 3 + ["INSERT"]
    assert [m.partition for m in sent[:3]] == [0, 1, 2]
    assert json.loads(sent[0].value or b"")["commitTs"] == 0
    assert _types(encoder.encode(_insert(schema, {"id": 2}))) == ["INSERT"]
    assert _types(encoder.encode(_insert(schema, {"id": 3}))) == ["INSERT"]
    assert _types(encoder.encode(_insert(schema, {"id": 4}))) == ["BOOTSTRAP"] * 3 + ["INSERT"]  # 3 rows since
    clock.now += 59
    assert _types(encoder.encode(_insert(schema, {"id": 5}))) == ["INSERT"]
    clock.now += 1
    assert _types(encoder.encode(_insert(schema, {"id": 6}))) == ["BOOTSTRAP"] * 3 + ["INSERT"]  # 60 s since


def test_bootstrap_to_partition_zero_only_and_disabled() -> None:
    schema = _table()
    only_zero = _encoder(**{"send-bootstrap-to-all-partition": False, "partition-num": 4})
    sent = only_zero.encode(_insert(schema, {"id": 1}))
    assert _types(sent) == ["BOOTSTRAP", "INSERT"]
    assert sent[0].partition == 0
    disabled = _encoder(**{"send-bootstrap-in-msg-count": 0})
    assert _types(disabled.encode(_insert(schema, {"id": 1}))) == ["INSERT"]


def test_inactive_table_and_schema_changes() -> None:
    clock = Clock()
    encoder = _encoder(clock, **{"send-bootstrap-interval-in-sec": 10_000, "send-bootstrap-in-msg-count": 10_000})
    v1 = _table()
    encoder.encode(_insert(v1, {"id": 1}))
    clock.now += 30 * 60  # idle for 30 minutes: forgotten, the next row bootstraps again
    assert _types(encoder.encode(_insert(v1, {"id": 2}))) == ["BOOTSTRAP", "INSERT"]

    number = DataType(mysql_type=MySQLType.BIGINT, length=20)
    v2 = TableSchema(
        database="db",
        table="t",
        columns=[*v1.columns, Column(name="n", data_type=number)],
        indexes=v1.indexes,
        table_id=42,
        version=2000,
    )
    ddl = DDLEvent(
        ddl_type=DDLType.ALTER,
        sql="ALTER TABLE t ADD n BIGINT",
        database="db",
        table="t",
        commit_ts=2500,
        table_schema=v2,
        pre_table_schema=v1,
    )
    assert _types(encoder.encode(ddl)) == ["ALTER"]
    assert _types(encoder.encode(_insert(v2, {"id": 3, "n": 4}))) == ["INSERT"]  # the DDL announced v2
    v3 = TableSchema(database="db", table="t", columns=v2.columns, indexes=v2.indexes, table_id=42, version=3000)
    assert _types(encoder.encode(_insert(v3, {"id": 4, "n": 5}))) == ["BOOTSTRAP", "INSERT"]  # never announced


def test_watermark_and_ddl_go_to_every_partition() -> None:
    encoder = _encoder(**{"partition-num": 3})
    events: list[Event] = [
        Watermark(ts=99),
        DDLEvent(ddl_type=DDLType.QUERY, sql="CREATE DATABASE x", commit_ts=5),
    ]
    for event in events:
        sent = encoder.encode(event)
        assert [m.partition for m in sent] == [0, 1, 2]
    assert json.loads(encoder.encode(events[1])[0].value or b"") == {
        "version": 1,
        "type": "QUERY",
        "sql": "CREATE DATABASE x",
        "commitTs": 5,
        "buildTs": 1700000000000,
    }


def test_row_without_schema_and_too_large_rows_fail() -> None:
    schema = _table()
    with pytest.raises(EncodeError, match="table schema"):
        _encoder().encode(RowChange(op=Op.INSERT, database="db", table="t", after={"id": 1}))
    text = DataType(mysql_type=MySQLType.TEXT, charset="utf8mb4", collation="utf8mb4_bin")
    wide = _table(Column(name="body", data_type=text))
    big = _insert(wide, {"id": 1, "body": "x" * 5000})
    with pytest.raises(EncodeError, match="max-message-bytes"):
        _encoder(**{"max-message-bytes": 2048, "send-bootstrap-in-msg-count": 0}).encode(big)
    with pytest.raises(EncodeError, match="not in the table schema"):
        _encoder().encode(_insert(schema, {"id": 1, "ghost": 2}))
