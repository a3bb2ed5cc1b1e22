"""TiDB's textual value forms, both ways.

String-based protocols (Simple JSON, Canal-JSON, Avro string fields) carry values in the exact text TiDB
prints: DECIMAL padded to its scale, temporal fractions of exactly fsp digits, FLOAT in 32-bit shortest
digits without exponent, JSON with ``": "`` and ``", "``. Encoders must reproduce these bytes; decoders
turn them back into the typed values of `cdc_core.values`.

Where the scale or fsp is unknown (None), a value is written with its own digits (a Decimal's exponent,
`cdc_core.values.own_fsp`). Where a known one is smaller than the value's digits, the value is rounded or cut as
TiDB would (`cdc_core.fitting.change_to_fit` tells an encoder so).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import struct
from collections.abc import Callable, Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cdc_core.errors import ConfigError
from cdc_core.types import DataType, LogicalType, by_logical_type
from cdc_core.values import EnumIndex, Geometry, SetBits, Value, ZeroTemporal, own_fsp, with_fsp

EPOCH_DATE: Final = dt.date(1970, 1, 1)
EPOCH_NAIVE: Final = dt.datetime(1970, 1, 1)
UTC: Final = dt.UTC


class TextFormError(ValueError):
    """A textual value does not match its column type; codecs turn it into a positioned DecodeError."""


# ---------------------------------------------------------------------------------------------- floats


def to_float32(value: float) -> float:
    """Round a float to the nearest IEEE-754 single, as a Python float."""
    try:
        result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError as exc:  # beyond FLT_MAX: not a FLOAT value
        raise TextFormError(f"{value!r} is out of the FLOAT range") from exc
    return result


def shortest_float32(value: float) -> str:
    """Shortest decimal digits (``%g`` style) that read back as the same float32."""
    f32 = to_float32(value)
    for precision in range(1, 10):
        text = f"{f32:.{precision}g}"
        try:
            if to_float32(float(text)) == f32:
                return text
        except TextFormError:  # rounding near FLT_MAX can step over it; more digits will not
            continue
    return f"{f32:.9g}"


def float32_value(value: float) -> float:
    """The decoded value of a FLOAT: the float32 nearest ``value``, held as its shortest decimal digits.

    A FLOAT column holds a 32-bit float; widening it to a Python float exposes digits the column never had
    (``9.9`` becomes ``9.899999618530273``). Every decoder returns this form instead, so that ``9.9`` written
    by one protocol reads as ``9.9`` from every protocol, and encoders (which round to float32) write it back
    as the same 32-bit value.
    """
    return float(shortest_float32(value))


def _positional(text: str) -> str:
    if text in ("inf", "-inf", "nan"):
        raise TextFormError(f"non-finite float {text}")
    out = format(Decimal(text), "f")
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return out


def format_float32(value: float) -> str:
    """Go ``strconv.FormatFloat(v, 'f', -1, 32)``: shortest float32 digits, never an exponent."""
    return _positional(shortest_float32(value))


def format_float64(value: float) -> str:
    """Go ``strconv.FormatFloat(v, 'f', -1, 64)``."""
    return _positional(repr(float(value)))


def format_float_es6(value: float, *, bits: int = 64, exponent_digits: int = 1) -> str:
    """ECMAScript-style number text as Go's JSON writers print floats.

    Plain digits for 1e-6 <= |v| < 1e21, otherwise shortest digits with an exponent like ``1e-7``/``1e+21``;
    ``exponent_digits=2`` keeps Go's ``strconv`` exponent of at least two digits (``1e-07``), as
    json-iterator 1.1.12 prints.
    """
    if math.isnan(value) or math.isinf(value):
        raise TextFormError(f"non-finite float {value}")
    digits = shortest_float32(value) if bits == 32 else repr(float(value))
    magnitude = abs(float(digits))
    if magnitude == 0 or 1e-6 <= magnitude < 1e21:
        return _positional(digits)
    mantissa, _, exponent = f"{Decimal(digits):e}".partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    exp = int(exponent)
    return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):0{exponent_digits}d}"


# --------------------------------------------------------------------------------------------- decimal


# Wide enough for DECIMAL(65,30) so that quantizing never overflows the thread's default 28 digits.
WIDE_DECIMAL: Final = Context(prec=100)


def format_decimal(value: Decimal, scale: int | None) -> str:
    """TiDB's MyDecimal text: exactly ``scale`` fractional digits; with ``scale`` unknown, the value's own."""
    if not value.is_finite():
        raise TextFormError(f"decimal {value} is not a finite number")
    if scale is None:
        return format(value, "f")
    quantum = Decimal(1).scaleb(-scale)
    try:
        # MySQL DECIMAL has up to 65 digits; the default context (28 digits) would reject wide values.
        quantized = value.quantize(quantum, context=WIDE_DECIMAL)
    except InvalidOperation as exc:
        raise TextFormError(f"decimal {value} does not fit scale {scale}") from exc
    return format(quantized, "f")


def parse_decimal(text: str) -> Decimal:
    try:
        result = Decimal(text.strip())
    except InvalidOperation as exc:
        raise TextFormError(f"not a decimal: {text!r}") from exc
    if not result.is_finite():
        raise TextFormError(f"not a finite decimal: {text!r}")
    return result


def at_scale(value: Decimal, scale: int | None) -> Decimal:
    """``value`` padded to a column's declared scale (``12.34`` in DECIMAL(10,4) is ``12.3400``).

    The canonical contract: a DECIMAL value carries its column's scale. A value with more fractional digits
    than the scale is kept as written (no protocol writes one; rounding it would hide the producer's error).
    """
    if scale is None or -value.as_tuple().exponent >= scale:  # type: ignore[operator]
        return value
    try:
        return value.quantize(Decimal(1).scaleb(-scale), context=WIDE_DECIMAL)
    except InvalidOperation as exc:
        raise TextFormError(f"decimal {value} does not fit scale {scale}") from exc


# -------------------------------------------------------------------------------------------- temporal

# ASCII digits only (a str pattern's \d also matches Arabic-Indic and other Unicode digits, which int() reads), and
# \Z, not $ (which also matches before a trailing newline)
_DATE_RE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_DATETIME_RE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\Z", re.ASCII)
_TIME_RE: Final = re.compile(r"^(-)?(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\Z", re.ASCII)


def _fraction(digits: str | None) -> int:
    """Microseconds from up to 9 fractional digits (beyond 6 truncated, as TiDB never sends them)."""
    if not digits:
        return 0
    return int((digits + "000000")[:6])


def _fraction_text(microsecond: int, fsp: int) -> str:
    return "" if fsp <= 0 else "." + f"{microsecond:06d}"[:fsp]


_FRACTION_DIGITS: Final = re.compile(r"\.(\d+)", re.ASCII)


def fraction_digits(text: str) -> int:
    """How many fraction digits a temporal text has (0 without a fraction; beyond 6 count as 6)."""
    found = _FRACTION_DIGITS.search(text)
    return min(len(found[1]), 6) if found else 0


def keeping_digits(parse: Callable[[str], Value]) -> Callable[[str], Value]:
    """``parse`` for a column whose fsp is unknown: its DATETIME/TIMESTAMP/TIME values remember their text's
    fraction digits (`cdc_core.values.with_fsp`), so that an encoder writes ``56.000`` back, not ``56``."""

    def parse_keeping(text: str) -> Value:
        value = parse(text)
        if isinstance(value, dt.datetime | dt.timedelta):
            return with_fsp(value, fraction_digits(text))
        return value

    return parse_keeping


def parse_date(text: str) -> dt.date | ZeroTemporal:
    match = _DATE_RE.match(text)
    if match is None:
        raise TextFormError(f"not a DATE: {text!r}")
    year, month, day = (int(g) for g in match.groups())
    if month == 0 or day == 0 or year == 0:
        return ZeroTemporal(text)
    try:
        return dt.date(year, month, day)
    except ValueError as exc:
        raise TextFormError(f"not a valid DATE: {text!r}") from exc


def format_date(value: dt.date | ZeroTemporal) -> str:
    if isinstance(value, ZeroTemporal):
        return value.text
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def parse_datetime(text: str) -> dt.datetime | ZeroTemporal:
    """A naive DATETIME, or `ZeroTemporal` for zero and partial-zero values."""
    match = _DATETIME_RE.match(text)
    if match is None:
        raise TextFormError(f"not a DATETIME: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    if month == 0 or day == 0 or year == 0:
        return ZeroTemporal(text)
    try:
        return dt.datetime(year, month, day, hour, minute, second, _fraction(match[7]))
    except ValueError as exc:
        raise TextFormError(f"not a valid DATETIME: {text!r}") from exc


def format_datetime(value: dt.datetime | ZeroTemporal, fsp: int | None) -> str:
    """``YYYY-MM-DD hh:mm:ss[.f]`` with ``fsp`` fraction digits, or the value's own (`own_fsp`) when unknown."""
    if isinstance(value, ZeroTemporal):
        return _zero_with_fsp(value.text, fsp)
    digits = own_fsp(value) if fsp is None else fsp
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{_fraction_text(value.microsecond, digits)}"
    )


