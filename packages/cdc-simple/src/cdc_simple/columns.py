"""Column values of ``data``/``old``: wire forms (JSON strings, Avro union branches) to typed values and back.

DML messages carry no types; every value is typed from the cached TableSchema of its schema version.
JSON: every value is a string (ENUM index, SET bitmask and BIT value as digits; binary as base64) except
TIMESTAMP, an object ``{location, value}`` whose value is local time in the IANA zone ``location``.
Avro: integers are ``long`` (BIGINT UNSIGNED the ``UnsignedBigint`` record holding the two's-complement
reinterpretation), FLOAT/DOUBLE ``float``/``double``, binary ``bytes``, TIMESTAMP the ``Timestamp`` record, the
rest ``string``; BIT is ``long`` in tiflow and a decimal ``string`` in the new ticdc (both accepted).

The row checksum (``[integrity]``) is computed from the wire values, as TiDB computes it from the datums: integers
as 8-byte little-endian uint64, floats as the 8-byte float64 bits, everything else length-prefixed bytes, TIMESTAMP
as its text converted to UTC; NULL contributes nothing.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import struct
import zlib
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

import orjson

from cdc_core.errors import ConfigError, EncodeError
from cdc_core.schema import TableSchema
from cdc_core.textual import (
    UTC,
    TextFormError,
    at_scale,
    enum_index,
    enum_name,
    float32_value,
    format_datetime,
    format_text,
    format_timestamp,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_json,
    parse_text,
    parse_time,
    resolve_zone,
    set_bits,
    set_names,
    zone_name,
)
from cdc_core.types import DataType, LogicalType, MySQLType
from cdc_core.values import RowImage, Value, ZeroTemporal
from cdc_simple.fields import fail
from cdc_simple.names import AVRO_TIMESTAMP, AVRO_UNSIGNED_BIGINT, PROTOCOL

_U64: Final = (1 << 64) - 1
_PLAIN_INTS: Final = frozenset({LogicalType.INT, LogicalType.YEAR, LogicalType.BIT})
_INTEGRAL: Final = frozenset({LogicalType.INT, LogicalType.YEAR, LogicalType.ENUM, LogicalType.SET, LogicalType.BIT})


@lru_cache(maxsize=256)
def zone(name: str) -> dt.tzinfo:
    """The zone of a TIMESTAMP ``location`` (cached: one per changefeed in practice)."""
    return resolve_zone(name)


def _int(raw: Any, path: str) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            pass
    raise fail(f"expected an integer (digits), got {raw!r:.60}", path)


def _timestamp_parts(raw: Any, path: str) -> tuple[str, str]:
    if isinstance(raw, tuple) and len(raw) == 2 and raw[0] == AVRO_TIMESTAMP:
        raw = raw[1]
    if isinstance(raw, Mapping):
        location, value = raw.get("location"), raw.get("value")
        if isinstance(location, str) and isinstance(value, str):
            return location, value
    raise fail("expected a TIMESTAMP object {location, value}", path)


def _typed(raw: Any, t: DataType, path: str) -> Value:
    """One wire value of either encoding (never None) to its typed value."""
    logical = t.logical
    try:
        if logical is LogicalType.TIMESTAMP:
            location, text = _timestamp_parts(raw, path)
            try:
                where = zone(location)
            except ConfigError as exc:
                raise fail(f"unknown TIMESTAMP location {location!r}", path) from exc
            return parse_text(text, t, where)
        if logical in _INTEGRAL:
            if isinstance(raw, tuple) and len(raw) == 2 and raw[0] == AVRO_UNSIGNED_BIGINT:
                inner = raw[1].get("value") if isinstance(raw[1], Mapping) else None
                return _int(inner, path) & _U64
            number = _int(raw, path)
            if logical is LogicalType.ENUM:
                return enum_name(number, t)
            if logical is LogicalType.SET:
                return set_names(number & _U64, t)
            if logical is LogicalType.BIT or (t.unsigned and number < 0):
                return number & _U64
            return number
        if logical is LogicalType.BYTES:
            if isinstance(raw, bytes):
                return raw
            if isinstance(raw, str):
                return base64.b64decode(raw, validate=True)
            raise fail(f"expected base64 text or bytes, got {type(raw).__name__}", path)
        if logical in (LogicalType.FLOAT, LogicalType.DOUBLE) and isinstance(raw, float):
            return float32_value(raw) if logical is LogicalType.FLOAT else raw
        if isinstance(raw, str):
            return parse_text(raw, t)
    except (TextFormError, binascii.Error, OverflowError) as exc:
        raise fail(f"{raw!r:.60} is not a {t.type_text()} value: {exc}", path) from exc
    raise fail(f"unexpected {type(raw).__name__} value for a {t.type_text()} column", path)


# ---------------------------------------------------------------------------------------------- checksum


def _length_prefixed(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _float_bits(value: float) -> bytes:
    return struct.pack("<d", 0.0 if math.isnan(value) or math.isinf(value) else value)


def _utc_text(location: str, text: str) -> str:
    naive = parse_datetime(text)
    if isinstance(naive, ZeroTemporal):
        return text
    digits = len(text.rsplit(".", 1)[1]) if "." in text else 0
    return format_datetime(naive.replace(tzinfo=zone(location)).astimezone(UTC).replace(tzinfo=None), digits)


def checksum_bytes(raw: Any, t: DataType, path: str) -> bytes:
    """What one non-NULL wire value contributes to the row's CRC-32."""
    logical = t.logical
    if isinstance(raw, tuple) and len(raw) == 2 and not isinstance(raw[1], Mapping):
        raw = raw[1]  # the encoder's ("long", 7) union notation
    try:
        if logical in _INTEGRAL:
            if isinstance(raw, tuple):
                raw = raw[1].get("value") if isinstance(raw[1], Mapping) else raw
            return struct.pack("<Q", _int(raw, path) & _U64)
        if logical is LogicalType.FLOAT:
            value = float32_value(float(raw))
            return _float_bits(value)
        if logical is LogicalType.DOUBLE:
            return _float_bits(float(raw))
        if logical is LogicalType.TIMESTAMP:
            location, text = _timestamp_parts(raw, path)
            return _length_prefixed(_utc_text(location, text).encode())
        if logical is LogicalType.BYTES:
            data = raw if isinstance(raw, bytes) else base64.b64decode(raw, validate=True)
            return _length_prefixed(data)
        if isinstance(raw, str):
            return _length_prefixed(raw.encode("utf-8", "surrogatepass"))
    except (TextFormError, ValueError, TypeError, OverflowError, ConfigError) as exc:
        raise fail(f"cannot checksum {raw!r:.60}: {exc}", path) from exc
    raise fail(f"cannot checksum a {type(raw).__name__} value", path)


