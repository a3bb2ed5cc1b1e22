"""Value converters, one per wire form: a payload value as the connector writes it (JSON, or an Avro datum) to
cdc-core's typed value, refusing any other form with `WireError`.

These run once per value (the hot path: each is a single call, with no choice left to make); which one a column
gets is decided once per field schema, in `column_readers`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, Final

import orjson

from cdc_core.errors import SchemaError, json_kind
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
    wkb_point,
)
from cdc_core.types import DataType, MySQLType, integer_range
from cdc_core.values import Geometry, Value, with_fsp

Converter = Callable[[Any], Value]


class WireError(ValueError):
    """A payload value does not have the form its field schema announces."""


def integer(v: Any) -> int:
    if type(v) is not int:
        raise WireError(f"expected an integer, got {json_kind(v)}")
    return v


def uint64(v: Any) -> int:
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


def bounded_integer(data_type: DataType, base: Converter) -> Converter:
    """The integer converter of an integer/BIT column, bounded by the column type (Debezium writes INT UNSIGNED
    etc. in the next wider signed type, BIGINT UNSIGNED as two's complement, which ``base`` re-widens)."""
    bounds = integer_range(data_type)
    return base if bounds is None else _ranged(*bounds, base)


def bool_integer(v: Any) -> int:
    if type(v) is bool:
        return int(v)
    return integer(v)


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


def number(v: Any) -> float:
    if type(v) is float or type(v) is int or type(v) is Decimal:
        return float(v)
    if type(v) is str and v in _NONFINITE_DOUBLES:
        return _NONFINITE_DOUBLES[v]
    raise WireError(f"expected a number, got {json_kind(v)}")


def float32(v: Any) -> float:
    return float32_value(number(v))


def string(v: Any) -> str:
    if type(v) is not str:
        raise WireError(f"expected a string, got {json_kind(v)}")
    return v


def base64_bytes(v: Any) -> bytes:
    """A Connect ``bytes`` value: base64 text in JSON, the bytes themselves in Avro."""
    if type(v) is bytes:
        return v
    # strict a2b_base64 rejects what b64decode(validate=True) rejects, without its regex pass
    return binascii.a2b_base64(string(v), strict_mode=True)


def base64url_bytes(v: Any) -> bytes:
    return base64.urlsafe_b64decode(string(v))


def hex_bytes(v: Any) -> bytes:
    return bytes.fromhex(string(v))


# Positional timedelta arguments (days, seconds, microseconds, milliseconds) and date ordinals: the keyword
# forms cost about twice as much, and these run once per temporal value.
_EPOCH_ORDINAL: Final = EPOCH_DATE.toordinal()


def days(v: Any) -> dt.date:
    count = integer(v)
    try:
        return dt.date.fromordinal(_EPOCH_ORDINAL + count)
    except (ValueError, OverflowError) as exc:
        raise WireError(f"{count} days from 1970-01-01 is outside the years 1..9999") from exc


def _epoch(count: int, unit: str) -> dt.datetime:
    """The naive datetime ``count`` units after the epoch (WireError outside the years 1..9999)."""
    try:
        if unit == "ms":
            return EPOCH_NAIVE + dt.timedelta(0, 0, 0, count)
        return EPOCH_NAIVE + dt.timedelta(0, 0, count if unit == "us" else count // 1000)
    except OverflowError as exc:
        raise WireError(f"{count} {unit} from the epoch is outside the years 1..9999") from exc


def datetime_ms(v: Any) -> dt.datetime:
    return _epoch(integer(v), "ms")


def datetime_us(v: Any) -> dt.datetime:
    return _epoch(integer(v), "us")


def datetime_ns(v: Any) -> dt.datetime:
    return _epoch(integer(v), "ns")


def _duration(count: int, unit: str) -> dt.timedelta:
    try:
        if unit == "ms":
            return dt.timedelta(0, 0, 0, count)
        return dt.timedelta(0, 0, count if unit == "us" else count // 1000)
    except OverflowError as exc:
        raise WireError(f"{count} {unit} is beyond the largest duration (999999999 days)") from exc


def time_ms(v: Any) -> dt.timedelta:
    return _duration(integer(v), "ms")


def time_us(v: Any) -> dt.timedelta:
    return _duration(integer(v), "us")


def time_ns(v: Any) -> dt.timedelta:
    return _duration(integer(v), "ns")


_DAY_US: Final = 86_400_000_000


def zoned_time(v: Any) -> dt.timedelta:
    """``io.debezium.time.ZonedTime`` (``HH:MM:SS[.f]Z`` or an offset) as the time of day in UTC."""
    text = string(v)
    try:
        moment = dt.time.fromisoformat(text)
    except ValueError as exc:
        raise WireError(f"not an ISO time with offset: {text!r}") from exc
    offset = moment.utcoffset()
    if offset is None:
        raise WireError(f"ZonedTime without a zone: {text!r}")
    local = (moment.hour * 3600 + moment.minute * 60 + moment.second) * 1_000_000 + moment.microsecond
    return dt.timedelta(microseconds=(local - offset // dt.timedelta(microseconds=1)) % _DAY_US)


def iso_date(v: Any) -> dt.date:
    """``io.debezium.time.IsoDate`` (``2017-09-15Z``, UTC)."""
    text = string(v)
    try:
        return dt.date.fromisoformat(text.removesuffix("Z"))
    except ValueError as exc:
        raise WireError(f"not an ISO date: {text!r}") from exc


def iso_time(v: Any) -> dt.timedelta:
    """``io.debezium.time.IsoTime`` (``04:05:11.789Z``, UTC) as the time of day."""
    text = string(v)
    try:
        moment = dt.time.fromisoformat(text.removesuffix("Z"))
    except ValueError as exc:
        raise WireError(f"not an ISO time: {text!r}") from exc
    return dt.timedelta(0, moment.hour * 3600 + moment.minute * 60 + moment.second, moment.microsecond)


def iso_timestamp(v: Any) -> dt.datetime:
    """``io.debezium.time.IsoTimestamp`` (``2019-07-09T02:28:57.123456Z``): the UTC wall time, naive."""
    text = string(v)
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise WireError(f"not an ISO timestamp: {text!r}") from exc
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


def micro_duration(v: Any) -> dt.timedelta:
    """``io.debezium.time.MicroDuration``: microseconds (months counted as 365.25/12 days by the producer)."""
    return _duration(integer(v), "us")


def bits(v: Any) -> int:
    return int.from_bytes(base64_bytes(v), "little")


_DIGIT_MASK: Final = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_INTEGER: Final = b"0" * 19


def json_text(v: Any) -> Value:
    """orjson, unless the document has an integer orjson would turn into a float (or orjson refuses it)."""
    data = string(v).encode("utf-8", "surrogatepass")
    if _LONG_INTEGER not in data.translate(_DIGIT_MASK):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN, lone surrogates...: the stdlib parser decides (and reports)
    return parse_json(v)


def vector(v: Any) -> list[float]:
    return parse_vector(string(v))


def zoned_timestamp(zone: dt.tzinfo, *, keep_digits: bool) -> Converter:
    def convert(v: Any) -> dt.datetime:
        text = string(v)
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


def decimal_number(scale: int | None, *, double: bool = False) -> Converter:
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


def connect_decimal(scale: int | None) -> Converter:
    """Kafka Connect ``Decimal``: unscaled bytes (base64 in JSON with ``decimal.format=BASE64``, raw in Avro) or
    a JSON number (NUMERIC)."""
    from_bytes = decimal_bytes(scale)
    from_number = decimal_number(scale)

    def convert(v: Any) -> Decimal:
        result: Decimal = from_bytes(v) if type(v) is str or type(v) is bytes else from_number(v)
        return result

    return convert


def integral(decimal: Converter) -> Converter:
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


def decimal_bytes(scale: int | None) -> Converter:
    if scale is None:
        raise SchemaError("a precise DECIMAL needs its scale (schema parameter or user TableSchema)")

    def convert(v: Any) -> Decimal:
        unscaled = int.from_bytes(base64_bytes(v), "big", signed=True)
        return Decimal(unscaled).scaleb(-scale, context=WIDE_DECIMAL)

    return convert


def decimal_variable(v: Any) -> Decimal:
    """``io.debezium.data.VariableScaleDecimal``: ``{scale, value}`` with base64 big-endian unscaled bytes."""
    if type(v) is not dict:
        raise WireError(f"expected a {{scale, value}} object, got {json_kind(v)}")
    scale = integer(v.get("scale"))
    if not -1000 <= scale <= 1000:
        raise WireError(f"scale {scale} is out of range")
    unscaled = int.from_bytes(base64_bytes(v.get("value")), "big", signed=True)
    return Decimal(unscaled).scaleb(-scale, context=WIDE_DECIMAL)


def geometry(v: Any) -> Geometry:
    """Debezium's ``Geometry``/``Geography`` struct: ``wkb`` (base64 OGC WKB) and ``srid`` (null: unknown)."""
    if type(v) is not dict:
        raise WireError(f"expected a {{wkb, srid}} object, got {json_kind(v)}")
    srid = v.get("srid")
    if srid is not None:
        srid = integer(srid)
    wkb = base64_bytes(v.get("wkb"))
    if len(wkb) < 5 or wkb[0] not in (0, 1):
        raise WireError("wkb is not OGC Well-Known Binary")
    return Geometry(wkb=wkb, srid=srid)


def point(v: Any) -> Geometry:
    """Debezium's ``Point`` struct: ``x``, ``y`` and optionally ``wkb``/``srid``; the WKB is built when absent."""
    if type(v) is not dict:
        raise WireError(f"expected an {{x, y}} object, got {json_kind(v)}")
    if v.get("wkb") is not None:
        return geometry(v)
    srid = v.get("srid")
    return Geometry(wkb=wkb_point(number(v.get("x")), number(v.get("y"))), srid=None if srid is None else integer(srid))


def document(v: Any) -> Value:
    """A struct or map value kept as a JSON document (exactly parsed fractions become floats, as JSON has)."""
    if type(v) is Decimal:
        return int(v) if v == v.to_integral_value() and "." not in str(v) else float(v)
    if type(v) is dict:
        return {k: document(item) for k, item in v.items()}
    if type(v) is list:
        return [document(item) for item in v]
    return v


def struct_document(v: Any) -> Value:
    if type(v) is not dict:
        raise WireError(f"expected an object, got {json_kind(v)}")
    return document(v)


def map_document(v: Any) -> Value:
    # JsonConverter writes maps with string keys as objects, other maps as arrays of [key, value] pairs
    if type(v) is not dict and type(v) is not list:
        raise WireError(f"expected an object or an array of pairs, got {json_kind(v)}")
    return document(v)


def array(element: Converter) -> Converter:
    def convert(v: Any) -> list[Value]:
        if type(v) is not list:
            raise WireError(f"expected an array, got {json_kind(v)}")
        return [None if item is None else element(item) for item in v]

    return convert


def set_members(data_type: DataType) -> Converter:
    seen: dict[str, Value] = {}  # a SET column takes few distinct values: parse each once

    def convert(v: Any) -> Value:
        known = seen.get(v) if type(v) is str else None
        if known is not None:
            return known
        parsed = parse_set_text(string(v), data_type)
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
    return orjson.dumps(document(v)).decode()


def schemaless_json(v: Any) -> Value:
    """A JSON column without its field schema: a string document, or hstore's map (``hstore.handling.mode``)."""
    return map_document(v) if type(v) is dict else json_text(v)


UNTYPED: Final[Converter] = _text
TEXT_TYPE: Final = DataType(mysql_type=MySQLType.LONGTEXT)

CONVERSION_ERRORS: Final = (WireError, TextFormError, ValueError, TypeError, OverflowError, binascii.Error)
