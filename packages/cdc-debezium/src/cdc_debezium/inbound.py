"""Column readers: from a field schema (or a user-supplied column type) to a converter of payload values.

A field schema gives the wire form (Kafka Connect type plus logical name); the column type comes from, in
order of preference, a user-supplied `TableSchema`, TiCDC's ``tidb_type``, or the wire form itself. The pair
picks one converter, so that the per-value work in the hot path is a single call.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Final

import attrs
import orjson

from cdc_core.errors import SchemaError
from cdc_core.schema import Column
from cdc_core.textual import (
    EPOCH_DATE,
    EPOCH_NAIVE,
    WIDE_DECIMAL,
    TextFormError,
    parse_json,
    parse_set_text,
    parse_vector,
    to_float32,
)
from cdc_core.types import DataType, LogicalType, MySQLType, parse_type_text
from cdc_core.values import Value
from cdc_debezium.names import Logical

Converter = Callable[[Any], Value]


class DecimalMode(StrEnum):
    PRECISE = "precise"
    STRING = "string"
    DOUBLE = "double"


class BinaryMode(StrEnum):
    BASE64 = "base64"
    BASE64_URL_SAFE = "base64-url-safe"
    HEX = "hex"
    BYTES = "bytes"


class TimePrecisionMode(StrEnum):
    ADAPTIVE_TIME_MICROSECONDS = "adaptive_time_microseconds"
    ADAPTIVE = "adaptive"
    CONNECT = "connect"


@attrs.frozen(kw_only=True)
class Modes:
    """The Debezium connector settings a schemaless stream was written with, and the zone for TIMESTAMPs."""

    decimal: DecimalMode = DecimalMode.DOUBLE
    binary: BinaryMode = BinaryMode.BASE64
    time_precision: TimePrecisionMode = TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS
    zone: dt.tzinfo = dt.UTC


class WireError(ValueError):
    """A payload value does not have the form its field schema announces."""


# ------------------------------------------------------------------------------------------ converters


def _int(v: Any) -> int:
    if type(v) is not int:
        raise WireError(f"expected an integer, got {_kind(v)}")
    return v


def _uint64(v: Any) -> int:
    if type(v) is not int:
        raise WireError(f"expected an integer, got {_kind(v)}")
    return v + (1 << 64) if v < 0 else v


def _bool_int(v: Any) -> int:
    if type(v) is bool:
        return int(v)
    return _int(v)


def _number(v: Any) -> float:
    if type(v) is float or type(v) is int or type(v) is Decimal:
        return float(v)
    raise WireError(f"expected a number, got {_kind(v)}")


def _float32(v: Any) -> float:
    return to_float32(_number(v))


def _string(v: Any) -> str:
    if type(v) is not str:
        raise WireError(f"expected a string, got {_kind(v)}")
    return v


def _kind(v: Any) -> str:
    return "null" if v is None else type(v).__name__


def _b64(v: Any) -> bytes:
    # strict a2b_base64 rejects what b64decode(validate=True) rejects, without its regex pass
    return binascii.a2b_base64(_string(v), strict_mode=True)


def _b64url(v: Any) -> bytes:
    return base64.urlsafe_b64decode(_string(v))


def _hex(v: Any) -> bytes:
    return bytes.fromhex(_string(v))


# Positional timedelta arguments (days, seconds, microseconds, milliseconds) and date ordinals: the keyword
# forms cost about twice as much, and these run once per temporal value.
_EPOCH_ORDINAL: Final = EPOCH_DATE.toordinal()


def _days(v: Any) -> dt.date:
    return dt.date.fromordinal(_EPOCH_ORDINAL + _int(v))


def _dt_ms(v: Any) -> dt.datetime:
    return EPOCH_NAIVE + dt.timedelta(0, 0, 0, _int(v))


def _dt_us(v: Any) -> dt.datetime:
    return EPOCH_NAIVE + dt.timedelta(0, 0, _int(v))


def _dt_ns(v: Any) -> dt.datetime:
    return EPOCH_NAIVE + dt.timedelta(0, 0, _int(v) // 1000)


def _time_ms(v: Any) -> dt.timedelta:
    return dt.timedelta(0, 0, 0, _int(v))


def _time_us(v: Any) -> dt.timedelta:
    return dt.timedelta(0, 0, _int(v))


def _time_ns(v: Any) -> dt.timedelta:
    return dt.timedelta(0, 0, _int(v) // 1000)


def _bits(v: Any) -> int:
    return int.from_bytes(_b64(v), "little")


_DIGIT_MASK: Final = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_INTEGER: Final = b"0" * 19


def _json(v: Any) -> Value:
    """orjson, unless the document has an integer orjson would turn into a float (or orjson refuses it)."""
    data = _string(v).encode("utf-8", "surrogatepass")
    if _LONG_INTEGER not in data.translate(_DIGIT_MASK):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN, lone surrogates...: the stdlib parser decides (and reports)
    return parse_json(v)


def _vector(v: Any) -> list[float]:
    return parse_vector(_string(v))


def _zoned(zone: dt.tzinfo) -> Converter:
    def convert(v: Any) -> dt.datetime:
        moment = dt.datetime.fromisoformat(_string(v))
        if moment.tzinfo is None:
            raise WireError(f"ZonedTimestamp without a zone: {v!r}")
        return moment.astimezone(zone)  # in the decoder's zone whatever offset the producer wrote

    return convert


def _quantizer(scale: int | None) -> Callable[[Decimal], Decimal]:
    if scale is None:
        return lambda d: d
    quantum = Decimal(1).scaleb(-scale)

    def quantize(d: Decimal) -> Decimal:
        try:
            exact = d.quantize(quantum, context=WIDE_DECIMAL)
        except InvalidOperation:
            return d
        return exact if exact == d else d

    return quantize


def _decimal_number(scale: int | None) -> Converter:
    quantize = _quantizer(scale)

    def convert(v: Any) -> Decimal:
        if type(v) is float:
            return quantize(Decimal(repr(v)))
        if type(v) is int or type(v) is Decimal:
            return quantize(Decimal(v))
        if type(v) is str:
            return quantize(_parse_decimal(v))
        raise WireError(f"expected a number, got {_kind(v)}")

    return convert


def _parse_decimal(text: str) -> Decimal:
    try:
        result = Decimal(text)
    except InvalidOperation as exc:
        raise WireError(f"not a decimal: {text!r}") from exc
    if not result.is_finite():
        raise WireError(f"not a finite decimal: {text!r}")
    return result


def _decimal_bytes(scale: int | None) -> Converter:
    if scale is None:
        raise SchemaError("a precise DECIMAL needs its scale (schema parameter or user TableSchema)")

    def convert(v: Any) -> Decimal:
        unscaled = int.from_bytes(_b64(v), "big", signed=True)
        return Decimal(unscaled).scaleb(-scale, context=WIDE_DECIMAL)

    return convert


def _decimal_variable(v: Any) -> Decimal:
    if type(v) is not dict:
        raise WireError(f"expected a {{scale, value}} object, got {_kind(v)}")
    scale = _int(v.get("scale"))
    unscaled = int.from_bytes(_b64(v.get("value")), "big", signed=True)
    return Decimal(unscaled).scaleb(-scale, context=WIDE_DECIMAL)


def _set(data_type: DataType) -> Converter:
    seen: dict[str, Value] = {}  # a SET column takes few distinct values: parse each once

    def convert(v: Any) -> Value:
        known = seen.get(v) if type(v) is str else None
        if known is not None:
            return known
        parsed = parse_set_text(_string(v), data_type)
        if len(seen) < _MEMO_LIMIT:
            seen[v] = parsed
        return parsed

    return convert


_MEMO_LIMIT: Final = 256


def _raw(v: Any) -> Value:
    """Untyped (no schema anywhere): JSON scalars as they are, booleans as BIT-style integers."""
    if type(v) is bool:
        return int(v)
    if type(v) is Decimal:
        return v if v != v.to_integral_value() or "." in str(v) else int(v)
    return v


# --------------------------------------------------------------------------------------- type inference

_CONNECT_INT: Final[Mapping[str, MySQLType]] = {
    "int8": MySQLType.TINYINT,
    "int16": MySQLType.SMALLINT,
    "int32": MySQLType.INT,
    "int64": MySQLType.BIGINT,
}


def _allowed(parameters: Mapping[str, Any] | None, *, escaped: bool) -> tuple[str, ...]:
    text = (parameters or {}).get("allowed")
    if not isinstance(text, str) or text == "":
        return ()
    if not escaped:
        return tuple(text.split(","))
    out: list[str] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == ",":
            buf.append(",")
            i += 2
            continue
        if ch == ",":
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    out.append("".join(buf))
    return tuple(out)


def _int_param(parameters: Mapping[str, Any] | None, key: str) -> int | None:
    raw = (parameters or {}).get(key)
    if raw is None:
        return None
    try:
        return int(raw)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"parameter {key} is not an integer: {raw!r}") from exc


def type_from_wire(kind: str, name: str | None, parameters: Mapping[str, Any] | None) -> DataType:
    """The best column type a field schema alone describes (no ``tidb_type``, no user schema)."""
    d = DataType
    if name is not None:
        if name in (Logical.DATE, Logical.CONNECT_DATE):
            return d(mysql_type=MySQLType.DATE)
        if name in (Logical.TIMESTAMP, Logical.CONNECT_TIMESTAMP):
            return d(mysql_type=MySQLType.DATETIME, decimal=3)
        if name in (Logical.MICRO_TIMESTAMP, Logical.NANO_TIMESTAMP):
            return d(mysql_type=MySQLType.DATETIME, decimal=6)
        if name == Logical.ZONED_TIMESTAMP:
            return d(mysql_type=MySQLType.TIMESTAMP)
        if name in (Logical.TIME, Logical.CONNECT_TIME):
            return d(mysql_type=MySQLType.TIME, decimal=3)
        if name in (Logical.MICRO_TIME, Logical.NANO_TIME):
            return d(mysql_type=MySQLType.TIME, decimal=6)
        if name == Logical.YEAR:
            return d(mysql_type=MySQLType.YEAR)
        if name == Logical.BITS:
            return d(mysql_type=MySQLType.BIT, length=_int_param(parameters, "length"), unsigned=True)
        if name == Logical.ENUM:
            return d(mysql_type=MySQLType.ENUM, elements=_allowed(parameters, escaped=True))
        if name == Logical.ENUM_SET:
            return d(mysql_type=MySQLType.SET, elements=_allowed(parameters, escaped=False))
        if name == Logical.JSON:
            return d(mysql_type=MySQLType.JSON)
        if name == Logical.VECTOR:
            return d(mysql_type=MySQLType.VECTOR)
        if name == Logical.CONNECT_DECIMAL:
            precision = _int_param(parameters, "connect.decimal.precision")
            return d(mysql_type=MySQLType.DECIMAL, length=precision, decimal=_int_param(parameters, "scale"))
        if name == Logical.VARIABLE_DECIMAL:
            return d(mysql_type=MySQLType.DECIMAL)
    if kind in _CONNECT_INT:
        return d(mysql_type=_CONNECT_INT[kind])
    if kind == "boolean":
        return d(mysql_type=MySQLType.BIT, length=1, unsigned=True)
    if kind == "float":
        return d(mysql_type=MySQLType.FLOAT)
    if kind == "double":
        return d(mysql_type=MySQLType.DOUBLE)
    if kind == "string":
        return d(mysql_type=MySQLType.VARCHAR)
    if kind == "bytes":
        return d(mysql_type=MySQLType.VARBINARY)
    raise SchemaError(f"unsupported field schema type {kind!r}" + (f" ({name})" if name else ""))


def type_from_tidb(tidb_type: str, kind: str, name: str | None, parameters: Mapping[str, Any] | None) -> DataType:
    """TiCDC's ``tidb_type`` (a bare type name) completed with what the field schema adds."""
    base = parse_type_text(tidb_type)
    wire = type_from_wire(kind, name, parameters)
    t = base.mysql_type
    if t in (MySQLType.ENUM, MySQLType.SET):
        return attrs.evolve(base, elements=wire.elements)
    if t is MySQLType.BIT:
        return attrs.evolve(base, length=1 if kind == "boolean" else wire.length, unsigned=True)
    if t is MySQLType.DATETIME and name == Logical.MICRO_TIMESTAMP:
        return attrs.evolve(base, decimal=6)
    if t is MySQLType.FLOAT and kind == "double":
        return attrs.evolve(base, length=12, decimal=0)
    if t is MySQLType.DECIMAL and wire.mysql_type is MySQLType.DECIMAL:
        return attrs.evolve(base, length=wire.length, decimal=wire.decimal)
    return base


