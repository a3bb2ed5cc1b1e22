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
import re
import struct
import zlib
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

import orjson

from cdc_core.errors import ConfigError, DecodeError, EncodeError
from cdc_core.fitting import FITTED, change_to_fit, notice_for
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
    fraction_digits,
    keeping_digits,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_json,
    parse_text,
    parse_time,
    resolve_zone,
    set_bits,
    set_names,
    zone_name,
)
from cdc_core.types import DataType, LogicalType, LogicalTypeVisitor, MySQLType, by_logical_type
from cdc_core.values import RowImage, Value, ZeroTemporal, with_fsp
from cdc_simple.fields import fail
from cdc_simple.names import AVRO_TIMESTAMP, AVRO_UNSIGNED_BIGINT, PROTOCOL

_U64: Final = (1 << 64) - 1


@lru_cache(maxsize=256)
def zone(name: str) -> dt.tzinfo:
    """The zone of a TIMESTAMP ``location`` (cached: one per changefeed in practice)."""
    return resolve_zone(name)


def _int(raw: Any, path: str) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and _is_integer_text(raw):
        return int(raw)
    raise fail(f"expected an integer (digits), got {raw!r:.60}", path)


def _is_integer_text(text: str) -> bool:
    """``[-]digits`` in ASCII: int() also reads "1_000", blanks and non-ASCII digits, which TiDB never writes."""
    return text.isascii() and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit()))


def _timestamp_parts(raw: Any, path: str) -> tuple[str, str]:
    if isinstance(raw, tuple) and len(raw) == 2 and raw[0] == AVRO_TIMESTAMP:
        raw = raw[1]
    if isinstance(raw, Mapping):
        location, value = raw.get("location"), raw.get("value")
        if isinstance(location, str) and isinstance(value, str):
            return location, value
    raise fail("expected a TIMESTAMP object {location, value}", path)


def _unsigned_record(raw: Any) -> bool:
    return isinstance(raw, tuple) and len(raw) == 2 and raw[0] == AVRO_UNSIGNED_BIGINT


def _record_value(raw: tuple[str, Any], path: str) -> int:
    inner = raw[1].get("value") if isinstance(raw[1], Mapping) else None
    return _int(inner, path) & _U64


def _typed_int(raw: Any, t: DataType, path: str) -> Value:
    if _unsigned_record(raw):
        return _record_value(raw, path)
    number = _int(raw, path)
    return number & _U64 if t.unsigned and number < 0 else number


def _typed_bit(raw: Any, t: DataType, path: str) -> Value:
    return _record_value(raw, path) if _unsigned_record(raw) else _int(raw, path) & _U64


def _typed_enum(raw: Any, t: DataType, path: str) -> Value:
    if _unsigned_record(raw):
        return _record_value(raw, path)
    index = _int(raw, path)
    if index < 0:  # an Avro long or "-1": ENUM indexes are 1-based, 0 is MySQL's invalid value
        raise fail(f"ENUM index {index} is negative", path)
    return enum_name(index, t)


def _typed_set(raw: Any, t: DataType, path: str) -> Value:
    return _record_value(raw, path) if _unsigned_record(raw) else set_names(_int(raw, path) & _U64, t)


def _typed_timestamp(raw: Any, t: DataType, path: str) -> Value:
    location, text = _timestamp_parts(raw, path)
    try:
        where = zone(location)
    except ConfigError as exc:
        raise fail(f"unknown TIMESTAMP location {location!r}", path) from exc
    value = parse_text(text, t, where)
    if t.known_fsp is None and isinstance(value, dt.datetime):  # Simple's Avro schema has no fsp: keep the digits
        return with_fsp(value, fraction_digits(text))
    return value


def _typed_bytes(raw: Any, t: DataType, path: str) -> Value:
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, str):
        return base64.b64decode(raw, validate=True)
    raise fail(f"expected base64 text or bytes, got {type(raw).__name__}", path)


def _typed_text(raw: Any, t: DataType, path: str) -> Value:
    if isinstance(raw, str):
        return parse_text(raw, t)
    raise fail(f"unexpected {type(raw).__name__} value for a {t.type_text()} column", path)


