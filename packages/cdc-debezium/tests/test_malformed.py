"""Malformed input gets a `DecodeError` naming the message coordinates and the field, never a bare error."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cdc_core.codec import Options
from cdc_core.errors import DecodeError
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_debezium import OPTIONS, DebeziumDecoder

SOURCE = {"db": "d", "table": "t", "commit_ts": 5}
TINY = {"type": "int16", "optional": True, "field": "tiny"}
BITS = {"type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "parameters": {"length": "9"}, "field": "b"}
ZONED = {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "field": "ts"}
ENUM_SET = {"type": "string", "name": "io.debezium.data.EnumSet", "parameters": {"allowed": "a,b"}, "field": "s"}
# Debezium and TiCDC always list a SET's members in "allowed": without it the members are unknown
MEMBERLESS_SET = {"type": "string", "name": "io.debezium.data.EnumSet", "field": "s"}
MEMBERLESS_ENUM = {"type": "string", "name": "io.debezium.data.Enum", "field": "e"}
DATE = {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "field": "d"}
MICRO_TS = {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "field": "t"}
TIMESTAMP_MS = {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "field": "t"}
TINYINT = {"tidb_type": "tinyint", "type": "int16", "optional": True, "field": "tiny"}
INT_U = {"tidb_type": "int unsigned", "type": "int64", "optional": True, "field": "u"}
DECIMAL_2 = {
    "type": "double",
    "optional": True,
    "field": "p",
    "parameters": {
        "__debezium.source.column.type": "DECIMAL",
        "__debezium.source.column.length": "10",
        "__debezium.source.column.scale": "2",
    },
}
VSD = {"type": "struct", "optional": True, "name": "io.debezium.data.VariableScaleDecimal", "field": "n"}


def _schema(*fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "struct", "fields": [{"type": "struct", "field": "after", "fields": list(fields)}]}


def _row(after: Any, *fields: dict[str, Any], **payload: Any) -> dict[str, Any]:
    body = {"source": SOURCE, "op": "c", "before": None, "after": after, **payload}
    return {"schema": _schema(*fields), "payload": body}


CASES: list[tuple[str, bytes | dict[str, Any], str, str]] = [
    ("truncated JSON", b'{"payload":{"op":"c","sour', "value", "not valid JSON"),
    ("invalid UTF-8", b'{"payload":{"op":"c\xff"}}', "value", "not valid JSON"),
    ("array at top", b"[1,2]", "value", "expected a JSON object"),
    ("deep nesting", b"[" * 5000 + b"]" * 5000, "value", "not valid JSON"),
    ("payload is a string", {"payload": "x", "schema": None}, "payload", "expected an object"),
    ("schema is a list", {"payload": {}, "schema": []}, "schema", "expected an object"),
    ("unknown op", {"payload": {"op": "x", "source": SOURCE}}, "payload.op", "unknown op 'x'"),
    ("op is a number", {"payload": {"op": 1}}, "payload.op", "expected a string"),
    ("no op and no ddl", {"payload": {"source": SOURCE}}, "payload.op", "no 'op'"),
    ("missing source", {"payload": {"op": "c", "after": {}}}, "payload.source", "missing"),
    ("null source", {"payload": {"op": "c", "source": None}}, "payload.source", "expected an object, got null"),
    ("missing db", {"payload": {"op": "c", "after": {}, "source": {}}}, "payload.source.db", "missing"),
    ("db is a number", {"payload": {"op": "c", "after": {}, "source": {"db": 1}}}, "payload.source.db", "string"),
    ("wrong value type", _row({"tiny": "x"}, TINY), "payload.after.tiny", "expected an integer"),
    ("float for an int", _row({"tiny": 1.5}, TINY), "payload.after.tiny", "expected an integer"),
    ("after is a list", _row([1], TINY), "payload.after", "expected an object"),
    ("insert without after", _row(None, TINY), "payload.after", "needs the new row"),
    ("delete without before", _row(None, TINY, op="d"), "payload.before", "needs the deleted row"),
    ("bad base64", _row({"b": "!!"}, BITS), "payload.after.b", ""),
    ("zone missing", _row({"ts": "2023-11-30T12:34:56"}, ZONED), "payload.after.ts", "without a zone"),
    ("not a timestamp", _row({"ts": "yesterday"}, ZONED), "payload.after.ts", ""),
    ("unknown set member", _row({"s": "a,z"}, ENUM_SET), "payload.after.s", "'z'"),
    ("set without members", _row({"s": "a,b"}, MEMBERLESS_SET), "schema.fields.after.fields[0]", "'allowed'"),
    ("empty set without members", _row({"s": ""}, MEMBERLESS_SET), "schema.fields.after.fields[0]", "'allowed'"),
    ("enum without members", _row({"e": "a"}, MEMBERLESS_ENUM), "schema.fields.after.fields[0]", "'allowed'"),
    ("null enum without members", _row({"e": None}, MEMBERLESS_ENUM), "schema.fields.after.fields[0]", "'allowed'"),
    (
        "enum members not text",
        _row({"e": "a"}, {**MEMBERLESS_ENUM, "parameters": {"allowed": 3}}),
        "schema.fields.after.fields[0]",
        "'allowed'",
    ),
    (
        "set members not text",
        _row({"s": None}, {**MEMBERLESS_SET, "parameters": {"allowed": ["a"]}}),
        "schema.fields.after.fields[0]",
        "'allowed'",
    ),
    # out of range: every one a DecodeError naming the column, never a bare OverflowError/ValueError
    ("date of 10**18 days", _row({"d": 10**18}, DATE), "payload.after.d", "outside the years"),
    ("date before year 1", _row({"d": -800_000}, DATE), "payload.after.d", "outside the years"),
    ("epoch us far out", _row({"t": 2**62}, MICRO_TS), "payload.after.t", "outside the years"),
    ("epoch us far before", _row({"t": -(2**63)}, MICRO_TS), "payload.after.t", "outside the years"),
    ("epoch ms far out", _row({"t": 10**17}, TIMESTAMP_MS), "payload.after.t", "outside the years"),
    ("tinyint beyond its column", _row({"tiny": 300}, TINYINT), "payload.after.tiny", "out of range"),
    ("unsigned below zero", _row({"u": -1}, INT_U), "payload.after.u", "out of range"),
    ("unsigned beyond its column", _row({"u": 2**32}, INT_U), "payload.after.u", "out of range"),
    ("decimal beyond any scale", _row({"p": 1e308}, DECIMAL_2), "payload.after.p", "does not fit scale 2"),
    ("variable scale far out", _row({"n": {"scale": 10**9, "value": "AQ=="}}, VSD), "payload.after.n", "scale"),
    ("schema fields not array", {"schema": {"fields": 3}, "payload": _row({}, TINY)["payload"]}, "schema.fields", ""),
    ("field schema without type", _row({"tiny": 1}, {"field": "tiny"}), "schema.fields.after.fields[0]", "type"),
    ("field entry not object", _row({"tiny": 1}, 7), "schema.fields.after.fields[0]", "expected an object"),  # type: ignore[arg-type]
    (
        "bad commit_ts",
        {"payload": {"op": "c", "after": {}, "source": {**SOURCE, "commit_ts": "5"}}},
        "payload.source.commit_ts",
        "TSO",
    ),
    ("watermark without ts", {"payload": {"op": "m", "source": {}}}, "payload.source.commit_ts", "commit_ts"),
    ("ddl not a string", {"payload": {"ddl": 3, "source": SOURCE}}, "payload.ddl", "expected a string"),
    ("tableChanges not array", {"payload": {"ddl": "X", "tableChanges": {}}}, "payload.tableChanges", "array"),
    ("tableChanges[0] not object", {"payload": {"ddl": "X", "tableChanges": [1]}}, "payload.tableChanges[0]", ""),
]


@pytest.mark.parametrize(("value", "field", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_values(value: bytes | dict[str, Any], field: str, reason: str) -> None:
    raw = value if isinstance(value, bytes) else orjson.dumps(value)
    decoder = get_codec("debezium").decoder()
    with pytest.raises(DecodeError) as info:
        decoder.decode(Message(value=raw, topic="orders", partition=3, offset=77))
    error = info.value
    assert error.field == field
    assert reason in error.reason
    assert (error.topic, error.partition, error.offset) == ("orders", 3, 77)
    assert str(error).startswith(f"debezium: message orders[3]@77 field {field}: ")


@pytest.mark.parametrize(
    ("mysql_type", "name", "field_schema", "text", "expected"),
    [
        (MySQLType.SET, "s", MEMBERLESS_SET, "b,a", ("a", "b")),
        (MySQLType.ENUM, "e", MEMBERLESS_ENUM, "b", "b"),
    ],
)
def test_a_user_schema_gives_the_members_a_field_schema_lacks(
    mysql_type: MySQLType, name: str, field_schema: Any, text: str, expected: Any
) -> None:
    user = TableSchema(
        database="d",
        table="t",
        columns=[Column(name=name, data_type=DataType(mysql_type=mysql_type, elements=("a", "b")))],
    )
    decoder = DebeziumDecoder(Options([o for o in OPTIONS if o.for_decoder], protocol="debezium"), schemas=[user])
    (event,) = decoder.decode(Message(value=orjson.dumps(_row({name: text}, field_schema))))
    assert isinstance(event, RowChange) and event.after == {name: expected}


def test_malformed_key() -> None:
    decoder = get_codec("debezium").decoder()
    value = orjson.dumps(_row({"tiny": 1}, TINY))
    for key, field in ((b"{nope", "key"), (b"[1]", "key.payload")):
        with pytest.raises(DecodeError) as info:
            decoder.decode(Message(value=value, key=key, topic="orders", partition=0, offset=1))
        assert info.value.field == field