def crc32(schema: TableSchema, image: Mapping[str, Any], path: str) -> int:
    """CRC-32/IEEE of a wire row image over the columns in schema order (0 for no image)."""
    crc = 0
    for column in schema.columns:
        raw = image.get(column.name)
        if raw is not None:
            crc = zlib.crc32(checksum_bytes(raw, column.data_type, f"{path}.{column.name}"), crc)
    return crc


# ------------------------------------------------------------------------------------------------ reader


def read_image(
    schema: TableSchema,
    image: Mapping[str, Any],
    path: str,
    same_as: tuple[Mapping[str, Any], RowImage] | None = None,
) -> RowImage:
    """A wire row image typed by ``schema``, in schema column order; unknown columns are an error.

    ``same_as`` is another wire image of the same message and its typed form: a column whose wire value is
    equal there reuses the typed value (an UPDATE's old image mostly repeats the new one).
    """
    readers = _readers(schema)
    if len(image) > len(readers) or not readers.keys() >= image.keys():
        unknown = sorted(set(image) - set(readers))
        raise fail(f"column {unknown[0]!r} is not in {schema.qualified_name} version {schema.version}", path)
    row: RowImage = {}
    if same_as is None:
        for name, reader in readers.items():
            raw = image.get(name, _ABSENT)
            if raw is not _ABSENT:  # absent: a virtual generated column
                row[name] = None if raw is None else reader(raw, path)
        return row
    other_raw, other_typed = same_as
    for name, reader in readers.items():
        raw = image.get(name, _ABSENT)
        if raw is _ABSENT:
            continue
        if raw is None:
            row[name] = None
        elif name in other_typed and other_raw.get(name) == raw and type(other_typed[name]) not in _MUTABLE:
            row[name] = other_typed[name]  # immutable values only: the two images must not share a document
        else:
            row[name] = reader(raw, path)
    return row


