"""Bad input of every kind fails with a typed error naming the message coordinates and the field."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import fastavro
import pytest

from cdc_core.codec import Decoder
from cdc_core.errors import DecodeError, LimitExceededError
from cdc_core.events import Watermark
from cdc_core.message import Message
from cdc_simple import CODEC, avro


def _at(value: bytes) -> Message:
    return Message(value=value, topic="orders", partition=2, offset=41)


@pytest.fixture
def primed(spec_messages: dict[str, bytes], make_decoder: Callable[..., Decoder]) -> Decoder:
    """A JSON decoder that knows the spec's table (both versions of the ALTER)."""
    decoder = make_decoder()
    decoder.decode(Message(value=spec_messages["ALTER"]))
    return decoder


def _insert(spec_messages: dict[str, bytes], **changes: Any) -> bytes:
    doc = json.loads(spec_messages["INSERT"])
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return json.dumps(doc).encode()


CASES: list[tuple[str, Any, str | None, str]] = [
    ("not json", b"{not json", None, "not a JSON document"),
    ("array", b"[1, 2]", None, "expected a JSON object"),
    ("no type", {"version": 1, "commitTs": 1}, "type", "missing"),
    ("unknown type", {"version": 1, "type": "UPSERT", "commitTs": 1}, "type", "unknown message type 'UPSERT'"),
    ("version 2", {"version": 2, "type": "WATERMARK", "commitTs": 1}, "version", "unsupported protocol version"),
    ("watermark without ts", {"version": 1, "type": "WATERMARK"}, "commitTs", "expected an integer"),
    ("huge ts", {"version": 1, "type": "WATERMARK", "commitTs": 2**65}, "commitTs", "expected an integer"),
    ("bootstrap without schema", {"version": 1, "type": "BOOTSTRAP", "commitTs": 0}, "tableSchema", "without"),
    (
        "unknown mysqlType",
        {
            "version": 1,
            "type": "BOOTSTRAP",
            "tableSchema": {
                "schema": "d",
                "table": "t",
                "tableID": 1,
                "version": 1,
                "columns": [{"name": "c", "dataType": {"mysqlType": "geometry"}, "nullable": True}],
                "indexes": [],
            },
        },
        "tableSchema.columns[0].dataType.mysqlType",
        "unknown mysqlType 'geometry'",
    ),
    (
        "index on a missing column",
        {
            "version": 1,
            "type": "CREATE",
            "sql": "x",
            "commitTs": 1,
            "tableSchema": {
                "schema": "d",
                "table": "t",
                "columns": [],
                "indexes": [{"name": "k", "unique": True, "primary": True, "nullable": False, "columns": ["c"]}],
            },
        },
        "tableSchema",
        "unknown columns",
    ),
]


