"""The messages real Debezium 3.5 connectors wrote (tests/captures/, see its README) decode to what they mean.

Each file is decoded with the options its connector settings call for: ``binary.handling.mode`` is told to
the decoder (a hex string is often valid base64 too, so it cannot be guessed from the text).
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core import canonical
from cdc_core.events import Event, LogicalMessage, RowChange
from cdc_core.messagelines import read_lines
from cdc_core.registry import get_codec

CAPTURES = Path(__file__).parent / "captures"
# The decoder options each schema-carrying capture needs (its connector's binary.handling.mode when that is
# a text form other than base64); the schemaless MariaDB files also need a table schema and are covered by
# the integration tests.
OPTIONS: dict[str, dict[str, str]] = {
    "mdb-precise": {},
    "mdb-numeric": {"binary.handling.mode": "hex"},
    "mdb-string": {},
    "mdb-double": {},
    "pg-precise": {},
    "pg-numeric": {"binary.handling.mode": "hex"},
    "pg-string": {},
    "pg-double": {},
    "pg-schemaless": {"decimal.handling.mode": "string"},
}


def decode_capture(name: str, options: dict[str, Any] | None = None) -> list[Event]:
    decoder = get_codec("debezium").decoder(OPTIONS[name] if options is None else options)
    events: list[Event] = []
    with (CAPTURES / f"{name}.jsonl").open("rb") as stream:
        for _, message in read_lines(stream, source=name):
            events.extend(decoder.decode(message))
    return events


def rows(events: list[Event], table: str, key: int) -> list[RowChange]:
    return [e for e in events if isinstance(e, RowChange) and e.table == table and e.image.get("id") == key]


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_every_captured_message_decodes(name: str) -> None:
    assert decode_capture(name)


@pytest.mark.parametrize(("name", "expected"), [("pg-string", Decimal("NaN")), ("pg-double", math.nan)])
def test_postgres_numeric_nan(name: str, expected: Any) -> None:
    """``UPDATE types SET t_numeric = 'NaN' WHERE id = 2``: Debezium writes ``"NAN"`` in string mode and the
    JsonConverter ``"NaN"`` for the double NaN in double mode (``precise`` has no form for it and writes null)."""
    update = next(e for e in rows(decode_capture(name), "types", 2) if e.before is not None)
    value, before = update.after["t_numeric"], update.before["t_numeric"]
    assert type(value) is type(expected) and type(before) is type(expected)
    assert value.is_nan() if isinstance(value, Decimal) else math.isnan(value)
    assert before == (Decimal("3.14159265358979323846264338327950288") if name == "pg-string" else math.pi)
    if isinstance(value, Decimal):  # canonical JSON writes and reads the NaN back
        back = canonical.loads(canonical.dumps(update), schema=update.schema)
        assert isinstance(back, RowChange) and back.after["t_numeric"].is_nan()


def test_hex_binary_mode_is_read_as_hex() -> None:
    """``binary.handling.mode=hex``: bytea/VARBINARY and a logical message's content are hex text."""
    mdb = rows(decode_capture("mdb-numeric"), "types", 2)
    assert mdb[0].after["t_varbinary"] == bytes.fromhex("DEADBEEF00")
    pg = decode_capture("pg-numeric")
    assert [e.content for e in pg if isinstance(e, LogicalMessage)] == [b"transactional message", b"\x00\xff"]
    assert rows(pg, "types", 2)[0].after["t_bytea"] == bytes.fromhex("00ff0102")


def test_hex_content_read_as_base64_is_an_error_not_other_bytes() -> None:
    """Without the option, DEADBEEF00 is not base64: a typed error naming the field, never wrong bytes."""
    from cdc_core.errors import DecodeError

    with pytest.raises(DecodeError, match="t_varbinary"):
        decode_capture("mdb-numeric", {})


def test_propagated_postgres_bytea_and_money_are_bytes_and_decimals() -> None:
    """``column.propagate.source.type`` names BYTEA and MONEY, which base64 and string modes send as text."""
    (insert, *_) = rows(decode_capture("pg-string"), "types", 2)
    assert insert.after["t_bytea"] == b"\x00\xff\x01\x02"
    assert insert.after["t_money"] == Decimal("1234.56")
    (plain, *_) = rows(decode_capture("pg-double"), "types", 2)  # no source types: the wire's text and double
    assert plain.after["t_bytea"] == "AP8BAg=="
    assert plain.after["t_money"] == 1234.56