def _typed_float(raw: Any, t: DataType, path: str) -> Value:
    return float32_value(raw) if isinstance(raw, float) else _typed_text(raw, t, path)


def _typed_double(raw: Any, t: DataType, path: str) -> Value:
    return raw if isinstance(raw, float) else _typed_text(raw, t, path)


# One wire value of either encoding (JSON text, Avro datum) to its typed value, per logical type.
_TYPED: Final[Mapping[LogicalType, Callable[[Any, DataType, str], Value]]] = by_logical_type(
    int=_typed_int,
    year=_typed_int,
    bit=_typed_bit,
    enum=_typed_enum,
    set=_typed_set,
    float=_typed_float,
    double=_typed_double,
    decimal=_typed_text,
    date=_typed_text,
    datetime=_typed_text,
    timestamp=_typed_timestamp,
    time=_typed_text,
    string=_typed_text,
    bytes=_typed_bytes,
    json=_typed_text,
    vector=_typed_text,
    geometry=_typed_text,  # no text form: TiDB has no such column (the schema refuses it first)
    array=_typed_text,
)


def _typed(raw: Any, t: DataType, path: str) -> Value:
    """One wire value of either encoding (never None) to its typed value."""
    try:
        return _TYPED[t.logical](raw, t, path)
    except (TextFormError, binascii.Error, OverflowError) as exc:
        raise fail(f"{raw!r:.60} is not a {t.type_text()} value: {exc}", path) from exc


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


def _ck_integral(raw: Any, t: DataType, path: str) -> bytes:
    if isinstance(raw, tuple):
        raw = raw[1].get("value") if isinstance(raw[1], Mapping) else raw
    return struct.pack("<Q", _int(raw, path) & _U64)


def _ck_timestamp(raw: Any, t: DataType, path: str) -> bytes:
    location, text = _timestamp_parts(raw, path)
    return _length_prefixed(_utc_text(location, text).encode())


def _ck_bytes(raw: Any, t: DataType, path: str) -> bytes:
    return _length_prefixed(raw if isinstance(raw, bytes) else base64.b64decode(raw, validate=True))


def _ck_text(raw: Any, t: DataType, path: str) -> bytes:
    if isinstance(raw, str):
        return _length_prefixed(raw.encode("utf-8", "surrogatepass"))
    raise fail(f"cannot checksum a {type(raw).__name__} value", path)


# What one non-NULL wire value contributes to the row's CRC-32, per logical type.
_CHECKSUM: Final[Mapping[LogicalType, Callable[[Any, DataType, str], bytes]]] = by_logical_type(
    int=_ck_integral,
    year=_ck_integral,
    bit=_ck_integral,
    enum=_ck_integral,
    set=_ck_integral,
    float=lambda raw, t, path: _float_bits(float32_value(float(raw))),
    double=lambda raw, t, path: _float_bits(float(raw)),
    decimal=_ck_text,
    date=_ck_text,
    datetime=_ck_text,
    timestamp=_ck_timestamp,
    time=_ck_text,
    string=_ck_text,
    bytes=_ck_bytes,
    json=_ck_text,
    vector=_ck_text,
    geometry=_ck_text,
    array=_ck_text,
)


def checksum_bytes(raw: Any, t: DataType, path: str) -> bytes:
    """What one non-NULL wire value contributes to the row's CRC-32."""
    if isinstance(raw, tuple) and len(raw) == 2 and not isinstance(raw[1], Mapping):
        raw = raw[1]  # the encoder's ("long", 7) union notation
    try:
        return _CHECKSUM[t.logical](raw, t, path)
    except (TextFormError, ValueError, TypeError, OverflowError, ConfigError) as exc:
        if isinstance(exc, DecodeError):
            raise  # already positioned (a wire value of the wrong shape)
        raise fail(f"cannot checksum {raw!r:.60}: {exc}", path) from exc


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


def _general(name: str, t: DataType) -> Reader:
    def general(raw: Any, path: str) -> Value:
        return _typed(raw, t, f"{path}.{name}")

    return general