@pytest.mark.parametrize(("value", "field", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_messages(value: Any, field: str | None, reason: str, make_decoder: Callable[..., Decoder]) -> None:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    with pytest.raises(DecodeError) as caught:
        make_decoder().decode(_at(raw))
    error = caught.value
    assert (error.topic, error.partition, error.offset) == ("orders", 2, 41)
    assert error.field == field
    assert reason in error.reason
    assert "orders[2]@41" in str(error)


ROW_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("int column not digits", {"data": {"id": "one", "age": "1", "name": "x", "score": "1"}}, "data.id", "integer"),
    ("float column not a number", {"data": {"id": "1", "score": "fast"}}, "data.score", "not a float"),
    ("float beyond FLOAT", {"data": {"id": "1", "score": 1e40}}, "data.score", "out of the FLOAT range"),
    ("float text beyond FLOAT", {"data": {"id": "1", "score": "3.5e38"}}, "data.score", "out of the FLOAT range"),
    ("unknown column", {"data": {"id": "1", "ghost": "1"}}, "data", "column 'ghost'"),
    ("data not an object", {"data": ["1"]}, "data", "expected an object"),
    ("insert without data", {"data": None}, "data", "INSERT without data"),
    ("database not a string", {"database": 5}, "database", "expected a string"),
    ("number where text belongs", {"data": {"id": "1", "name": 5}}, "data.name", "unexpected int"),
]


@pytest.mark.parametrize(("changes", "field", "reason"), [c[1:] for c in ROW_CASES], ids=[c[0] for c in ROW_CASES])
def test_malformed_rows(
    changes: dict[str, Any], field: str, reason: str, primed: Decoder, spec_messages: dict[str, bytes]
) -> None:
    with pytest.raises(DecodeError) as caught:
        primed.decode(_at(_insert(spec_messages, **changes)))
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert caught.value.offset == 41


def test_update_without_old_and_bad_binary(primed: Decoder, spec_messages: dict[str, bytes]) -> None:
    update = json.loads(spec_messages["UPDATE"])
    del update["old"]
    with pytest.raises(DecodeError, match="UPDATE without old"):
        primed.decode(_at(json.dumps(update).encode()))


def test_bad_timestamp_location(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    schema = {
        "schema": "d",
        "table": "t",
        "tableID": 1,
        "version": 3,
        "columns": [
            {"name": "ts", "dataType": {"mysqlType": "timestamp"}, "nullable": True, "default": None},
            {"name": "b", "dataType": {"mysqlType": "varbinary", "length": 4}, "nullable": True, "default": None},
        ],
        "indexes": [],
    }
    decoder.decode(_at(json.dumps({"version": 1, "type": "BOOTSTRAP", "tableSchema": schema}).encode()))
    row = {"version": 1, "database": "d", "table": "t", "type": "INSERT", "commitTs": 5, "schemaVersion": 3}
    bad_zone = {**row, "data": {"ts": {"location": "Mars/Olympus", "value": "2024-01-01 00:00:00"}}}
    with pytest.raises(DecodeError, match="unknown TIMESTAMP location") as caught:
        decoder.decode(_at(json.dumps(bad_zone).encode()))
    assert caught.value.field == "data.ts"
    with pytest.raises(DecodeError, match="TIMESTAMP object"):
        decoder.decode(_at(json.dumps({**row, "data": {"ts": "2024-01-01 00:00:00"}}).encode()))
    with pytest.raises(DecodeError) as caught:
        decoder.decode(_at(json.dumps({**row, "data": {"b": "not base64!"}}).encode()))
    assert caught.value.field == "data.b"


def test_too_deeply_nested_json(make_decoder: Callable[..., Decoder]) -> None:
    with pytest.raises(DecodeError, match="nested deeper"):
        make_decoder().decode(_at(b'{"type":' + b"[" * 500 + b"]" * 500 + b"}"))


def _avro_decoder() -> Decoder:
    return CODEC.decoder({"encoding-format": "avro"})


def test_avro_datum_of_the_wrong_branch() -> None:
    out = io.BytesIO()
    watermark = {"version": 1, "commitTs": 5, "buildTs": 6}
    fastavro.schemaless_writer(out, avro.SCHEMA, ("com.pingcap.simple.avro.Watermark", watermark))
    assert out.getvalue()[:1] == b"\x0a"  # union branch 5, not 11
    with pytest.raises(DecodeError, match=re.escape("union branch com.pingcap.simple.avro.Watermark")) as caught:
        _avro_decoder().decode(_at(out.getvalue()))
    assert caught.value.offset == 41


def test_avro_payload_that_does_not_match_its_message_type() -> None:
    out = io.BytesIO()
    payload = ("com.pingcap.simple.avro.Watermark", {"version": 1, "commitTs": 5, "buildTs": 6})
    fastavro.schemaless_writer(
        out, avro.SCHEMA, ("com.pingcap.simple.avro.Message", {"type": "DML", "payload": payload})
    )
    with pytest.raises(DecodeError, match=re.escape("type DML carries a com.pingcap.simple.avro.Watermark payload")):
        _avro_decoder().decode(_at(out.getvalue()))


@pytest.mark.parametrize(
    "value",
    [b"\x16", b"\x16\x06\x06\x02", b"\x30\x00", b"\xff" * 12, b'{"version":1}'],
    ids=["truncated", "truncated-dml", "branch-out-of-range", "garbage", "json-to-avro"],
)
def test_avro_garbage(value: bytes) -> None:
    with pytest.raises(DecodeError, match="Avro"):
        _avro_decoder().decode(_at(value))


def test_avro_trailing_bytes() -> None:
    (message,) = CODEC.encoder({"encoding-format": "avro"}).encode(_watermark())
    with pytest.raises(DecodeError, match="bytes left"):
        _avro_decoder().decode(_at((message.value or b"") + b"\x00"))


def _watermark() -> Watermark:
    return Watermark(ts=10)


def test_corrupt_compressed_values() -> None:
    with pytest.raises(DecodeError, match="lz4"):
        CODEC.decoder({"large-message-handle-compression": "lz4"}).decode(_at(b"\x04\x22\x4d\x18garbage"))
    with pytest.raises((DecodeError, LimitExceededError)):
        CODEC.decoder({"large-message-handle-compression": "snappy"}).decode(_at(b"\xff\xff\xff\xff\x0fxx"))


def test_tombstones_decode_to_nothing(make_decoder: Callable[..., Decoder]) -> None:
    assert make_decoder().decode(Message(value=None)) == []
    assert make_decoder().decode(Message(value=b"")) == []