# ------------------------------------------------------------------------------------ converter choice


def _binary(modes: Modes, kind: str) -> Converter:
    if kind == "bytes" or modes.binary in (BinaryMode.BASE64, BinaryMode.BYTES):
        return _b64
    if modes.binary is BinaryMode.BASE64_URL_SAFE:
        return _b64url
    return _hex


def converter_for(kind: str | None, name: str | None, data_type: DataType, modes: Modes) -> Converter:
    """The converter for values of wire form (kind, name) into ``data_type``'s typed values.

    ``kind`` None means schemaless: the wire form is what the Debezium settings in ``modes`` produce.
    """
    logical = data_type.logical
    if kind is None:
        return _schemaless_converter(data_type, modes)
    if name is not None:
        by_name = _named_converter(name, data_type, modes)
        if by_name is not None:
            return by_name
    if logical is LogicalType.DECIMAL:
        if kind == "bytes":
            return _decimal_bytes(data_type.decimal)
        return _decimal_number(data_type.decimal)
    if kind == "boolean":
        return _bool_int
    if kind in _CONNECT_INT:
        if logical in (LogicalType.INT, LogicalType.YEAR, LogicalType.BIT):
            unsigned64 = data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned
            return _uint64 if unsigned64 else _int
        return _schemaless_converter(data_type, modes)
    if kind in ("float", "double"):
        return _float32 if logical is LogicalType.FLOAT else _number
    if kind == "bytes":
        return _bits if logical is LogicalType.BIT else _b64
    if kind == "string":
        if logical is LogicalType.BYTES:
            return _binary(modes, kind)
        if logical is LogicalType.STRING:
            return _string
        return _schemaless_converter(data_type, modes)
    raise SchemaError(f"unsupported field schema type {kind!r}")