def _textual(
    general: Reader, t: DataType, parser: Callable[[str, DataType], Value], *, float_datum: bool = False
) -> Reader:
    """The common wire form (a string) through ``parser``; anything else, or a failure, through ``general``."""

    def textual(raw: Any, path: str) -> Value:
        if float_datum and type(raw) is float:
            try:
                return float32_value(raw)  # Avro float: a float32, as its shortest digits
            except TextFormError:
                pass  # beyond FLOAT (a JSON number): the general path reports it with the field path
        if type(raw) is str:
            try:
                return parser(raw, t)
            except (TextFormError, ValueError, ArithmeticError):
                pass  # the general path reports it with the field path
        return general(raw, path)

    return textual


def _indexed(general: Reader, t: DataType, parser: Callable[[str, DataType], Value], member: Any) -> Reader:
    """ENUM/SET: an Avro long (index or bitmask) to names, text through ``parser``."""
    text = _textual(general, t, parser)

    def indexed(raw: Any, path: str) -> Value:
        if type(raw) is int and raw >= 0:
            return member(raw, t)
        return text(raw, path)

    return indexed


class _ColumnReader(LogicalTypeVisitor[Reader]):
    """A converter for one column, with a fast path for the common wire form (a plain string)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_string(self, data_type: DataType) -> Reader:
        general = _general(self.name, data_type)

        def text(raw: Any, path: str) -> Value:
            return raw if type(raw) is str else general(raw, path)

        return text

    def visit_int(self, data_type: DataType) -> Reader:
        general = _general(self.name, data_type)
        if data_type.unsigned and data_type.mysql_type is MySQLType.BIGINT:
            return general
        unsigned = data_type.unsigned

        def integer(raw: Any, path: str) -> Value:
            if type(raw) is str and raw.isascii() and raw.isdigit():
                return int(raw)
            if type(raw) is int and (raw >= 0 or not unsigned):
                return raw  # Avro long
            return general(raw, path)

        return integer

    def visit_year(self, data_type: DataType) -> Reader:
        return self.visit_int(data_type)

    def visit_double(self, data_type: DataType) -> Reader:
        general = _general(self.name, data_type)

        def double(raw: Any, path: str) -> Value:
            if type(raw) is float:
                return raw
            return general(raw, path)

        return double

    def visit_float(self, data_type: DataType) -> Reader:
        return _textual(_general(self.name, data_type), data_type, _float32_text, float_datum=True)

    def visit_decimal(self, data_type: DataType) -> Reader:
        return _textual(
            _general(self.name, data_type), data_type, lambda text, t: at_scale(parse_decimal(text), t.decimal)
        )

    def visit_date(self, data_type: DataType) -> Reader:
        return _textual(_general(self.name, data_type), data_type, lambda text, _t: parse_date(text))

    def visit_datetime(self, data_type: DataType) -> Reader:
        return _textual(_general(self.name, data_type), data_type, _keeping(data_type, parse_datetime))

    def visit_time(self, data_type: DataType) -> Reader:
        return _textual(_general(self.name, data_type), data_type, _keeping(data_type, parse_time))

    def visit_enum(self, data_type: DataType) -> Reader:
        return _indexed(_general(self.name, data_type), data_type, _enum_text, enum_name)

    def visit_set(self, data_type: DataType) -> Reader:
        return _indexed(_general(self.name, data_type), data_type, _set_text, set_names)

    def visit_json(self, data_type: DataType) -> Reader:
        return _textual(_general(self.name, data_type), data_type, lambda text, _t: _json_document(text))

    def visit_bytes(self, data_type: DataType) -> Reader:
        decode: Callable[[str, DataType], Value] = lambda text, _t: base64.b64decode(text, validate=True)  # noqa: E731
        return _textual(_general(self.name, data_type), data_type, decode)

    def visit_timestamp(self, data_type: DataType) -> Reader:
        return _general(self.name, data_type)

    def visit_bit(self, data_type: DataType) -> Reader:
        return _general(self.name, data_type)

    def visit_vector(self, data_type: DataType) -> Reader:
        return _general(self.name, data_type)

    def visit_geometry(self, data_type: DataType) -> Reader:
        return _general(self.name, data_type)  # an error: TiDB has no such column (the schema refuses it first)

    def visit_array(self, data_type: DataType) -> Reader:
        return _general(self.name, data_type)  # as GEOMETRY


def _keeping(data_type: DataType, parse: Callable[[str], Value]) -> Callable[[str, DataType], Value]:
    """A temporal text parser; where the fsp is unknown (Simple's Avro schema leaves it out), values keep the
    digits their text had."""
    keep = parse if data_type.known_fsp is not None else keeping_digits(parse)
    return lambda text, _t: keep(text)


def _reader(name: str, t: DataType) -> Reader:
    return _ColumnReader(name).visit(t)


def _float32_text(text: str, _t: DataType) -> float:
    return float32_value(parse_float(text))  # not float(): it reads "1_000.5" and non-ASCII digits


def _enum_text(text: str, t: DataType) -> Value:
    return enum_name(int(text), t) if text.isascii() and text.isdigit() else _typed(text, t, "")


def _set_text(text: str, t: DataType) -> Value:
    return set_names(int(text), t) if text.isascii() and text.isdigit() else _typed(text, t, "")


_LONG_NUMBER: Final = re.compile(r"\d{19}")


def _json_document(text: str) -> Value:
    """TiDB's JSON text; orjson when it can (it turns integers past 64 bits into floats, so text with numbers
    that long goes to the exact stdlib parser, as do documents orjson refuses: it words the error)."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return parse_json(text)


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