Reader = Callable[[Any, str], Value]
_ABSENT: Final = object()
_MUTABLE: Final = frozenset({dict, list})


def _reader(name: str, t: DataType) -> Reader:
    """A converter for one column, with a fast path for the common wire form (a plain string)."""
    logical = t.logical

    def general(raw: Any, path: str) -> Value:
        return _typed(raw, t, f"{path}.{name}")

    if logical is LogicalType.STRING:

        def text(raw: Any, path: str) -> Value:
            return raw if type(raw) is str else general(raw, path)

        return text
    if logical in (LogicalType.INT, LogicalType.YEAR) and not (t.unsigned and t.mysql_type is MySQLType.BIGINT):

        def integer(raw: Any, path: str) -> Value:
            if type(raw) is str and raw.isdigit():
                return int(raw)
            if type(raw) is int and (raw >= 0 or not t.unsigned):
                return raw  # Avro long
            return general(raw, path)

        return integer
    if logical is LogicalType.DOUBLE:

        def double(raw: Any, path: str) -> Value:
            if type(raw) is float:
                return raw
            return general(raw, path)

        return double
    parse = _TEXT_PARSERS.get(logical)
    if parse is not None:
        parser = parse

        def textual(raw: Any, path: str) -> Value:
            if type(raw) is float and logical is LogicalType.FLOAT:
                return float32_value(raw)  # Avro float: a float32, as its shortest digits
            if type(raw) is int and raw >= 0 and logical in (LogicalType.ENUM, LogicalType.SET):
                return enum_name(raw, t) if logical is LogicalType.ENUM else set_names(raw, t)
            if type(raw) is str:
                try:
                    return parser(raw, t)
                except (TextFormError, ValueError, ArithmeticError):
                    pass  # the general path reports it with the field path
            return general(raw, path)

        return textual
    return general


def _float32_text(text: str, _t: DataType) -> float:
    return float32_value(float(text))


def _enum_text(text: str, t: DataType) -> Value:
    return enum_name(int(text), t) if text.isdigit() else _typed(text, t, "")


def _set_text(text: str, t: DataType) -> Value:
    return set_names(int(text), t) if text.isdigit() else _typed(text, t, "")


