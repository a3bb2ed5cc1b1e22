"""Column readers: from a field schema (or a user-supplied column type) to a converter of payload values.

A field schema gives the wire form (Kafka Connect type plus logical name); the column type comes from, in
order of preference, a user-supplied `TableSchema`, TiCDC's ``tidb_type``, or the wire form itself. The pair
picks one converter, so that the per-value work in the hot path is a single call.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
from collections.abc import Callable, Mapping
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Final

import attrs
import orjson

from cdc_core.errors import SchemaError, json_kind
from cdc_core.schema import Column
from cdc_core.textual import (
    EPOCH_DATE,
    EPOCH_NAIVE,
    WIDE_DECIMAL,
    TextFormError,
    float32_value,
    fraction_digits,
    parse_json,
    parse_set_text,
    parse_vector,
    split_members,
    wkb_point,
)
from cdc_core.types import (
    INTEGER_BITS,
    DataType,
    LogicalType,
    LogicalTypeVisitor,
    MySQLType,
    integer_range,
    parse_type_text,
)
from cdc_core.values import Geometry, Value, with_fsp
from cdc_debezium.names import SOURCE_LENGTH, SOURCE_NAME, SOURCE_SCALE, SOURCE_TYPE, Logical

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
        raise WireError(f"expected an integer, got {json_kind(v)}")
    return v


def _uint64(v: Any) -> int:
    if type(v) is not int:
        raise WireError(f"expected an integer, got {json_kind(v)}")
    return v + (1 << 64) if v < 0 else v


def _ranged(low: int, high: int, base: Converter) -> Converter:
    """``base``, refusing integers outside the column's range (a value the column cannot hold is malformed)."""

    def convert(v: Any) -> int:
        number: int = base(v)
        if not low <= number <= high:
            raise WireError(f"{number} is out of range [{low}, {high}] for the column")
        return number

    return convert


def _integer(data_type: DataType, base: Converter) -> Converter:
    """The integer converter of an integer/BIT column, bounded by the column type (Debezium writes INT UNSIGNED
    etc. in the next wider signed type, BIGINT UNSIGNED as two's complement, which ``base`` re-widens)."""
    bounds = integer_range(data_type)
    return base if bounds is None else _ranged(*bounds, base)


def _bool_int(v: Any) -> int:
    if type(v) is bool:
        return int(v)
    return _int(v)


# JSON has no NaN or infinity: Kafka Connect's JsonConverter (Jackson) writes a non-finite double as these strings.
_NONFINITE_DOUBLES: Final = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
# PostgreSQL NUMERIC's special values: Debezium's names for them (decimal.handling.mode=string) and, in double
# mode, the JsonConverter's strings above.
_SPECIAL_DECIMALS: Final = {
    "NAN": Decimal("NaN"),
    "POSITIVE_INFINITY": Decimal("Infinity"),
    "NEGATIVE_INFINITY": Decimal("-Infinity"),
    "NaN": Decimal("NaN"),
    "Infinity": Decimal("Infinity"),
    "-Infinity": Decimal("-Infinity"),
}


def _number(v: Any) -> float:
    if type(v) is float or type(v) is int or type(v) is Decimal:
        return float(v)
    if type(v) is str and v in _NONFINITE_DOUBLES:
        return _NONFINITE_DOUBLES[v]
    raise WireError(f"expected a number, got {json_kind(v)}")


def _float32(v: Any) -> float:
    return float32_value(_number(v))


def _string(v: Any) -> str:
    if type(v) is not str:
        raise WireError(f"expected a string, got {json_kind(v)}")
    return v


def _b64(v: Any) -> bytes:
    """A Connect ``bytes`` value: base64 text in JSON, the bytes themselves in Avro."""
    if type(v) is bytes:
        return v
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
    days = _int(v)
    try:
        return dt.date.fromordinal(_EPOCH_ORDINAL + days)
    except (ValueError, OverflowError) as exc:
        raise WireError(f"{days} days from 1970-01-01 is outside the years 1..9999") from exc


