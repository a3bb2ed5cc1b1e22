"""Every column type through Simple's JSON and Avro rows, with TiCDC's row checksum written and verified: the
typed values read back are the row's, the JSON wire text is TiDB's, and a changed value fails the checksum."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.errors import CdcError
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.textual import UTC
from cdc_testing.strategies import kitchen_sink_schema

SCHEMA = kitchen_sink_schema(database="shop", table="sink")
ROW: dict[str, Any] = {
    "id": 7,
    "c_tinyint": -128,
    "c_tinyint_u": 255,
    "c_smallint": -32768,
    "c_smallint_u": 65535,
    "c_mediumint": -8388608,
    "c_mediumint_u": 16777215,
    "c_int": -2147483648,
    "c_int_u": 4294967295,
    "c_bigint": -9223372036854775808,
    "c_bigint_u": 18446744073709551615,
    "c_float": 9.9,
    "c_double": 0.1,
    "c_decimal": Decimal("12.3400"),
    "c_decimal_wide": Decimal("1234567890123456789012345678.0123456789"),
    "c_decimal_int": Decimal("-12345678901234567890"),
    "c_date": dt.date(2024, 2, 29),
    "c_datetime": dt.datetime(2024, 2, 29, 1, 2, 3),
    "c_datetime_3": dt.datetime(2024, 2, 29, 1, 2, 3, 456000),
    "c_datetime_6": dt.datetime(2024, 2, 29, 1, 2, 3, 456789),
    "c_timestamp": dt.datetime(2024, 1, 1, 16, 0, 0, tzinfo=UTC),
    "c_timestamp_6": dt.datetime(2024, 1, 1, 16, 0, 0, 123456, tzinfo=UTC),
    "c_time": dt.timedelta(hours=-838, minutes=-59, seconds=-59),
    "c_time_3": dt.timedelta(hours=12, minutes=3, seconds=4, microseconds=500000),
    "c_year": 2024,
    "c_char": "héllo",
    "c_varchar": "a ' \" \\ ,",
    "c_text": "line\nbreak",
    "c_binary": b"\x00\x01\xff" + bytes(5),
    "c_varbinary": b"\x80\x81",
    "c_blob": bytes(range(20)),
    "c_enum": "blue",
    "c_set": ("x", "z"),
    "c_bit_1": 1,
    "c_bit_12": 4095,
    "c_bit_64": (1 << 64) - 1,
    "c_json": {"k": [1, "two", None], "n": 12345678901234567890},
}
OPTIONS = {"integrity-check-level": "correctness"}


def _messages(encoding: str) -> list[Message]:
    event = RowChange(op=Op.UPDATE, database="shop", table="sink", before={**ROW, "c_int": 1}, after=ROW,
                      commit_ts=1 << 20, schema=SCHEMA, table_id=3, schema_version=1)  # fmt: skip
    return get_codec("simple").encoder({"encoding-format": encoding, **OPTIONS}).encode(event)


def _decode(encoding: str, value: bytes) -> RowChange:
    decoder = get_codec("simple").decoder({"encoding-format": encoding, **OPTIONS})
    decoder.prime(SCHEMA)  # type: ignore[attr-defined]
    (event,) = decoder.decode(Message(value=value, topic="t", partition=0, offset=1))
    assert isinstance(event, RowChange)
    return event


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_every_column_type_reads_back_with_its_checksum_verified(encoding: str) -> None:
    event = _decode(encoding, _messages(encoding)[-1].value or b"")
    assert event.after == ROW
    assert event.before == {**ROW, "c_int": 1}
    assert event.after["c_decimal"].as_tuple().exponent == -4
    assert event.after["c_timestamp_6"].utcoffset() == dt.timedelta(0)


def test_json_row_text_is_tidbs() -> None:
    doc = json.loads(_messages("json")[-1].value or b"")
    data = doc["data"]
    assert data["c_bigint_u"] == "18446744073709551615"
    assert data["c_float"] == "9.9"
    assert data["c_decimal"] == "12.3400"
    assert data["c_datetime_3"] == "2024-02-29 01:02:03.456"
    assert data["c_time"] == "-838:59:59"
    assert data["c_enum"] == "3"  # the index
    assert data["c_set"] == "5"  # the bitmask
    assert data["c_bit_64"] == "18446744073709551615"
    assert data["c_binary"] == "AAH/AAAAAAA="
    assert data["c_timestamp"] == {"location": "UTC", "value": "2024-01-01 16:00:00"}
    assert data["c_json"] == '{"k": [1, "two", null], "n": 12345678901234567890}'
    assert isinstance(doc["checksum"]["current"], int)


@pytest.mark.parametrize(
    ("column", "text"),
    [("c_int", "-2147483647"), ("c_float", "9.8"), ("c_date", "2024-02-28"), ("c_blob", "AAE="), ("c_set", "4")],
)
def test_a_changed_value_fails_the_row_checksum(column: str, text: str) -> None:
    doc = json.loads(_messages("json")[-1].value or b"")
    doc["data"][column] = text
    with pytest.raises(CdcError, match="checksum mismatch"):
        _decode("json", json.dumps(doc).encode())
