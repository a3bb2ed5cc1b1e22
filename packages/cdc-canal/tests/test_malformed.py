"""Malformed messages get a `DecodeError` naming the message coordinates, the field and the reason."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from cdc_core.errors import ConfigError, DecodeError
from cdc_core.message import Message
from cdc_core.registry import get_codec

GOOD: dict[str, Any] = {
    "id": 0,
    "database": "shop",
    "table": "orders",
    "pkNames": ["id"],
    "isDdl": False,
    "type": "UPDATE",
    "es": 1,
    "ts": 2,
    "sql": "",
    "sqlType": {"id": 4, "qty": 4, "b": 2004},
    "mysqlType": {"id": "int", "qty": "int unsigned", "b": "varbinary"},
    "old": [{"qty": "1"}],
    "data": [{"id": "1", "qty": "2", "b": "x"}],
    "_tidb": {"commitTs": 1 << 20},
}


def _decode(value: bytes) -> list[Any]:
    message = Message(value=value, topic="orders", partition=3, offset=42)
    return get_codec("canal-json").decoder().decode(message)


def _error(document: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        _decode(json.dumps(document).encode())  # stdlib: orjson cannot write 2**64
    error = info.value
    assert (error.topic, error.partition, error.offset) == ("orders", 3, 42)
    assert "orders[3]@42" in str(error)
    return error


def test_the_base_message_is_valid() -> None:
    (event,) = _decode(orjson.dumps(GOOD))
    assert event.before == {"id": 1, "qty": 1, "b": b"x"}


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"data": {"id": "1"}}, "data", "list"),
        ({"data": "[]"}, "data", "list"),
        ({"data": []}, "data", "non-empty"),
        ({"data": ["row"]}, "data[0]", "object"),
        ({"data": [{"id": "one", "qty": "2", "b": "x"}]}, "data[0].id", "not an integer"),
        ({"data": [{"id": 1, "qty": "2", "b": "x"}]}, "data[0].id", "string or null"),
        ({"data": [{"id": "1", "qty": "2", "b": "\u0100"}]}, "data[0].b", "U+00FF"),
        (
            {"mysqlType": {"id": "mystery", "qty": "int", "b": "blob"}, "sqlType": {"qty": 4, "b": 2004}},
            "mysqlType.id",
            "unknown column type",
        ),
        ({"mysqlType": {"qty": "int", "b": "blob"}, "sqlType": {"id": 9999}}, "mysqlType.id", "no mysqlType"),
        ({"mysqlType": {"id": 4, "qty": "int", "b": "blob"}}, "mysqlType.id", "must be a string"),
        ({"mysqlType": []}, "mysqlType", "object"),
        ({"old": None}, "old", "UPDATE needs old"),
        ({"old": [{"nope": "1"}]}, "old[0]", "missing from data"),
        ({"old": [["1"]]}, "old[0]", "object"),
        ({"pkNames": "id"}, "pkNames", "list"),
        ({"type": "UPSERT"}, "type", "unknown event type"),
        ({"type": 1}, "type", "type"),
        ({"isDdl": "false"}, "isDdl", "boolean"),
        ({"type": "CREATE"}, "isDdl", "DDL type"),
        ({"database": None}, "database", "database"),
        ({"table": ""}, "table", "table"),
        ({"_tidb": {"commitTs": -1}}, "_tidb.commitTs", "unsigned 64-bit"),
        ({"_tidb": {"commitTs": "5"}}, "_tidb.commitTs", "unsigned 64-bit"),
        ({"_tidb": {"commitTs": 1 << 64}}, "_tidb.commitTs", "unsigned 64-bit"),
        ({"_tidb": {"commitTs": 1, "onlyHandleKey": "yes"}}, "_tidb.onlyHandleKey", "boolean"),
        ({"_tidb": {"commitTs": 1, "claimCheckLocation": 5}}, "_tidb.claimCheckLocation", "string"),
        ({"_tidb": [1]}, "_tidb", "object"),
    ],
)
def test_typed_errors(change: dict[str, Any], field: str, reason: str) -> None:
    error = _error({**GOOD, **change})
    assert error.field == field
    assert reason in error.reason


def test_type_value_mismatches_per_type() -> None:
    for mysql_type, value in [
        # out of range: DecodeError naming the value's field, never a bare OverflowError/ValueError
        ("tinyint", "300"),
        ("tinyint(3) unsigned", "-1"),
        ("int unsigned", "4294967296"),
        ("bigint", "9223372036854775808"),
        ("bigint unsigned", "18446744073709551616"),
        ("bit(3)", "8"),
        ("date", "9999-12-32"),
        ("datetime", "10000-01-01 00:00:00"),
        ("datetime(6)", "2024-02-30 00:00:00.000000"),
        ("time", "839:00:00:00"),
        ("decimal(10,2)", "1e999999"),
        ("float", "3.5e38"),
        ("date", "2020-13-01"),
        ("datetime", "yesterday"),
        ("time", "25h"),
        ("decimal", "1,5"),
        ("float", "1e39"),
        ("json", "{"),
        ("enum('a')", "2"),
        ("set('a')", "b"),
        ("set", "a,b"),
        ("bit", "-"),
    ]:
        document = {
            **GOOD,
            "type": "INSERT",
            "old": None,
            "mysqlType": {"id": "int", "v": mysql_type},
            "sqlType": {},
            "data": [{"id": "1", "v": value}],
        }
        assert _error(document).field == "data[0].v", mysql_type


def test_watermark_and_ddl_shapes() -> None:
    watermark = {**GOOD, "type": "TIDB_WATERMARK", "_tidb": {}}
    assert _error(watermark).field == "_tidb.watermarkTs"
    ddl = {**GOOD, "isDdl": True, "type": "CREATE", "sql": None}
    assert _error(ddl).field == "sql"
    assert _error({**ddl, "type": "MERGE", "sql": "x"}).field == "type"


@pytest.mark.parametrize("raw", [b"{", b"[]", b'"x"', b"\xff\xfe", b"null", b"1e999"])
def test_not_a_json_object(raw: bytes) -> None:
    with pytest.raises(DecodeError, match=r"orders\[3\]@42"):
        _decode(raw)


def test_tombstones_carry_nothing() -> None:
    assert _decode(b"") == []


def test_bad_filter_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"database\.include"):
        get_codec("canal-json").decoder({"database.include": "("})
    with pytest.raises(ConfigError, match="time zone"):
        get_codec("canal-json").decoder({"time-zone": "Mars/Base"})