def _epoch(count: int, unit: str) -> dt.datetime:
    """The naive datetime ``count`` units after the epoch (WireError outside the years 1..9999)."""
    try:
        if unit == "ms":
            return EPOCH_NAIVE + dt.timedelta(0, 0, 0, count)
        return EPOCH_NAIVE + dt.timedelta(0, 0, count if unit == "us" else count // 1000)
    except OverflowError as exc:
        raise WireError(f"{count} {unit} from the epoch is outside the years 1..9999") from exc


def _dt_ms(v: Any) -> dt.datetime:
    return _epoch(_int(v), "ms")


def _dt_us(v: Any) -> dt.datetime:
    return _epoch(_int(v), "us")


def _dt_ns(v: Any) -> dt.datetime:
    return _epoch(_int(v), "ns")


def _duration(count: int, unit: str) -> dt.timedelta:
    try:
        if unit == "ms":
            return dt.timedelta(0, 0, 0, count)
        return dt.timedelta(0, 0, count if unit == "us" else count // 1000)
    except OverflowError as exc:
        raise WireError(f"{count} {unit} is beyond the largest duration (999999999 days)") from exc


def _time_ms(v: Any) -> dt.timedelta:
    return _duration(_int(v), "ms")


def _time_us(v: Any) -> dt.timedelta:
    return _duration(_int(v), "us")


def _time_ns(v: Any) -> dt.timedelta:
    return _duration(_int(v), "ns")


_DAY_US: Final = 86_400_000_000


def _zoned_time(v: Any) -> dt.timedelta:
    """``io.debezium.time.ZonedTime`` (``HH:MM:SS[.f]Z`` or an offset) as the time of day in UTC."""
    text = _string(v)
    try:
        moment = dt.time.fromisoformat(text)
    except ValueError as exc:
        raise WireError(f"not an ISO time with offset: {text!r}") from exc
    offset = moment.utcoffset()
    if offset is None:
        raise WireError(f"ZonedTime without a zone: {text!r}")
    local = (moment.hour * 3600 + moment.minute * 60 + moment.second) * 1_000_000 + moment.microsecond
    return dt.timedelta(microseconds=(local - offset // dt.timedelta(microseconds=1)) % _DAY_US)


def _iso_date(v: Any) -> dt.date:
    """``io.debezium.time.IsoDate`` (``2017-09-15Z``, UTC)."""
    text = _string(v)
    try:
        return dt.date.fromisoformat(text.removesuffix("Z"))
    except ValueError as exc:
        raise WireError(f"not an ISO date: {text!r}") from exc


def _iso_time(v: Any) -> dt.timedelta:
    """``io.debezium.time.IsoTime`` (``04:05:11.789Z``, UTC) as the time of day."""
    text = _string(v)
    try:
        moment = dt.time.fromisoformat(text.removesuffix("Z"))
    except ValueError as exc:
        raise WireError(f"not an ISO time: {text!r}") from exc
    return dt.timedelta(0, moment.hour * 3600 + moment.minute * 60 + moment.second, moment.microsecond)


def _iso_timestamp(v: Any) -> dt.datetime:
    """``io.debezium.time.IsoTimestamp`` (``2019-07-09T02:28:57.123456Z``): the UTC wall time, naive."""
    text = _string(v)
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise WireError(f"not an ISO timestamp: {text!r}") from exc
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


def _micro_duration(v: Any) -> dt.timedelta:
    """``io.debezium.time.MicroDuration``: microseconds (months counted as 365.25/12 days by the producer)."""
    return _duration(_int(v), "us")


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


def _zoned(zone: dt.tzinfo, *, keep_digits: bool) -> Converter:
    def convert(v: Any) -> dt.datetime:
        text = _string(v)
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError as exc:
            raise WireError(f"not an ISO timestamp with zone: {text!r}") from exc
        if moment.tzinfo is None:
            raise WireError(f"ZonedTimestamp without a zone: {v!r}")
        # in the decoder's zone whatever offset the producer wrote; TiCDC prints exactly fsp digits, which the value
        # keeps for a column whose fsp the message does not say
        local = moment.astimezone(zone)
        return with_fsp(local, fraction_digits(text)) if keep_digits else local

    return convert


def _quantizer(scale: int | None, *, rounding: bool) -> Callable[[Decimal], Decimal]:
    """Brings a decimal to the column's scale: padded when exact (``12.34`` in DECIMAL(10,4) is ``12.3400``).

    With ``rounding`` (a double on the wire, which only approximates the column's value) extra digits are
    rounded half-even to the scale; otherwise a value with more digits than the scale is kept as written.
    """
    if scale is None:
        return lambda d: d
    quantum = Decimal(1).scaleb(-scale)

    def quantize(d: Decimal) -> Decimal:
        try:
            exact = d.quantize(quantum, rounding=ROUND_HALF_EVEN, context=WIDE_DECIMAL)
        except InvalidOperation as exc:
            raise WireError(f"{d} does not fit scale {scale}") from exc
        return exact if rounding or exact == d else d

    return quantize


def _double_decimal(v: float) -> Decimal:
    """The decimal a double stands for: its shortest round-trip digits, an integral value without a fraction (as
    TiCDC's JSON prints it), so that a double read from JSON text or from Avro gives the same decimal."""
    if v.is_integer() and abs(v) < 1e21:
        return Decimal(int(v))
    return Decimal(repr(v))


def _decimal_number(scale: int | None, *, double: bool = False) -> Converter:
    """A DECIMAL from a double (``decimal.handling.mode=double``), a string (``string``) or an exact JSON
    number (JsonConverter ``decimal.format=NUMERIC``, read without float by `jsonreader`).

    ``double``: the wire value is a double (whatever digits the JSON text has), so it is rounded to the scale.
    PostgreSQL NUMERIC's NaN and infinities arrive as strings in string and double mode and come back as the
    Decimal special values; any other non-finite text is an error.
    """
    exact = _quantizer(scale, rounding=double)
    rounded = _quantizer(scale, rounding=True)

    def convert(v: Any) -> Decimal:
        if type(v) is float:
            if not math.isfinite(v):
                raise WireError(f"not a finite decimal: {v!r}")
            return rounded(_double_decimal(v))
        if type(v) is int or type(v) is Decimal:
            return exact(Decimal(v))
        if type(v) is str:
            special = _SPECIAL_DECIMALS.get(v)
            return special if special is not None else exact(_parse_decimal(v))
        raise WireError(f"expected a number, got {json_kind(v)}")

    return convert


def _connect_decimal(scale: int | None) -> Converter:
    """Kafka Connect ``Decimal``: unscaled bytes (base64 in JSON with ``decimal.format=BASE64``, raw in Avro) or
    a JSON number (NUMERIC)."""
    from_bytes = _decimal_bytes(scale)
    from_number = _decimal_number(scale)

    def convert(v: Any) -> Decimal:
        result: Decimal = from_bytes(v) if type(v) is str or type(v) is bytes else from_number(v)
        return result

    return convert


def _integral(decimal: Converter) -> Converter:
    """An integer column sent as a Connect Decimal of scale 0 (``bigint.unsigned.handling.mode=precise``)."""

    def convert(v: Any) -> int:
        number: Decimal = decimal(v)
        if number != number.to_integral_value():
            raise WireError(f"{number} is not an integer")
        return int(number)

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
    """``io.debezium.data.VariableScaleDecimal``: ``{scale, value}`` with base64 big-endian unscaled bytes."""
    if type(v) is not dict:
        raise WireError(f"expected a {{scale, value}} object, got {json_kind(v)}")
    scale = _int(v.get("scale"))
    if not -1000 <= scale <= 1000:
        raise WireError(f"scale {scale} is out of range")
    unscaled = int.from_bytes(_b64(v.get("value")), "big", signed=True)
    return Decimal(unscaled).scaleb(-scale, context=WIDE_DECIMAL)


def _geometry(v: Any) -> Geometry:
    """Debezium's ``Geometry``/``Geography`` struct: ``wkb`` (base64 OGC WKB) and ``srid`` (null: unknown)."""
    if type(v) is not dict:
        raise WireError(f"expected a {{wkb, srid}} object, got {json_kind(v)}")
    srid = v.get("srid")
    if srid is not None:
        srid = _int(srid)
    wkb = _b64(v.get("wkb"))
    if len(wkb) < 5 or wkb[0] not in (0, 1):
        raise WireError("wkb is not OGC Well-Known Binary")
    return Geometry(wkb=wkb, srid=srid)


def _point(v: Any) -> Geometry:
    """Debezium's ``Point`` struct: ``x``, ``y`` and optionally ``wkb``/``srid``; the WKB is built when absent."""
    if type(v) is not dict:
        raise WireError(f"expected an {{x, y}} object, got {json_kind(v)}")
    if v.get("wkb") is not None:
        return _geometry(v)
    srid = v.get("srid")
    return Geometry(wkb=wkb_point(_number(v.get("x")), _number(v.get("y"))), srid=None if srid is None else _int(srid))


def _document(v: Any) -> Value:
    """A struct or map value kept as a JSON document (exactly parsed fractions become floats, as JSON has)."""
    if type(v) is Decimal:
        return int(v) if v == v.to_integral_value() and "." not in str(v) else float(v)
    if type(v) is dict:
        return {k: _document(item) for k, item in v.items()}
    if type(v) is list:
        return [_document(item) for item in v]
    return v


def _struct_document(v: Any) -> Value:
    if type(v) is not dict:
        raise WireError(f"expected an object, got {json_kind(v)}")
    return _document(v)


def _map_document(v: Any) -> Value:
    # JsonConverter writes maps with string keys as objects, other maps as arrays of [key, value] pairs
    if type(v) is not dict and type(v) is not list:
        raise WireError(f"expected an object or an array of pairs, got {json_kind(v)}")
    return _document(v)


def _array(element: Converter) -> Converter:
    def convert(v: Any) -> list[Value]:
        if type(v) is not list:
            raise WireError(f"expected an array, got {json_kind(v)}")
        return [None if item is None else element(item) for item in v]

    return convert


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


def _text(v: Any) -> Value:
    """A column no schema types (schemaless, no user TableSchema): its JSON value as text, whatever the message,
    so that the column has one type however its values are written (``0.75`` and ``"3.140000104904175"`` alike).

    Strings as they are, numbers as their digits (exactly parsed: as written, an exponent as ``E``), booleans
    ``true``/``false``, objects and arrays as compact JSON.
    """
    kind = type(v)
    if kind is str:
        return v
    if kind is bool:
        return "true" if v else "false"
    if kind is int or kind is Decimal:
        return str(v)
    if kind is float:
        return repr(v)
    return orjson.dumps(_document(v)).decode()


# --------------------------------------------------------------------------------------- type inference

_CONNECT_INT: Final[Mapping[str, MySQLType]] = {
    "int8": MySQLType.TINYINT,
    "int16": MySQLType.SMALLINT,
    "int32": MySQLType.INT,
    "int64": MySQLType.BIGINT,
}


def _members(parameters: Mapping[str, Any] | None, name: str) -> tuple[str, ...]:
    """An Enum's or EnumSet's members. Debezium (``Enum.builder``, ``EnumSet.builder``) and TiCDC always list them
    in ``allowed``; without them no value can be checked (nor a SET put in declaration order), so the field schema
    is refused."""
    text = (parameters or {}).get("allowed")
    if not isinstance(text, str):
        members = "ENUM's" if name == Logical.ENUM else "SET's"
        raise SchemaError(
            f"{name} field schema without an 'allowed' parameter (the {members} members, which Debezium always writes)"
        )
    if text == "":
        return ()
    return split_members(text) if name == Logical.ENUM else tuple(text.split(","))


def _int_param(parameters: Mapping[str, Any] | None, key: str) -> int | None:
    raw = (parameters or {}).get(key)
    if raw is None:
        return None
    try:
        return int(raw)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"parameter {key} is not an integer: {raw!r}") from exc


_FIXED_NAMES: Final[Mapping[str, DataType]] = {
    Logical.DATE: DataType(mysql_type=MySQLType.DATE),
    Logical.CONNECT_DATE: DataType(mysql_type=MySQLType.DATE),
    Logical.ISO_DATE: DataType(mysql_type=MySQLType.DATE),
    Logical.TIMESTAMP: DataType(mysql_type=MySQLType.DATETIME, decimal=3),
    Logical.CONNECT_TIMESTAMP: DataType(mysql_type=MySQLType.DATETIME, decimal=3),
    Logical.MICRO_TIMESTAMP: DataType(mysql_type=MySQLType.DATETIME, decimal=6),
    Logical.NANO_TIMESTAMP: DataType(mysql_type=MySQLType.DATETIME, decimal=6),
    Logical.ISO_TIMESTAMP: DataType(mysql_type=MySQLType.DATETIME, decimal=6),
    Logical.ZONED_TIMESTAMP: DataType(mysql_type=MySQLType.TIMESTAMP),
    Logical.TIME: DataType(mysql_type=MySQLType.TIME, decimal=3),
    Logical.CONNECT_TIME: DataType(mysql_type=MySQLType.TIME, decimal=3),
    Logical.MICRO_TIME: DataType(mysql_type=MySQLType.TIME, decimal=6),
    Logical.NANO_TIME: DataType(mysql_type=MySQLType.TIME, decimal=6),
    Logical.ISO_TIME: DataType(mysql_type=MySQLType.TIME, decimal=6),
    Logical.ZONED_TIME: DataType(mysql_type=MySQLType.TIME, decimal=6),
    Logical.MICRO_DURATION: DataType(mysql_type=MySQLType.TIME, decimal=6),
    Logical.INTERVAL: DataType(mysql_type=MySQLType.VARCHAR),
    Logical.YEAR: DataType(mysql_type=MySQLType.YEAR),
    Logical.JSON: DataType(mysql_type=MySQLType.JSON),
    Logical.VECTOR: DataType(mysql_type=MySQLType.VECTOR),
    Logical.FLOAT_VECTOR: DataType(mysql_type=MySQLType.VECTOR),
    Logical.DOUBLE_VECTOR: DataType(mysql_type=MySQLType.ARRAY, item=DataType(mysql_type=MySQLType.DOUBLE)),
    Logical.VARIABLE_DECIMAL: DataType(mysql_type=MySQLType.DECIMAL),
    Logical.UUID: DataType(mysql_type=MySQLType.CHAR, length=36),
    Logical.XML: DataType(mysql_type=MySQLType.LONGTEXT),
    Logical.LTREE: DataType(mysql_type=MySQLType.TEXT),
    Logical.TSVECTOR: DataType(mysql_type=MySQLType.LONGTEXT),
    Logical.POINT: DataType(mysql_type=MySQLType.POINT),
    Logical.GEOMETRY: DataType(mysql_type=MySQLType.GEOMETRY),
    Logical.GEOGRAPHY: DataType(mysql_type=MySQLType.GEOMETRY),
}


def type_from_wire(kind: str, name: str | None, parameters: Mapping[str, Any] | None) -> DataType:
    """The best column type a field schema alone describes (no ``tidb_type``, no user schema)."""
    d = DataType
    if name is not None:
        fixed = _FIXED_NAMES.get(name)
        if fixed is not None:
            return fixed
        if name == Logical.BITS:
            return d(mysql_type=MySQLType.BIT, length=_int_param(parameters, "length"), unsigned=True)
        if name == Logical.ENUM:
            return d(mysql_type=MySQLType.ENUM, elements=_members(parameters, name))
        if name == Logical.ENUM_SET:
            return d(mysql_type=MySQLType.SET, elements=_members(parameters, name))
        if name == Logical.CONNECT_DECIMAL:
            precision = _int_param(parameters, "connect.decimal.precision")
            return d(mysql_type=MySQLType.DECIMAL, length=precision, decimal=_int_param(parameters, "scale"))
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
    if kind in ("struct", "map"):  # a struct or map Debezium names no type for: kept as a JSON document
        return d(mysql_type=MySQLType.JSON)
    raise SchemaError(f"unsupported field schema type {kind!r}" + (f" ({name})" if name else ""))


def type_from_schema(field: Mapping[str, Any]) -> DataType:
    """`type_from_wire` for a whole field schema, arrays included (their element type from ``items``)."""
    kind, name, parameters = _schema_parts(field)
    if kind == "array" and name not in _FIXED_NAMES:
        return DataType(mysql_type=MySQLType.ARRAY, item=type_from_schema(_items(field)))
    return type_from_wire(kind, name, parameters)


def _schema_parts(field: Mapping[str, Any]) -> tuple[str, str | None, Mapping[str, Any] | None]:
    kind = field.get("type")
    if not isinstance(kind, str):
        raise SchemaError("field schema has no string 'type'")
    name = field.get("name")
    if name is not None and not isinstance(name, str):
        raise SchemaError("field schema 'name' is not a string")
    parameters = field.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise SchemaError("field schema 'parameters' is not an object")
    return kind, name, parameters


def _items(field: Mapping[str, Any]) -> Mapping[str, Any]:
    items = field.get("items")
    if not isinstance(items, dict):
        raise SchemaError("array field schema has no 'items' object")
    return items


def type_from_tidb(tidb_type: str, kind: str, name: str | None, parameters: Mapping[str, Any] | None) -> DataType:
    """TiCDC's ``tidb_type`` (a bare type name) completed with what the field schema adds."""
    base = parse_type_text(tidb_type)
    wire = type_from_wire(kind, name, parameters)
    t = base.mysql_type
    if t in (MySQLType.ENUM, MySQLType.SET):
        return attrs.evolve(base, elements=wire.elements)
    if t is MySQLType.BIT:
        return attrs.evolve(base, length=1 if kind == "boolean" else wire.length, unsigned=True)
    if t is MySQLType.DATETIME and name in (Logical.TIMESTAMP, Logical.MICRO_TIMESTAMP):
        return attrs.evolve(base, decimal=wire.decimal)  # the most digits the wire's unit holds: 3 or 6
    if t is MySQLType.FLOAT and kind == "double":
        return attrs.evolve(base, length=12, decimal=0)
    if t is MySQLType.DECIMAL and wire.mysql_type is MySQLType.DECIMAL:
        return attrs.evolve(base, length=wire.length, decimal=wire.decimal)
    return base


# Source types (column.propagate.source.type) that may replace the wire's type although their logical type
# differs: DECIMAL sent as string or double, BIGINT UNSIGNED sent as a Connect Decimal, binary sent as text.
_REFINES: Final = frozenset(
    {
        (LogicalType.DECIMAL, LogicalType.STRING),
        (LogicalType.DECIMAL, LogicalType.DOUBLE),
        (LogicalType.INT, LogicalType.DECIMAL),
        (LogicalType.BYTES, LogicalType.STRING),
    }
)
# PostgreSQL source types whose wire form (text in a string binary or decimal mode) hides what they are. Other
# PostgreSQL names either parse as the MySQL type they are (INT4, NUMERIC...) or leave the wire type.
_POSTGRES_SOURCE: Final[Mapping[str, DataType]] = {
    "BYTEA": DataType(mysql_type=MySQLType.LONGBLOB),
    "MONEY": DataType(mysql_type=MySQLType.DECIMAL),  # its scale (lc_monetary) is not in the parameters
}
_SIZED: Final = frozenset({MySQLType.CHAR, MySQLType.VARCHAR, MySQLType.BINARY, MySQLType.VARBINARY, *INTEGER_BITS})


def type_from_source(wire: DataType, parameters: Mapping[str, Any] | None) -> DataType:
    """The wire type refined by ``column.propagate.source.type`` parameters, when they name a type it can be.

    ``__debezium.source.column.type`` is the database's type name (``DECIMAL``, ``BIGINT UNSIGNED``,
    ``VARCHAR``; PostgreSQL's ``INT4``, ``UUID``...), ``length`` the precision or character length (MySQL puts
    the fractional-seconds precision there too), ``scale`` the scale (PostgreSQL: the fractional-seconds
    precision). A name this library does not know, or one the wire form cannot carry, leaves the wire type.
    """
    text = (parameters or {}).get(SOURCE_TYPE)
    if not isinstance(text, str):
        return wire
    postgres = _POSTGRES_SOURCE.get(text)
    if postgres is not None:
        return postgres if (postgres.logical, wire.logical) in _REFINES else wire
    try:
        source = parse_type_text(text)
    except SchemaError:
        return wire
    if source.logical is not wire.logical and (source.logical, wire.logical) not in _REFINES:
        return wire
    length = _int_param(parameters, SOURCE_LENGTH)
    scale = _int_param(parameters, SOURCE_SCALE)
    t = source.mysql_type
    if t in (MySQLType.ENUM, MySQLType.SET):
        return attrs.evolve(source, elements=wire.elements)
    if source.has_fsp:  # DATETIME, TIMESTAMP, TIME
        fsp = scale if scale is not None else length
        return attrs.evolve(source, decimal=fsp if fsp is not None and 0 <= fsp <= 6 else wire.decimal)
    if t is MySQLType.BIT:
        return attrs.evolve(source, length=length if length is not None else wire.length)
    if t is MySQLType.DECIMAL:
        return attrs.evolve(source, length=length, decimal=scale if scale is not None else wire.decimal)
    if t in _SIZED and length is not None:
        return attrs.evolve(source, length=length)
    return source


# ------------------------------------------------------------------------------------ converter choice


def binary_converter(modes: Modes, kind: str) -> Converter:
    """Bytes from a Connect ``bytes`` value (base64 in JSON) or a ``string`` per ``binary.handling.mode``."""
    return _binary(modes, kind)


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
    if kind is None:
        return _schemaless_converter(data_type, modes)
    if name is not None:
        by_name = _named_converter(name, data_type, modes)
        if by_name is not None:
            return by_name
    if kind == "struct":
        return _struct_document
    if kind == "map":
        return _map_document
    return _PlainConverter(kind, modes).visit(data_type)


def _connect_integer(data_type: DataType) -> Converter:
    unsigned64 = data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned
    return _integer(data_type, _uint64 if unsigned64 else _int)


class _PlainConverter(LogicalTypeVisitor[Converter]):
    """Values of a field schema of plain Connect type ``kind`` (no logical name that decides by itself)."""

    def __init__(self, kind: str, modes: Modes) -> None:
        self.kind, self.modes = kind, modes

    def _by_kind(
        self,
        data_type: DataType,
        *,
        integer: Converter | None = None,
        floating: Converter = _number,
        binary: Converter = _b64,
        string: Converter | None = None,
    ) -> Converter:
        """What each kind holds for this column type (``integer`` or ``string`` None: what the connector settings
        make of the column's values in that kind)."""
        kind = self.kind
        if kind == "boolean":
            return _bool_int
        if kind in _CONNECT_INT:
            return integer if integer is not None else _schemaless_converter(data_type, self.modes)
        if kind in ("float", "double"):
            return floating
        if kind == "bytes":
            return binary
        if kind == "string":
            return string if string is not None else _schemaless_converter(data_type, self.modes)
        raise SchemaError(f"unsupported field schema type {kind!r}")

    def visit_int(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, integer=_connect_integer(data_type))

    def visit_year(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, integer=_int)

    def visit_bit(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, integer=_connect_integer(data_type), binary=_bits)

    def visit_float(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, floating=_float32)

    def visit_double(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_decimal(self, data_type: DataType) -> Converter:
        if self.kind == "bytes":
            return _decimal_bytes(data_type.decimal)
        return _decimal_number(data_type.decimal, double=self.kind in ("double", "float"))

    def visit_date(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_datetime(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_timestamp(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_time(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_string(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, string=_string)

    def visit_bytes(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, string=_binary(self.modes, self.kind))

    def visit_enum(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_set(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_json(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_vector(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_geometry(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_array(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)


def converter_for_schema(field: Mapping[str, Any], data_type: DataType, modes: Modes) -> Converter:
    """`converter_for` for a whole field schema: arrays convert each element by their ``items`` schema."""
    kind, name, _ = _schema_parts(field)
    if kind == "array" and name not in _NAMED:
        items = _items(field)
        item_type = data_type.item if data_type.logical is LogicalType.ARRAY and data_type.item else None
        return _array(converter_for_schema(items, item_type or type_from_schema(items), modes))
    return converter_for(kind, name, data_type, modes)


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
    Logical.ZONED_TIME: _zoned_time,
    Logical.ISO_DATE: _iso_date,
    Logical.ISO_TIME: _iso_time,
    Logical.ISO_TIMESTAMP: _iso_timestamp,
    Logical.MICRO_DURATION: _micro_duration,
    Logical.INTERVAL: _string,
    Logical.UUID: _string,
    Logical.XML: _string,
    Logical.LTREE: _string,
    Logical.TSVECTOR: _string,
    Logical.YEAR: _int,
    Logical.JSON: _json,
    Logical.VECTOR: _vector,
    Logical.FLOAT_VECTOR: _array(_float32),
    Logical.DOUBLE_VECTOR: _array(_number),
    Logical.VARIABLE_DECIMAL: _decimal_variable,
    Logical.POINT: _point,
    Logical.GEOMETRY: _geometry,
    Logical.GEOGRAPHY: _geometry,
}


def _named_converter(name: str, data_type: DataType, modes: Modes) -> Converter | None:
    if name == Logical.ZONED_TIMESTAMP:
        return _zoned(modes.zone, keep_digits=data_type.known_fsp is None)
    if name == Logical.CONNECT_DECIMAL:
        if data_type.logical is LogicalType.INT:
            return _integer(data_type, _integral(_connect_decimal(0)))
        return _connect_decimal(data_type.decimal)
    if name == Logical.BITS:
        return _integer(data_type, _bits) if data_type.logical is LogicalType.BIT else _bits
    if name == Logical.ENUM:
        return _string
    if name == Logical.ENUM_SET:
        return _set(data_type)
    return _NAMED.get(name)


class _Schemaless(LogicalTypeVisitor[Converter]):
    """Values of a column whose field schema is absent: the wire form follows the connector settings."""

    def __init__(self, modes: Modes) -> None:
        self.modes = modes
        self.adaptive = modes.time_precision is not TimePrecisionMode.CONNECT

    def visit_int(self, data_type: DataType) -> Converter:
        return _connect_integer(data_type)

    def visit_year(self, data_type: DataType) -> Converter:
        return _int

    def visit_bit(self, data_type: DataType) -> Converter:
        return _integer(data_type, _bool_int if data_type.bit_width == 1 else _bits)

    def visit_float(self, data_type: DataType) -> Converter:
        return _float32

    def visit_double(self, data_type: DataType) -> Converter:
        return _number

    def visit_decimal(self, data_type: DataType) -> Converter:
        if self.modes.decimal is DecimalMode.PRECISE:
            return _connect_decimal(data_type.decimal)
        return _decimal_number(data_type.decimal, double=self.modes.decimal is DecimalMode.DOUBLE)

    def visit_date(self, data_type: DataType) -> Converter:
        return _days

    def visit_datetime(self, data_type: DataType) -> Converter:
        return _dt_us if self.adaptive and data_type.fsp > 3 else _dt_ms

    def visit_timestamp(self, data_type: DataType) -> Converter:
        return _zoned(self.modes.zone, keep_digits=data_type.known_fsp is None)

    def visit_time(self, data_type: DataType) -> Converter:
        if self.modes.time_precision is TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS:
            return _time_us
        return _time_us if self.adaptive and data_type.fsp > 3 else _time_ms

    def visit_string(self, data_type: DataType) -> Converter:
        return _string

    def visit_bytes(self, data_type: DataType) -> Converter:
        return _binary(self.modes, "string")

    def visit_enum(self, data_type: DataType) -> Converter:
        return _string

    def visit_set(self, data_type: DataType) -> Converter:
        return _set(data_type)

    def visit_json(self, data_type: DataType) -> Converter:
        return _schemaless_json

    def visit_vector(self, data_type: DataType) -> Converter:
        return _vector

    def visit_geometry(self, data_type: DataType) -> Converter:
        return _point if data_type.mysql_type is MySQLType.POINT else _geometry

    def visit_array(self, data_type: DataType) -> Converter:
        item = data_type.item
        return _array(self.visit(item) if item is not None else _document)


def _schemaless_converter(data_type: DataType, modes: Modes) -> Converter:
    return _Schemaless(modes).visit(data_type)


def _schemaless_json(v: Any) -> Value:
    """A JSON column without its field schema: a string document, or hstore's map (``hstore.handling.mode``)."""
    return _map_document(v) if type(v) is dict else _json(v)


UNTYPED: Final[Converter] = _text
TEXT_TYPE: Final = DataType(mysql_type=MySQLType.LONGTEXT)

CONVERSION_ERRORS: Final = (WireError, TextFormError, ValueError, TypeError, OverflowError, binascii.Error)


@attrs.frozen
class ColumnReader:
    column: Column | None
    convert: Converter


def reader_from_field(field: Mapping[str, Any], user_column: Column | None, modes: Modes) -> ColumnReader:
    """A reader for one entry of a before/after struct's ``fields`` (raises SchemaError when malformed).

    The column is named by ``__debezium.source.column.name`` when the connector propagates it (the name before
    ``field.name.adjustment.mode`` rewrote it), else by the field name.
    """
    kind, name, parameters = _schema_parts(field)
    field_name = field.get("field")
    if not isinstance(field_name, str):
        raise SchemaError("field schema has no string 'field'")
    optional = field.get("optional", True)
    if user_column is not None:
        data_type = user_column.data_type
        column = user_column
    else:
        tidb = field.get("tidb_type")
        if tidb is not None and not isinstance(tidb, str):
            raise SchemaError("'tidb_type' is not a string")
        if tidb:
            data_type = type_from_tidb(tidb, kind, name, parameters)
        else:
            data_type = type_from_source(type_from_schema(field), parameters)
        source_name = (parameters or {}).get(SOURCE_NAME)
        comment = (parameters or {}).get("__debezium.source.column.comment")
        column = Column(
            name=source_name if isinstance(source_name, str) and source_name else field_name,
            data_type=data_type,
            nullable=bool(optional),
            comment=comment if isinstance(comment, str) else None,
        )
    return ColumnReader(column, converter_for_schema(field, data_type, modes))


def reader_from_column(column: Column, modes: Modes) -> ColumnReader:
    return ColumnReader(column, converter_for(None, None, column.data_type, modes))
