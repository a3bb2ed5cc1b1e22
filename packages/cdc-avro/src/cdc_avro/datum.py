"""Typed column values to Avro data and back (reference 4.3).

Writers and readers are chosen once per column (by its type and the handling modes) and then applied to
every row, so the per-value work is one function call.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from cdc_avro.tidbtypes import BigintUnsignedMode, DecimalMode
from cdc_core.textual import (
    WIDE_DECIMAL,
    TextFormError,
    at_scale,
    enum_name,
    float32_value,
    format_decimal,
    format_text,
    keeping_digits,
    parse_decimal,
    parse_text,
    set_names,
)
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType
from cdc_core.values import EnumIndex, SetBits, Value

Writer = Callable[[Value], Any]
Reader = Callable[[Any], Value]

_TWO_63 = 1 << 63
_TWO_64 = 1 << 64


def decimal_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's complement (0 -> ``00``; a positive value with the top bit set gets ``00``)."""
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def unscaled_decimal(value: Decimal, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale``; refuses values with more fraction digits."""
    shifted = value.scaleb(scale, context=WIDE_DECIMAL)  # exact up to MySQL's 65 digits
    if shifted != shifted.to_integral_value():
        raise TextFormError(f"{value} has more than {scale} fraction digits")
    return int(shifted)


def bit_bytes(value: int) -> bytes:
    """BIT value as big-endian bytes, leading zero bytes trimmed, at least one byte (0 -> ``00``)."""
    if value < 0:
        raise TextFormError(f"BIT value {value} is negative")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _int(value: Value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TextFormError(f"expected an integer, got {type(value).__name__}")
    return value


def _unsigned_long(value: Value) -> int:
    number = _int(value)
    if not 0 <= number < _TWO_64:
        raise TextFormError(f"{number} is out of the BIGINT UNSIGNED range")
    return number - _TWO_64 if number >= _TWO_63 else number


def _float(value: Value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise TextFormError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _bytes(value: Value) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TextFormError(f"expected bytes, got {type(value).__name__}")
    return bytes(value)


def _text(value: Value) -> str:
    if not isinstance(value, str):
        raise TextFormError(f"expected text, got {type(value).__name__}")
    return value


def _enum_writer(data_type: DataType) -> Writer:
    elements = data_type.elements or ()

    def write(value: Value) -> str:
        name = enum_name(value.index, data_type) if isinstance(value, EnumIndex) else value
        if not isinstance(name, str) or name not in elements:
            # TiCDC's encoder fails on MySQL's invalid ENUM value too: Avro carries names only.
            raise TextFormError(f"{value!r} is not a member of {data_type.type_text()}")
        return name

    return write


def _set_writer(data_type: DataType) -> Writer:
    elements = data_type.elements or ()

    def write(value: Value) -> str:
        names = set_names(value.bits, data_type) if isinstance(value, SetBits) else value
        if not isinstance(names, tuple | list) or any(n not in elements for n in names):
            raise TextFormError(f"{value!r} is not a subset of {data_type.type_text()}")
        return ",".join(names)

    return write


class _WriterFor(LogicalTypeVisitor[Writer]):
    """The writer of one column's values into its Avro field (TiCDC's handling modes)."""

    def __init__(self, decimal_mode: DecimalMode, bigint_mode: BigintUnsignedMode, zone: dt.tzinfo) -> None:
        self.decimal_mode = decimal_mode
        self.bigint_mode = bigint_mode
        self.zone = zone

    def visit_int(self, data_type: DataType) -> Writer:
        if data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned:
            if self.bigint_mode is BigintUnsignedMode.STRING:
                return lambda v: str(_int(v))
            return _unsigned_long
        return _int

    def visit_year(self, data_type: DataType) -> Writer:
        return _int

    def visit_float(self, data_type: DataType) -> Writer:
        return _float

    def visit_double(self, data_type: DataType) -> Writer:
        return _float

    def visit_decimal(self, data_type: DataType) -> Writer:
        if self.decimal_mode is DecimalMode.PRECISE:
            scale = data_type.scale  # known: the encoder completes an unknown one first (`UnknownParameters`)
            return lambda v: decimal_bytes(unscaled_decimal(Decimal(v), scale))
        text_scale = data_type.known_scale  # unknown: each value with its own digits
        return lambda v: format_decimal(Decimal(v), text_scale)

    def visit_bit(self, data_type: DataType) -> Writer:
        return lambda v: bit_bytes(_int(v))

    def visit_bytes(self, data_type: DataType) -> Writer:
        return _bytes

    def visit_string(self, data_type: DataType) -> Writer:
        return _text

    def visit_enum(self, data_type: DataType) -> Writer:
        return _enum_writer(data_type)

    def visit_set(self, data_type: DataType) -> Writer:
        return _set_writer(data_type)

    def visit_date(self, data_type: DataType) -> Writer:
        return _date_writer(data_type)

    def visit_datetime(self, data_type: DataType) -> Writer:
        return _datetime_writer(data_type)

    def visit_timestamp(self, data_type: DataType) -> Writer:
        return _timestamp_writer(data_type, self.zone)

    def visit_time(self, data_type: DataType) -> Writer:
        return self._text(data_type)

    def visit_json(self, data_type: DataType) -> Writer:
        return self._text(data_type)

    def visit_vector(self, data_type: DataType) -> Writer:
        return self._text(data_type)

    def visit_geometry(self, data_type: DataType) -> Writer:
        return self._text(data_type)  # no text form: an EncodeError (the schema generator refuses it first)

    def visit_array(self, data_type: DataType) -> Writer:
        return self._text(data_type)  # as GEOMETRY

    def _text(self, data_type: DataType) -> Writer:
        return lambda v: format_text(v, data_type)  # TiDB's text (no zone: TIMESTAMP has its own writer)


def writer_for(
    data_type: DataType, primitive: str, decimal_mode: DecimalMode, bigint_mode: BigintUnsignedMode, zone: dt.tzinfo
) -> Writer:
    return _WriterFor(decimal_mode, bigint_mode, zone).visit(data_type)


# DATE/DATETIME/TIMESTAMP text through the stdlib's C ``isoformat`` (exactly fsp fraction digits, the TIMESTAMP
# in the server zone); zero dates and anything unusual go through cdc-core's formatter.


def _date_writer(data_type: DataType) -> Writer:
    def write(value: Value) -> str:
        if type(value) is dt.date:
            return str(value.isoformat())
        return format_text(value, data_type)

    return write


def _width(fsp: int | None) -> int | None:
    """How much of ``isoformat(" ", "microseconds")`` a known fsp keeps (None: the fsp is unknown)."""
    return None if fsp is None else 19 + (fsp + 1 if fsp else 0)


def _datetime_writer(data_type: DataType) -> Writer:
    width = _width(data_type.known_fsp)

    def write(value: Value) -> str:
        if width is not None and type(value) is dt.datetime and value.tzinfo is None:
            return str(value.isoformat(" ", "microseconds"))[:width]
        return format_text(value, data_type)

    return write


def _timestamp_writer(data_type: DataType, zone: dt.tzinfo) -> Writer:
    width = _width(data_type.known_fsp)

    def write(value: Value) -> str:
        if width is not None and type(value) is dt.datetime and value.tzinfo is not None:
            local = value.astimezone(zone).replace(tzinfo=None)
            return str(local.isoformat(" ", "microseconds"))[:width]
        return format_text(value, data_type, zone)

    return write


def _set_reader(data_type: DataType) -> Reader:
    elements = data_type.elements or ()

    def read(text: Any) -> Value:
        if text == "":
            return ()
        parts = tuple(str(text).split(","))
        if all(p in elements for p in parts):
            return parts
        # Members may contain commas (TiCDC's own decoder breaks here): match members in declared order.
        out: list[str] = []
        rest = str(text)
        for member in elements:
            if rest == member:
                out.append(member)
                rest = ""
                break
            if rest.startswith(member + ","):
                out.append(member)
                rest = rest[len(member) + 1 :]
        if rest:
            raise TextFormError(f"{text!r} is not a subset of {data_type.type_text()}")
        return tuple(out)

    return read


def _widen_unsigned(datum: Any) -> int:
    number = int(datum)
    return number + _TWO_64 if number < 0 else number


def _float32_value(v: Any) -> float:
    return float32_value(float(v))


class _ReaderFor(LogicalTypeVisitor[Reader]):
    """Reader of one field's datum; ``primitive`` is the writer schema's Avro type of the field."""

    def __init__(self, primitive: str, zone: dt.tzinfo) -> None:
        self.primitive = primitive
        self.zone = zone

    def visit_int(self, data_type: DataType) -> Reader:
        if self.primitive != "string" and data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned:
            return _widen_unsigned
        return int

    def visit_year(self, data_type: DataType) -> Reader:
        return int

    def visit_float(self, data_type: DataType) -> Reader:
        return _float32_value

    def visit_double(self, data_type: DataType) -> Reader:
        return float

    def visit_decimal(self, data_type: DataType) -> Reader:
        scale = data_type.decimal
        if self.primitive == "string":
            return lambda text: at_scale(parse_decimal(text), scale)
        return lambda datum: at_scale(_read_decimal(datum), scale)

    def visit_bit(self, data_type: DataType) -> Reader:
        return lambda b: int.from_bytes(b, "big")

    def visit_bytes(self, data_type: DataType) -> Reader:
        return bytes

    def visit_string(self, data_type: DataType) -> Reader:
        return str

    def visit_enum(self, data_type: DataType) -> Reader:
        return str

    def visit_set(self, data_type: DataType) -> Reader:
        return _set_reader(data_type)

    def visit_date(self, data_type: DataType) -> Reader:
        return lambda s: _fast_date(s) or parse_text(s, data_type)

    # TiCDC's writer schema has no fsp: DATETIME, TIMESTAMP and TIME values keep the digits their text had
    # (`keeping_digits`), zero dates their whole text.

    def visit_datetime(self, data_type: DataType) -> Reader:
        return _digits(data_type, lambda s: _fast_datetime(s) or parse_text(s, data_type))

    def visit_timestamp(self, data_type: DataType) -> Reader:
        zone = self.zone

        def read_timestamp(text: Any) -> Value:
            naive = _fast_datetime(text)
            if naive is not None:
                return naive.replace(tzinfo=zone)
            return parse_text(text, data_type, zone)

        return _digits(data_type, read_timestamp)

    def visit_time(self, data_type: DataType) -> Reader:
        return _digits(data_type, self._text(data_type))

    def visit_json(self, data_type: DataType) -> Reader:
        return self._text(data_type)

    def visit_vector(self, data_type: DataType) -> Reader:
        return self._text(data_type)

    def visit_geometry(self, data_type: DataType) -> Reader:
        return self._text(data_type)  # no text form: a DecodeError, as before

    def visit_array(self, data_type: DataType) -> Reader:
        return self._text(data_type)

    def _text(self, data_type: DataType) -> Reader:
        return lambda s: parse_text(s, data_type)  # no zone: TIMESTAMP has its own reader


def reader_for(data_type: DataType, primitive: str, zone: dt.tzinfo) -> Reader:
    """Reader of one field's datum; ``primitive`` is the writer schema's Avro type of the field."""
    return _ReaderFor(primitive, zone).visit(data_type)


# Fast paths for the exact shapes TiDB prints (``YYYY-MM-DD`` and ``YYYY-MM-DD hh:mm:ss[.f]``), through the
# C parsers of the standard library; anything else (zero dates, odd text) goes to cdc-core's strict parsers.


def _fast_date(text: Any) -> dt.date | None:
    if isinstance(text, str) and len(text) == 10 and text[4] == "-" and text[7] == "-":
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return None
    return None


_DATETIME_SHAPE: Final = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?", re.ASCII)


def _fast_datetime(text: Any) -> dt.datetime | None:
    # exactly TiDB's shape: fromisoformat also reads week dates, "T", zones, comma fractions and basic forms
    if isinstance(text, str) and _DATETIME_SHAPE.fullmatch(text):
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            return None
    return None


def _digits(data_type: DataType, read: Reader) -> Reader:
    return read if data_type.known_fsp is not None else keeping_digits(read)


def _read_decimal(datum: Any) -> Decimal:
    if not isinstance(datum, Decimal):
        raise TextFormError(f"expected a decimal, got {type(datum).__name__}")
    return datum
