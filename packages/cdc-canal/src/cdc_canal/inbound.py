"""Column types from ``mysqlType``/``sqlType`` and wire strings back to typed values.

Both flavours meet here: TiCDC's plain type names (``int unsigned``, ``enum``) and official Canal's full
definitions (``int(10) unsigned``, ``enum('a','b')``). Parsed types are cached per distinct type text, so
the per-value work is one call of a parser chosen once.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Final

import orjson

from cdc_canal.names import SQL_CODE_FALLBACK
from cdc_core.errors import SchemaError
from cdc_core.textual import (
    TextFormError,
    at_scale,
    enum_name,
    float32_value,
    keeping_digits,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_json,
    parse_mysql_geometry,
    parse_set_text,
    parse_time,
    parse_vector,
    set_names,
)
from cdc_core.types import DataType, LogicalType, MySQLType, by_logical_type, integer_range, parse_type_text
from cdc_core.values import EnumIndex, SetBits, Value

Parser = Callable[[str], Value]


class TypeResolutionError(ValueError):
    """A column's type cannot be determined; the decoder turns it into a positioned DecodeError."""


# A column the message gives no type for at all (official Canal INIT snapshots can carry a column that
# ``mysqlType`` and ``sqlType`` lack): its wire string is all that is known, so it is kept as text.
UNTYPED_COLUMN: Final = DataType(mysql_type=MySQLType.LONGTEXT)


def resolve_type(mysql_type: object, sql_code: object) -> DataType:
    """The column type: ``mysqlType`` text first, ``sqlType`` only where it is all there is.

    The declared type decides text against binary: Canal reports TEXT columns with a binary ``sqlType``
    (LONGVARBINARY -4, VARBINARY -3) when it reads them from the binlog's BLOB storage, yet writes their values
    as text; a binary column's ``mysqlType`` says so itself (``varbinary(16)``, ``blob``, ``binary`` for TiCDC).
    A column with neither is text (`UNTYPED_COLUMN`); a ``mysqlType`` this library does not know falls back
    to a known ``sqlType`` code, and is an error only without one.
    """
    known_code = isinstance(sql_code, int) and not isinstance(sql_code, bool) and sql_code in SQL_CODE_FALLBACK
    if isinstance(mysql_type, str):
        try:
            data_type = _parse_canal_type_text(mysql_type)
        except SchemaError as exc:
            if known_code:
                return DataType(mysql_type=SQL_CODE_FALLBACK[sql_code])  # type: ignore[index]
            raise TypeResolutionError(str(exc)) from exc
        return data_type
    if mysql_type is not None:
        raise TypeResolutionError(f"mysqlType must be a string, got {type(mysql_type).__name__}")
    if known_code:
        return DataType(mysql_type=SQL_CODE_FALLBACK[sql_code])  # type: ignore[index]
    if sql_code is None:
        return UNTYPED_COLUMN
    raise TypeResolutionError(f"no mysqlType and no known sqlType code ({sql_code!r})")


def _parse_canal_type_text(text: str) -> DataType:
    # Canal prints ``tinyint(1)`` for BOOL and may add a charset clause after text types; the core parser
    # knows the MySQL grammar up to modifiers, so cut a trailing "character set ..." / "collate ..." clause.
    # Only after the parameter list, so that an enum member spelled "x collate y" is left alone.
    start = text.rfind(")") + 1
    lowered = text.lower()
    for marker in (" character set ", " charset ", " collate "):
        cut = lowered.find(marker, start)
        if cut > 0:
            text = text[:cut]
            lowered = lowered[:cut]
    return parse_type_text(text)


def make_parser(data_type: DataType, zone: dt.tzinfo) -> Parser:
    """A function from the wire string of ``data_type`` to its typed value (raises TextFormError)."""
    return PARSERS[data_type.logical](data_type, zone)


def _float32(text: str) -> float:
    return float32_value(parse_float(text))


def _decimal_parser(data_type: DataType) -> Parser:
    """DECIMAL text, padded to the column's declared scale (Canal prints ``1.5`` for ``1.50`` in DECIMAL(5,2))."""
    scale = data_type.decimal
    if scale is None:
        return parse_decimal
    return lambda text: at_scale(parse_decimal(text), scale)


def _geometry(text: str) -> Value:
    """A spatial value: Canal prints MySQL's internal bytes (SRID + WKB) as ISO-8859-1 text."""
    return parse_mysql_geometry(_latin1(text))


def _no_array(data_type: DataType) -> Parser:
    def parse(text: str) -> Value:
        raise TextFormError("canal-json has no ARRAY columns (MySQL has no array type)")

    return parse


_LONG_NUMBER: Final = re.compile(r"\d{19}")


def _json(text: str) -> Value:
    # orjson turns integers beyond 64 bits into floats; numbers that long go to the exact (stdlib) parser.
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the exact parser words the error
    return parse_json(text)


# Exactly the shapes MySQL prints, in ASCII digits: only these may take the standard library's C parsers, which
# also read week dates, zones, "T", comma fractions and basic forms; everything else goes to the strict parser.
_DATETIME_SHAPE: Final = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?", re.ASCII)
_DATE_SHAPE: Final = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def _datetime(text: str) -> Value:
    if _DATETIME_SHAPE.fullmatch(text):
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            pass  # zero and partial-zero dates, out-of-range fields: the exact parser decides
    return parse_datetime(text)