_NAMED: Final[Mapping[str, Converter]] = {
    Logical.DATE: _days,
    Logical.CONNECT_DATE: _days,
    Logical.TIMESTAMP: _dt_ms,
    Logical.CONNECT_TIMESTAMP: _dt_ms,
    Logical.MICRO_TIMESTAMP: _dt_us,
    Logical.NANO_TIMESTAMP: _dt_ns,
    Logical.TIME: _time_ms,
    Logical.CONNECT_TIME: _time_ms,
    Logical.MICRO_TIME: _time_us,
    Logical.NANO_TIME: _time_ns,
    Logical.YEAR: _int,
    Logical.BITS: _bits,
    Logical.JSON: _json,
    Logical.VECTOR: _vector,
    Logical.VARIABLE_DECIMAL: _decimal_variable,
}


def _named_converter(name: str, data_type: DataType, modes: Modes) -> Converter | None:
    if name == Logical.ZONED_TIMESTAMP:
        return _zoned(modes.zone)
    if name == Logical.CONNECT_DECIMAL:
        return _decimal_bytes(data_type.decimal)
    if name == Logical.ENUM:
        return _string
    if name == Logical.ENUM_SET:
        return _set(data_type)
    return _NAMED.get(name)


def _schemaless_converter(data_type: DataType, modes: Modes) -> Converter:
    """Values of a column whose field schema is absent: the wire form follows the connector settings."""
    logical = data_type.logical
    adaptive = modes.time_precision is not TimePrecisionMode.CONNECT
    if logical in (LogicalType.INT, LogicalType.YEAR):
        return _uint64 if data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned else _int
    if logical is LogicalType.BIT:
        return _bool_int if data_type.bit_width == 1 else _bits
    if logical is LogicalType.FLOAT:
        return _float32
    if logical is LogicalType.DOUBLE:
        return _number
    if logical is LogicalType.DECIMAL:
        if modes.decimal is DecimalMode.PRECISE:
            return _decimal_bytes(data_type.decimal)
        return _decimal_number(data_type.decimal)
    if logical is LogicalType.DATE:
        return _days
    if logical is LogicalType.DATETIME:
        return _dt_us if adaptive and data_type.fsp > 3 else _dt_ms
    if logical is LogicalType.TIMESTAMP:
        return _zoned(modes.zone)
    if logical is LogicalType.TIME:
        if modes.time_precision is TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS:
            return _time_us
        return _time_us if adaptive and data_type.fsp > 3 else _time_ms
    if logical is LogicalType.STRING:
        return _string
    if logical is LogicalType.BYTES:
        return _binary(modes, "string")
    if logical is LogicalType.ENUM:
        return _string
    if logical is LogicalType.SET:
        return _set(data_type)
    if logical is LogicalType.JSON:
        return _json
    if logical is LogicalType.VECTOR:
        return _vector
    raise AssertionError(f"unmapped logical type {logical}")


