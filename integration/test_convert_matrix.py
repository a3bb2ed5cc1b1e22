"""``cdc convert`` between every pair of protocols carries the values: decode(convert(x)) is decode(x), but for the
losses docs/protocols lists per target (and every value a target changes is reported as a ValueChangedWarning).

x is a changefeed TiCDC would write in the source protocol (hypothesis-generated rows of a table with every column
type, zero dates included); decode(x) is what a consumer of the source reads, with what the source itself loses
(Canal's ENUM/SET names, Debezium's double DECIMALs). Converting it to the target and decoding that must give the
same values, except:

* to Debezium: DECIMAL as a double; zero dates as null; ENUM/SET members whose names the source did not carry
  as ``""``;
* to Canal-JSON (TiCDC's plain ``mysqlType``): ENUM/SET as their index and bitmask, the names lost;
* to TiCDC Avro: updates without their before image, deletes with their handle key only; ENUM/SET members without
  names cannot be written at all (an error of the message, not a changed value).
"""

from __future__ import annotations

import datetime as dt
import itertools
import warnings
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.errors import EncodeError
from cdc_core.events import Event, Op, RowChange
from cdc_core.fitting import ValueChangedWarning
from cdc_core.schema import Column, TableSchema
from cdc_core.textual import enum_index, set_bits
from cdc_core.types import LogicalType
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal
from cdc_testing.roundtrip import FLAVOURS, Flavour, decode, encode, encoder_of
from cdc_testing.strategies import kitchen_sink_schema, row_changes

# One flavour per protocol, each with the options that carry the most (commit ts, tidb_type).
MATRIX = [f for f in FLAVOURS if f.name in ("canal-json", "debezium-tidb", "simple-json", "avro-precise")]
PAIRS = list(itertools.product(MATRIX, MATRIX))
SCHEMA = kitchen_sink_schema(version=448020391014875100)


@pytest.fixture
def registry_url(request: pytest.FixtureRequest) -> Any:
    def url(*flavours: Flavour) -> dict[str, str]:
        if any(f.protocol == "avro" for f in flavours):
            return {"schema-registry": request.getfixturevalue("schema_registry").url}
        return {}

    return url


def _names_unknown(value: Any) -> bool:
    return isinstance(value, EnumIndex | SetBits)


def survives(target: str, column: Column, value: Any) -> Any:
    """What a value decoded from the source reads back as from ``target`` (the documented losses)."""
    logical = column.data_type.logical
    if value is None:
        return None
    if value == SetBits(0) and target in ("debezium", "avro"):
        return ()  # the empty set needs no member names: the targets that write names read it as ()
    if target == "debezium":
        if logical is LogicalType.DECIMAL:
            return float(value)  # compared as the double it became
        if isinstance(value, ZeroTemporal):
            return None if logical is not LogicalType.TIMESTAMP else dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        if _names_unknown(value):
            return "" if logical is LogicalType.ENUM else ()
    if target == "canal-json" and not _names_unknown(value):
        if logical is LogicalType.ENUM and value != "":
            return EnumIndex(enum_index(value, column.data_type))
        if logical is LogicalType.SET:
            return SetBits(set_bits(value, column.data_type))  # the empty set too: bitmask 0, no names to say so
    return value


def _comparable(target: str, column: Column, value: Any) -> Any:
    if target == "debezium" and column.data_type.logical is LogicalType.DECIMAL and value is not None:
        return float(value)
    return value


Row = tuple[Op, dict[str, Any] | None, dict[str, Any] | None]


def _rows(schema: TableSchema, events: list[Event], value: Callable[[Column, Any], Any]) -> list[Row]:
    """(op, before, after) of every row event, each value of ``schema``'s columns through ``value``."""

    def image(values: dict[str, Any] | None) -> dict[str, Any] | None:
        if values is None:
            return None
        return {c.name: value(c, values[c.name]) for c in schema.columns if c.name in values}

    return [(e.op, image(e.before), image(e.after)) for e in events if isinstance(e, RowChange)]