def _zero_with_fsp(text: str, fsp: int | None) -> str:
    if " " not in text:
        text += " 00:00:00"
    if fsp is not None and fsp > 0 and "." not in text:
        text += "." + "0" * fsp
    return text


def parse_timestamp(text: str, zone: dt.tzinfo) -> dt.datetime | ZeroTemporal:
    """A TIMESTAMP printed as local time in ``zone`` (the TiCDC server zone), as an aware datetime."""
    naive = parse_datetime(text)
    if isinstance(naive, ZeroTemporal):
        return naive
    return naive.replace(tzinfo=zone)


def format_timestamp(value: dt.datetime | ZeroTemporal, fsp: int | None, zone: dt.tzinfo) -> str:
    """The local time of ``value`` in ``zone``, as `format_datetime` writes it."""
    if isinstance(value, ZeroTemporal):
        return _zero_with_fsp(value.text, fsp)
    if value.tzinfo is None:
        raise TextFormError(f"TIMESTAMP value {value!r} has no time zone")
    digits = own_fsp(value) if fsp is None else fsp  # before the conversion, which forgets the written digits
    return format_datetime(value.astimezone(zone).replace(tzinfo=None), digits)


def parse_time(text: str) -> dt.timedelta:
    """MySQL TIME ``[-]hhh:mm:ss[.ffffff]`` as a signed timedelta (hours up to 838)."""
    match = _TIME_RE.match(text.strip())
    if match is None:
        raise TextFormError(f"not a TIME: {text!r}")
    sign, hours, minutes, seconds, fraction = match.groups()
    if int(hours) > 838 or int(minutes) > 59 or int(seconds) > 59:  # MySQL's range: -838:59:59 to 838:59:59
        raise TextFormError(f"not a valid TIME: {text!r}")
    magnitude = dt.timedelta(
        hours=int(hours), minutes=int(minutes), seconds=int(seconds), microseconds=_fraction(fraction)
    )
    return -magnitude if sign else magnitude


