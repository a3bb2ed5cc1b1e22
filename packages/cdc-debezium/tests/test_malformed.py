"""Malformed input gets a `DecodeError` naming the message coordinates and the field, never a bare error."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cdc_core.errors import DecodeError
from cdc_core.message import Message
from cdc_core.registry import get_codec

SOURCE = {"db": "d", "table": "t", "commit_ts": 5}
TINY = {"type": "int16", "optional": True, "field": "tiny"}
BITS = {"type": "bytes", "optional": True, "name": "io.debezium.data.Bits", "parameters": {"length": "9"}, "field": "b"}
ZONED = {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "field": "ts"}
ENUM_SET = {"type": "string", "name": "io.debezium.data.EnumSet", "parameters": {"allowed": "a,b"}, "field": "s"}


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
    ("missing source", {"payload": {"op": "c", "after": {}}}, "payload.source", "expected an object, got null"),
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


def test_malformed_key() -> None:
    decoder = get_codec("debezium").decoder()
    value = orjson.dumps(_row({"tiny": 1}, TINY))
    for key, field in ((b"{nope", "key"), (b"[1]", "key.payload")):
        with pytest.raises(DecodeError) as info:
            decoder.decode(Message(value=value, key=key, topic="orders", partition=0, offset=1))
        assert info.value.field == field