def expected_rows(target: str, schema: TableSchema, events: list[Event]) -> list[Row]:
    """The rows as ``target`` carries them: the values that survive, and Avro's form (no update before image,
    deletes by key)."""
    rows = _rows(schema, events, lambda column, value: survives(target, column, value))
    if target != "avro":
        return rows
    key = schema.handle_key
    return [
        (op, {k: before[k] for k in key} if op is Op.DELETE and before else None, after) for op, before, after in rows
    ]


def read_rows(target: str, schema: TableSchema, events: list[Event]) -> list[Row]:
    return _rows(schema, events, lambda column, value: _comparable(target, column, value))


def _changed_columns(target: str, schema: TableSchema, events: list[Event]) -> set[str]:
    """Columns whose values the target's encoder must change, and so report."""
    out: set[str] = set()
    for event in events:
        if not isinstance(event, RowChange):
            continue
        for values in (event.before, event.after):
            for column in schema.columns:
                value = (values or {}).get(column.name)
                if value is None or target != "debezium":
                    continue
                lost = survives(target, column, value) != _comparable(target, column, value)
                exact_double = column.data_type.logical is LogicalType.DECIMAL and Decimal(repr(float(value))) == value
                if lost or (column.data_type.logical is LogicalType.DECIMAL and not exact_double):
                    out.add(column.name)
    return out


def _changefeed() -> st.SearchStrategy[list[RowChange]]:
    rows = st.lists(row_changes(SCHEMA, zero_dates=True), min_size=1, max_size=5)
    return rows.map(lambda events: [attrs.evolve(e, commit_ts=448020391014875100 + n) for n, e in enumerate(events)])


def unconvertible(source: Flavour, target: Flavour, event: Event) -> str | None:
    """The error a target gives an event it has no form for (documented, like the losses), or None."""
    if not isinstance(event, RowChange):
        return None
    written = (event.after or {}).values()  # Avro writes the new image; a delete only its key (an integer here)
    nameless = any(isinstance(v, EnumIndex) or (isinstance(v, SetBits) and v.bits) for v in written)
    if target.protocol == "avro" and nameless:
        return r"is not a member|is not a subset"  # Avro writes ENUM/SET members by name (the empty set has none)
    if target.protocol in ("canal-json", "simple") and event.op is Op.UPDATE and event.before is None:
        return r"update without its before image"  # TiCDC Avro carries no old image, which both need
    if target.protocol == "canal-json" and event.commit_ts is None:
        return r"writes _tidb.commitTs but the event has none"  # a TiCDC Avro delete (a tombstone) has none
    return None


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{s.name}-to-{t.name}" for s, t in PAIRS])
def test_convert_carries_the_values(source: Flavour, target: Flavour, registry_url: Any) -> None:
    source = source.with_options(**registry_url(source))
    target = target.with_options(**registry_url(target))

    @settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(_changefeed())
    def check(changefeed: list[RowChange]) -> None:
        read = decode(source, encode(source, changefeed))  # decode(x)
        schema = next(e.schema for e in read if isinstance(e, RowChange) and e.schema is not None)
        encoder = encoder_of(target)
        converted, carried = [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ValueChangedWarning)
            for event in read:
                refused = unconvertible(source, target, event)
                if refused is not None:
                    with pytest.raises(EncodeError, match=refused):
                        encoder.encode(event)
                    continue
                converted += encoder.encode(event)
                carried.append(event)
        again = decode(target, converted)  # decode(convert(x))
        assert read_rows(target.protocol, schema, again) == expected_rows(target.protocol, schema, carried)
        reported = {w.message.field for w in caught if isinstance(w.message, ValueChangedWarning)}
        assert reported >= _changed_columns(target.protocol, schema, carried)

    check()