def format_time(value: dt.timedelta, fsp: int | None) -> str:
    """``[-]hh:mm:ss[.f]`` with ``fsp`` fraction digits, or the value's own (`own_fsp`) when unknown."""
    digits = own_fsp(value) if fsp is None else fsp
    micros = value // dt.timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"{sign}{hours:02d}:{minute:02d}:{second:02d}{_fraction_text(micro, digits)}"


def resolve_zone(name: str | None) -> dt.tzinfo:
    """The TiCDC ``--tz`` rules: empty, ``system`` or ``local`` mean this host's zone; else an IANA name.

    Fixed offsets such as ``+08:00`` are accepted too.
    """
    if name is None or name.strip().lower() in ("", "system", "local"):
        local = dt.datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    if name.upper() in ("UTC", "Z"):
        return UTC
    offset = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", name.strip())
    if offset:
        sign = -1 if offset[1] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(offset[2]), minutes=int(offset[3])))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"unknown time zone {name!r}") from exc


def zone_name(zone: dt.tzinfo) -> str:
    """An IANA-style name for a zone, as Simple's ``location`` field carries it."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is UTC:
        return "UTC"
    return str(zone)


# ---------------------------------------------------------------------------------------- enum and set


def enum_name(index: int, data_type: DataType) -> str | EnumIndex:
    """ENUM 1-based index to member name; 0 is MySQL's invalid value ``""``; unknown members keep the index."""
    if index == 0:
        return ""
    elements = data_type.elements
    if elements and 1 <= index <= len(elements):
        return elements[index - 1]
    return EnumIndex(index)