def _json_document(text: str) -> Value:
    """TiDB's JSON text; orjson when it can (it refuses integers past 64 bits, which the stdlib parser keeps)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return parse_json(text)


_TEXT_PARSERS: Final[Mapping[LogicalType, Callable[[str, DataType], Value]]] = {
    LogicalType.FLOAT: _float32_text,
    LogicalType.DECIMAL: lambda text, t: at_scale(parse_decimal(text), t.decimal),
    LogicalType.DATE: lambda text, _t: parse_date(text),
    LogicalType.DATETIME: lambda text, _t: parse_datetime(text),
    LogicalType.TIME: lambda text, _t: parse_time(text),
    LogicalType.ENUM: _enum_text,
    LogicalType.SET: _set_text,
    LogicalType.JSON: lambda text, _t: _json_document(text),
    LogicalType.BYTES: lambda text, _t: base64.b64decode(text, validate=True),
}


_READERS: dict[int, tuple[TableSchema, dict[str, Reader]]] = {}


def _readers(schema: TableSchema) -> dict[str, Reader]:
    entry = _READERS.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    if len(_READERS) > 4096:
        _READERS.clear()
    readers = {c.name: _reader(c.name, c.data_type) for c in schema.columns}
    _READERS[id(schema)] = (schema, readers)
    return readers


_TYPES: dict[int, tuple[TableSchema, dict[str, DataType]]] = {}


def _types(schema: TableSchema) -> dict[str, DataType]:
    """Column name -> type, memoized per schema object (hashing a whole schema per row would cost more)."""
    entry = _TYPES.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    if len(_TYPES) > 4096:
        _TYPES.clear()
    types = {c.name: c.data_type for c in schema.columns}
    _TYPES[id(schema)] = (schema, types)
    return types


# ------------------------------------------------------------------------------------------------ writer


def _signed64(value: int) -> int:
    value &= _U64
    return value - (1 << 64) if value >= 1 << 63 else value


def _json_value(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    logical = t.logical
    if logical is LogicalType.STRING and type(value) is str:
        return value
    if logical in _PLAIN_INTS and type(value) is int:
        return str(value)
    if logical is LogicalType.TIMESTAMP:
        return {"location": location, "value": format_timestamp(value, t.fsp, where)}
    if logical is LogicalType.BYTES:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TextFormError(f"expected bytes, got {type(value).__name__}")
        return base64.b64encode(bytes(value)).decode("ascii")
    return format_text(value, t, where)


def _avro_value(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    logical = t.logical
    if logical in (LogicalType.INT, LogicalType.YEAR):
        if t.mysql_type is MySQLType.BIGINT and t.unsigned:
            return (AVRO_UNSIGNED_BIGINT, {"value": _signed64(int(value))})
        return ("long", int(value))
    if logical is LogicalType.ENUM:
        return ("long", enum_index(value, t))
    if logical is LogicalType.SET:
        return ("long", set_bits(value, t))
    if logical is LogicalType.BIT:
        return ("long", _signed64(int(value)))
    if logical is LogicalType.FLOAT:
        return ("float", float(value))
    if logical is LogicalType.DOUBLE:
        return ("double", float(value))
    if logical is LogicalType.BYTES:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TextFormError(f"expected bytes, got {type(value).__name__}")
        return ("bytes", bytes(value))
    if logical is LogicalType.TIMESTAMP:
        return (AVRO_TIMESTAMP, {"location": location, "value": format_timestamp(value, t.fsp, where)})
    return ("string", format_text(value, t, where))


ValueWriter = Callable[[Value, DataType, dt.tzinfo, str], Any]
WRITERS: Final[Mapping[str, ValueWriter]] = {"json": _json_value, "avro": _avro_value}


class ImageWriter:
    """Typed row images to wire images of one encoding; TIMESTAMPs rendered in ``time_zone``."""

    def __init__(self, encoding: str, time_zone: str) -> None:
        self.write_value = WRITERS[encoding]
        self.zone = resolve_zone(time_zone)
        self.location = zone_name(self.zone)
        self.sort_keys = encoding == "json"  # Go's encoding/json sorts map keys

    def write(
        self,
        schema: TableSchema,
        image: Mapping[str, Value],
        columns: tuple[str, ...] | None = None,
        same_as: tuple[Mapping[str, Value], Mapping[str, Any]] | None = None,
    ) -> Any:
        """The wire image; ``same_as`` (another typed image and its wire form) lets equal values share their text."""
        out: dict[str, Any] = {}
        other_typed, other_wire = same_as if same_as is not None else ({}, {})
        types = _types(schema)
        names = sorted(image) if self.sort_keys else list(image)
        for name in names:
            if columns is not None and name not in columns:
                continue
            t = types.get(name)
            if t is None:
                raise EncodeError(
                    PROTOCOL, "column is not in the table schema", table=schema.qualified_name, field=name
                )
            value = image[name]
            if name in other_wire and type(value) is type(other_typed.get(name)) and other_typed[name] == value:
                out[name] = other_wire[name]
                continue
            try:
                out[name] = None if value is None else self.write_value(value, t, self.zone, self.location)
            except (TextFormError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                raise EncodeError(PROTOCOL, str(exc), table=schema.qualified_name, field=name) from exc
        return out