UNTYPED: Final[Converter] = _raw

CONVERSION_ERRORS: Final = (WireError, TextFormError, ValueError, TypeError, OverflowError, binascii.Error)


@attrs.frozen
class ColumnReader:
    column: Column | None
    convert: Converter


def reader_from_field(field: Mapping[str, Any], user_column: Column | None, modes: Modes) -> ColumnReader:
    """A reader for one entry of a before/after struct's ``fields`` (raises SchemaError when malformed)."""
    kind = field.get("type")
    if not isinstance(kind, str):
        raise SchemaError("field schema has no string 'type'")
    name = field.get("name")
    if name is not None and not isinstance(name, str):
        raise SchemaError("field schema 'name' is not a string")
    parameters = field.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise SchemaError("field schema 'parameters' is not an object")
    column_name = field.get("field")
    if not isinstance(column_name, str):
        raise SchemaError("field schema has no string 'field'")
    optional = field.get("optional", True)
    if user_column is not None:
        data_type = user_column.data_type
        column = user_column
    else:
        tidb = field.get("tidb_type")
        if tidb is not None and not isinstance(tidb, str):
            raise SchemaError("'tidb_type' is not a string")
        data_type = type_from_tidb(tidb, kind, name, parameters) if tidb else type_from_wire(kind, name, parameters)
        column = Column(name=column_name, data_type=data_type, nullable=bool(optional))
    return ColumnReader(column, converter_for(kind, name, data_type, modes))


def reader_from_column(column: Column, modes: Modes) -> ColumnReader:
    return ColumnReader(column, converter_for(None, None, column.data_type, modes))