def enum_index(value: str | EnumIndex, data_type: DataType) -> int:
    if isinstance(value, EnumIndex):
        return value.index
    if value == "":
        return 0
    elements = data_type.elements or ()
    try:
        return elements.index(value) + 1
    except ValueError as exc:
        raise TextFormError(f"{value!r} is not a member of enum{elements}") from exc


def set_names(bits: int, data_type: DataType) -> tuple[str, ...] | SetBits:
    elements = data_type.elements
    if elements is None or (bits >> len(elements)) != 0:
        return SetBits(bits)
    return tuple(e for i, e in enumerate(elements) if bits & (1 << i))


def set_bits(value: tuple[str, ...] | list[str] | SetBits, data_type: DataType) -> int:
    if isinstance(value, SetBits):
        return value.bits
    elements = data_type.elements or ()
    bits = 0
    for name in value:
        try:
            bits |= 1 << elements.index(name)
        except ValueError as exc:
            raise TextFormError(f"{name!r} is not a member of set{elements}") from exc
    return bits


def parse_set_text(text: str, data_type: DataType) -> tuple[str, ...] | SetBits:
    """A comma-joined SET (as Debezium and Avro print it) back to member names, in declaration order."""
    if text == "":
        return ()
    names = text.split(",")
    elements = data_type.elements
    if elements is None:
        return tuple(names)
    return set_names(set_bits(names, data_type), data_type)


def join_members(members: tuple[str, ...] | list[str]) -> str:
    """ENUM/SET members as one ``allowed`` text, commas inside a member escaped as ``\\,`` (TiCDC's Debezium
    Enum and Avro enum/set parameters)."""
    return ",".join(member.replace(",", "\\,") for member in members)


def split_members(allowed: str) -> tuple[str, ...]:
    """Inverse of `join_members`: split on commas not preceded by a backslash (``""`` has no members)."""
    if allowed == "":
        return ()
    members: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(allowed):
        ch = allowed[i]
        if ch == "\\" and i + 1 < len(allowed) and allowed[i + 1] == ",":
            current.append(",")
            i += 2
            continue
        if ch == ",":
            members.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    members.append("".join(current))
    return tuple(members)


# ------------------------------------------------------------------------------------------ json, vector


def format_json(document: object) -> str:
    """TiDB's JSON text: ``": "`` after keys and ``", "`` between items, raw UTF-8."""
    return json.dumps(document, separators=(", ", ": "), ensure_ascii=False)


def parse_json(text: str) -> Value:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise TextFormError(f"not a JSON document: {exc}") from exc


def format_vector(value: list[float]) -> str:
    return "[" + ",".join(format_float32(v) for v in value) + "]"


def parse_vector(text: str) -> list[float]:
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise TextFormError(f"not a VECTOR: {text!r}")
    inner = body[1:-1].strip()
    try:
        return [] if not inner else [to_float32(float(part)) for part in inner.split(",")]
    except ValueError as exc:
        raise TextFormError(f"not a VECTOR: {text!r}") from exc


# -------------------------------------------------------------------------------------------- geometry


def parse_mysql_geometry(raw: bytes) -> Geometry:
    """MySQL's internal geometry bytes (4-byte little-endian SRID, then OGC WKB), as Canal prints them.

    SRID 0 is MySQL's "none given" and becomes None, as Debezium writes it, so both protocols agree.
    """
    if len(raw) < 9:  # SRID + byte order + type at least
        raise TextFormError(f"a MySQL geometry value has at least 9 bytes, got {len(raw)}")
    if raw[4] not in (0, 1):
        raise TextFormError(f"not a WKB geometry: byte order marker {raw[4]} (expected 0 or 1)")
    return Geometry(wkb=raw[4:], srid=int.from_bytes(raw[:4], "little") or None)


def format_mysql_geometry(value: Geometry) -> bytes:
    """Inverse of `parse_mysql_geometry` (an unknown SRID is written as 0, MySQL's default)."""
    if not isinstance(value, Geometry):
        raise TextFormError(f"expected a Geometry, got {type(value).__name__}")
    return (value.srid or 0).to_bytes(4, "little") + value.wkb


def wkb_point(x: float, y: float) -> bytes:
    """The little-endian OGC WKB of a 2D point (what Debezium's Point builds from its ``x``/``y``)."""
    return b"\x01" + struct.pack("<Idd", 1, x, y)