def _timestamp(text: str, zone: dt.tzinfo) -> Value:
    value = _datetime(text)
    return value.replace(tzinfo=zone) if isinstance(value, dt.datetime) else value


def _date(text: str) -> Value:
    if _DATE_SHAPE.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    return parse_date(text)


def _temporal(data_type: DataType, parse: Parser) -> Parser:
    """A temporal parser; where the fsp is unknown (TiCDC's plain ``datetime``), values keep their text's digits."""
    return parse if data_type.known_fsp is not None else keeping_digits(parse)


def _identity(text: str) -> str:
    return text


def _latin1(text: str) -> bytes:
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise TextFormError(f"binary value has a character above U+00FF at {exc.start}") from exc


def _int(text: str) -> int:
    # int() also accepts "1_000", blanks and non-ASCII digits; the wire never carries those.
    if text.isascii() and (text.isdigit() or (text[:1] == "-" and text[1:].isdigit())):
        return int(text)
    raise TextFormError(f"not an integer: {text!r}")


def _ranged_int(data_type: DataType) -> Parser:
    """Integer text, refused outside the column type's range (a value the column cannot hold is malformed)."""
    bounds = integer_range(data_type)
    if bounds is None:
        return _int
    low, high = bounds

    def parse(text: str) -> int:
        number = _int(text)
        if not low <= number <= high:
            raise TextFormError(f"{number} is out of range [{low}, {high}]")
        return number

    return parse


def _is_index(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _enum_parser(data_type: DataType) -> Parser:
    elements = data_type.elements or ()

    def parse(text: str) -> Value:
        if _is_index(text):
            index = int(text)
            if not elements and index != 0:
                return EnumIndex(index)
            named = enum_name(index, data_type)
            if isinstance(named, EnumIndex):
                raise TextFormError(f"enum index {index} is out of range for {len(elements)} members")
            return named
        if text in elements or text == "":
            return text  # official Canal may print the member name itself
        raise TextFormError(f"{text!r} is neither an enum index nor a member of {elements}")

    return parse


def _set_parser(data_type: DataType) -> Parser:
    elements = data_type.elements or ()

    def parse(text: str) -> Value:
        if _is_index(text):
            bits = int(text)
            if not elements:
                return SetBits(bits)
            names = set_names(bits, data_type)
            if isinstance(names, SetBits):
                raise TextFormError(f"set bits {bits} name more than {len(elements)} members")
            return names
        if elements:
            return parse_set_text(text, data_type)  # member names, comma-joined
        raise TextFormError(f"set value {text!r} is not a bitmask and the members are unknown")

    return parse


ParserFactory = Callable[[DataType, dt.tzinfo], Parser]

# One parser per logical type (Canal-JSON's wire strings); the completeness test keeps it total.
PARSERS: Final[Mapping[LogicalType, ParserFactory]] = by_logical_type(
    int=lambda t, z: _ranged_int(t),
    year=lambda t, z: _int,
    bit=lambda t, z: _ranged_int(t),
    float=lambda t, z: _float32,
    double=lambda t, z: parse_float,
    decimal=lambda t, z: _decimal_parser(t),
    date=lambda t, z: _date,
    datetime=lambda t, z: _temporal(t, _datetime),
    timestamp=lambda t, z: _temporal(t, lambda text: _timestamp(text, z)),
    time=lambda t, z: _temporal(t, parse_time),
    string=lambda t, z: _identity,
    bytes=lambda t, z: _latin1,
    enum=lambda t, z: _enum_parser(t),
    set=lambda t, z: _set_parser(t),
    json=lambda t, z: _json,
    vector=lambda t, z: parse_vector,
    geometry=lambda t, z: _geometry,
    array=lambda t, z: _no_array(t),
)


class TypeCache:
    """Parsed column types and value parsers, keyed by the (mysqlType, sqlType) pair seen on the wire."""

    def __init__(self, zone: dt.tzinfo) -> None:
        self.zone = zone
        self._entries: dict[tuple[object, object], tuple[DataType, Parser]] = {}

    def lookup(self, mysql_type: object, sql_code: object) -> tuple[DataType, Parser]:
        # A sqlType that is not an integer code says nothing; normalising it also keeps the key hashable.
        code = sql_code if isinstance(sql_code, int) and not isinstance(sql_code, bool) else None
        if not isinstance(mysql_type, str):
            data_type = resolve_type(mysql_type, code)
            return data_type, make_parser(data_type, self.zone)
        key = (mysql_type, code)
        entry = self._entries.get(key)
        if entry is None:
            data_type = resolve_type(mysql_type, code)
            entry = (data_type, make_parser(data_type, self.zone))
            if len(self._entries) < 4096:  # bounded: a hostile stream cannot grow it without limit
                self._entries[key] = entry
        return entry


__all__ = ["Parser", "TypeCache", "TypeResolutionError", "make_parser", "resolve_type"]