def _bytes_of(value: Value) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TextFormError(f"expected bytes, got {type(value).__name__}")
    return bytes(value)


# format_text without the zone: it only matters for TIMESTAMP, which has writers of its own


def _json_text(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return format_text(value, t)


def _json_string(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return value if type(value) is str else format_text(value, t)


def _json_int(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return str(value) if type(value) is int else format_text(value, t)


def _json_timestamp(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return {"location": location, "value": format_timestamp(value, t.known_fsp, where)}


ValueWriter = Callable[[Value, DataType, dt.tzinfo, str], Any]
_JSON_VALUE: Final[Mapping[LogicalType, ValueWriter]] = by_logical_type(
    int=_json_int,
    year=_json_int,
    bit=_json_int,
    float=_json_text,
    double=_json_text,
    decimal=_json_text,
    date=_json_text,
    datetime=_json_text,
    timestamp=_json_timestamp,
    time=_json_text,
    string=_json_string,
    bytes=lambda value, t, where, location: base64.b64encode(_bytes_of(value)).decode("ascii"),
    enum=_json_text,
    set=_json_text,
    json=_json_text,
    vector=_json_text,
    geometry=_json_text,  # no text form: an EncodeError (the encoder refuses such columns first)
    array=_json_text,
)


def _json_value(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return _JSON_VALUE[t.logical](value, t, where, location)


def _avro_int(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    if t.mysql_type is MySQLType.BIGINT and t.unsigned:
        return (AVRO_UNSIGNED_BIGINT, {"value": _signed64(int(value))})
    return ("long", int(value))


def _avro_string(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return ("string", format_text(value, t))


_AVRO_VALUE: Final[Mapping[LogicalType, ValueWriter]] = by_logical_type(
    int=_avro_int,
    year=_avro_int,
    enum=lambda value, t, where, location: ("long", enum_index(value, t)),
    set=lambda value, t, where, location: ("long", set_bits(value, t)),
    bit=lambda value, t, where, location: ("long", _signed64(int(value))),
    float=lambda value, t, where, location: ("float", float(value)),
    double=lambda value, t, where, location: ("double", float(value)),
    bytes=lambda value, t, where, location: ("bytes", _bytes_of(value)),
    timestamp=lambda value, t, where, location: (
        AVRO_TIMESTAMP,
        {"location": location, "value": format_timestamp(value, t.known_fsp, where)},
    ),
    decimal=_avro_string,
    date=_avro_string,
    datetime=_avro_string,
    time=_avro_string,
    string=_avro_string,
    json=_avro_string,
    vector=_avro_string,
    geometry=_avro_string,
    array=_avro_string,
)


def _avro_value(value: Value, t: DataType, where: dt.tzinfo, location: str) -> Any:
    return _AVRO_VALUE[t.logical](value, t, where, location)


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
            if t.logical in FITTED:
                change = change_to_fit(value, t)
                if change is not None:
                    notice_for(PROTOCOL, schema.qualified_name, name)(*change)
        return out