# ----------------------------------------------------------------------------------------- dispatchers


def _python_only(text: str) -> bool:
    """Digit groups (``1_000``) and non-ASCII digits or blanks, which int() and float() read but TiDB never prints."""
    return "_" in text or not text.isascii()


def parse_int(text: str) -> int:
    try:
        if _python_only(text):
            raise ValueError  # worded below, as int()'s own refusal
        return int(text.strip())
    except ValueError as exc:
        raise TextFormError(f"not an integer: {text!r}") from exc


def parse_float(text: str) -> float:
    try:
        if _python_only(text):
            raise ValueError  # worded below, as float()'s own refusal
        return float(text)
    except ValueError as exc:
        raise TextFormError(f"not a number: {text!r}") from exc


def _plain_text(value: Value, _data_type: DataType, _zone: dt.tzinfo) -> str:
    if not isinstance(value, str):
        raise TextFormError(f"expected text, got {type(value).__name__}")
    return value


def _no_text(_value: object, data_type: DataType, _zone: dt.tzinfo) -> Any:
    raise TextFormError(f"{data_type.type_text()} has no plain text form ({data_type.logical.value})")


def _int_text(value: Value, _data_type: DataType, _zone: dt.tzinfo) -> str:
    return str(int(value))


_TextWriter = Callable[[Any, DataType, dt.tzinfo], str]
_TEXT_WRITERS: Final[Mapping[LogicalType, _TextWriter]] = by_logical_type(
    int=_int_text,
    year=_int_text,
    bit=_int_text,
    float=lambda v, t, z: format_float32(v),
    double=lambda v, t, z: format_float64(v),
    decimal=lambda v, t, z: format_decimal(Decimal(v), t.known_scale),
    date=lambda v, t, z: format_date(v),
    datetime=lambda v, t, z: format_datetime(v, t.known_fsp),
    timestamp=lambda v, t, z: format_timestamp(v, t.known_fsp, z),
    time=lambda v, t, z: format_time(v, t.known_fsp),
    enum=lambda v, t, z: str(enum_index(v, t)),
    set=lambda v, t, z: str(set_bits(v, t)),
    json=lambda v, t, z: format_json(v),
    vector=lambda v, t, z: format_vector(v),
    string=_plain_text,
    bytes=_no_text,
    geometry=_no_text,
    array=_no_text,
)


def format_text(value: Value, data_type: DataType, zone: dt.tzinfo = UTC) -> str:
    """The TiDB text of a non-binary value (binary columns are protocol-specific: base64 or latin-1).

    ENUM prints its index, SET its bitmask and BIT its unsigned value, as the mounter hands them to codecs.
    """
    try:
        return _TEXT_WRITERS[data_type.logical](value, data_type, zone)
    except (TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, TextFormError):
            raise
        raise TextFormError(f"{type(value).__name__} value {value!r} does not fit {data_type.type_text()}") from exc


_TextReader = Callable[[str, DataType, dt.tzinfo], Value]
_TEXT_READERS: Final[Mapping[LogicalType, _TextReader]] = by_logical_type(
    int=lambda s, t, z: parse_int(s),
    year=lambda s, t, z: parse_int(s),
    bit=lambda s, t, z: parse_int(s),
    float=lambda s, t, z: float32_value(parse_float(s)),
    double=lambda s, t, z: parse_float(s),
    decimal=lambda s, t, z: parse_decimal(s),
    date=lambda s, t, z: parse_date(s),
    datetime=lambda s, t, z: parse_datetime(s),
    timestamp=lambda s, t, z: parse_timestamp(s, z),
    time=lambda s, t, z: parse_time(s),
    enum=lambda s, t, z: enum_name(parse_int(s), t),
    set=lambda s, t, z: set_names(parse_int(s), t),
    json=lambda s, t, z: parse_json(s),
    vector=lambda s, t, z: parse_vector(s),
    string=lambda s, t, z: s,
    bytes=_no_text,
    geometry=_no_text,
    array=_no_text,
)


def parse_text(text: str, data_type: DataType, zone: dt.tzinfo = UTC) -> Value:
    """Inverse of `format_text`: TiDB text to the typed value (binary columns excluded)."""
    return _TEXT_READERS[data_type.logical](text, data_type, zone)
