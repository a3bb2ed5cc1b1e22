"""Typed values and column types to Canal-JSON's strings: values, ``mysqlType`` and ``sqlType``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Final

from cdc_core.textual import (
    TextFormError,
    enum_index,
    format_date,
    format_datetime,
    format_decimal,
    format_float32,
    format_float64,
    format_mysql_geometry,
    format_text,
    format_time,
    format_timestamp,
    set_bits,
)
from cdc_core.types import DataType, LogicalType, MySQLType, by_logical_type
from cdc_core.values import EnumIndex, SetBits, Value

Formatter = Callable[[Value], str]

_NO_UNSIGNED: Final = frozenset({MySQLType.BIT, MySQLType.YEAR})


def mysql_type_text(data_type: DataType, *, full: bool) -> str:
    """TiCDC's ``mysqlType``: the bare name (+ unsigned/zerofill), or with ``full`` the column definition.

    A parameter the event does not know is left out of the definition (``decimal``, ``datetime``), as the
    source left it out, rather than written as a default nobody declared.
    """
    t = data_type.mysql_type
    if full:
        if t is MySQLType.YEAR and data_type.length is not None:
            return f"year({data_type.length})"
        return data_type.type_text()
    text = t.value
    if data_type.unsigned and t not in _NO_UNSIGNED:
        text += " unsigned"
    if data_type.zerofill and t is not MySQLType.YEAR:
        text += " zerofill"
    return text


def make_formatter(data_type: DataType, zone: dt.tzinfo, *, member_names: bool) -> Formatter:
    """A function from a typed value to its wire string (raises TextFormError on a mismatch).

    ``member_names`` writes ENUM/SET as member names (official Canal flavour); otherwise the index and
    bitmask digits TiCDC writes.
    """
    return FORMATTERS[data_type.logical](data_type, zone, member_names)


def _int_text(data_type: DataType, zone: dt.tzinfo) -> Formatter:
    return lambda value: str(value) if type(value) is int else format_text(value, data_type, zone)


def _decimal_text(scale: int | None) -> Formatter:
    return lambda value: format_decimal(value if isinstance(value, Decimal) else Decimal(value), scale)


def _latin1(value: Value) -> str:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TextFormError(f"expected bytes, got {type(value).__name__}")
    return bytes(value).decode("latin-1")


def _text(value: Value) -> str:
    if not isinstance(value, str):
        raise TextFormError(f"expected text, got {type(value).__name__}")
    return value


def _enum_index(data_type: DataType) -> Formatter:
    def fmt(value: Value) -> str:
        if not isinstance(value, str | EnumIndex):
            raise TextFormError(f"expected an enum member, got {type(value).__name__}")
        return str(enum_index(value, data_type))

    return fmt


def _enum_names(data_type: DataType) -> Formatter:
    def fmt(value: Value) -> str:
        if isinstance(value, EnumIndex):
            return str(value.index)
        if not isinstance(value, str):
            raise TextFormError(f"expected an enum member, got {type(value).__name__}")
        enum_index(value, data_type)  # membership check
        return value

    return fmt


def _set_bits(data_type: DataType) -> Formatter:
    def fmt(value: Value) -> str:
        if not isinstance(value, tuple | list | SetBits):
            raise TextFormError(f"expected set members, got {type(value).__name__}")
        return str(set_bits(value, data_type))

    return fmt


def _set_names(data_type: DataType) -> Formatter:
    def fmt(value: Value) -> str:
        if isinstance(value, SetBits):
            return str(value.bits)
        if not isinstance(value, tuple | list):
            raise TextFormError(f"expected set members, got {type(value).__name__}")
        set_bits(value, data_type)  # membership check
        return ",".join(value)

    return fmt


def _geometry(value: Value) -> str:
    return format_mysql_geometry(value).decode("latin-1")  # as Canal prints MySQL's SRID + WKB bytes


def _no_array(value: Value) -> str:
    raise TextFormError("canal-json cannot carry ARRAY values (MySQL has no array type)")


FormatterFactory = Callable[[DataType, dt.tzinfo, bool], Formatter]

# One writer per logical type (the core text forms, without `format_text`'s per-value dispatch on the
# encoder's hot path); the completeness test keeps it total. An unknown scale or fsp (None) writes each
# value with its own digits.
FORMATTERS: Final[Mapping[LogicalType, FormatterFactory]] = by_logical_type(
    int=lambda t, z, names: _int_text(t, z),
    year=lambda t, z, names: _int_text(t, z),
    bit=lambda t, z, names: _int_text(t, z),
    float=lambda t, z, names: format_float32,
    double=lambda t, z, names: format_float64,
    decimal=lambda t, z, names: _decimal_text(t.known_scale),
    date=lambda t, z, names: format_date,
    datetime=lambda t, z, names: lambda value: format_datetime(value, t.known_fsp),
    timestamp=lambda t, z, names: lambda value: format_timestamp(value, t.known_fsp, z),
    time=lambda t, z, names: lambda value: format_time(value, t.known_fsp),
    string=lambda t, z, names: _text,
    bytes=lambda t, z, names: _latin1,
    enum=lambda t, z, names: _enum_names(t) if names else _enum_index(t),
    set=lambda t, z, names: _set_names(t) if names else _set_bits(t),
    json=lambda t, z, names: lambda value: format_text(value, t, z),
    vector=lambda t, z, names: lambda value: format_text(value, t, z),
    geometry=lambda t, z, names: _geometry,
    array=lambda t, z, names: _no_array,
)
