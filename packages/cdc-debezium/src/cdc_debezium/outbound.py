"""Column types and values as TiCDC writes them into Debezium messages (reference table 2.4)."""

from __future__ import annotations

import base64
import datetime as dt
import struct
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final, Literal

from cdc_core.errors import EncodeError
from cdc_core.fitting import Change, change_to_fit
from cdc_core.gojson import Float32, Float64, float64
from cdc_core.schema import Column
from cdc_core.textual import (
    EPOCH_DATE,
    EPOCH_NAIVE,
    TextFormError,
    enum_name,
    format_json,
    format_vector,
    join_members,
    parse_text,
    set_names,
)
from cdc_core.types import MYSQL_TO_LOGICAL, DataType, LogicalType, LogicalTypeVisitor, MySQLType, by_logical_type
from cdc_core.values import EnumIndex, Geometry, SetBits, Value, ZeroTemporal, own_fsp
from cdc_debezium.names import PROTOCOL, Logical

_US: Final = dt.timedelta(microseconds=1)
_MS: Final = dt.timedelta(milliseconds=1)
_UTC: Final = dt.UTC
_TWO_64: Final = 1 << 64
_NO_UNSIGNED_SUFFIX: Final = frozenset(
    {MySQLType.YEAR, MySQLType.BIT, MySQLType.VARCHAR, MySQLType.CHAR, MySQLType.DECIMAL}
)
_INT_TYPES: Final = {
    (MySQLType.TINYINT, False): "int16",
    (MySQLType.TINYINT, True): "int16",
    (MySQLType.SMALLINT, False): "int16",
    (MySQLType.SMALLINT, True): "int32",
    (MySQLType.MEDIUMINT, False): "int32",
    (MySQLType.MEDIUMINT, True): "int32",
    (MySQLType.INT, False): "int32",
    (MySQLType.INT, True): "int64",
    (MySQLType.BIGINT, False): "int64",
    (MySQLType.BIGINT, True): "int64",
}


def tidb_type(data_type: DataType) -> str:
    """The ``tidb_type`` TiCDC adds with ``enable-tidb-extension``: type name plus `` unsigned``."""
    name = data_type.mysql_type.value
    if data_type.unsigned and data_type.mysql_type not in _NO_UNSIGNED_SUFFIX:
        return name + " unsigned"
    return name


ConnectType = tuple[str, Logical | None, dict[str, str] | None]


class _ConnectType(LogicalTypeVisitor[ConnectType]):
    """Kafka Connect (type, logical name, parameters) of a column type, as TiCDC writes field schemas."""

    def visit_int(self, data_type: DataType) -> ConnectType:
        return _INT_TYPES[(data_type.mysql_type, data_type.unsigned)], None, None

    def visit_float(self, data_type: DataType) -> ConnectType:
        return ("float" if data_type.decimal is None else "double"), None, None

    def visit_double(self, data_type: DataType) -> ConnectType:
        return "double", None, None

    def visit_decimal(self, data_type: DataType) -> ConnectType:
        return "double", None, None

    def visit_date(self, data_type: DataType) -> ConnectType:
        return "int32", Logical.DATE, None

    def visit_datetime(self, data_type: DataType) -> ConnectType:
        return "int64", Logical.TIMESTAMP if data_type.fsp <= 3 else Logical.MICRO_TIMESTAMP, None

    def visit_timestamp(self, data_type: DataType) -> ConnectType:
        return "string", Logical.ZONED_TIMESTAMP, None

    def visit_time(self, data_type: DataType) -> ConnectType:
        return "int64", Logical.MICRO_TIME, None

    def visit_year(self, data_type: DataType) -> ConnectType:
        return "int32", Logical.YEAR, None

    def visit_string(self, data_type: DataType) -> ConnectType:
        return "string", None, None

    def visit_bytes(self, data_type: DataType) -> ConnectType:
        return "string", None, None  # base64 text, as TiCDC writes binary

    def visit_enum(self, data_type: DataType) -> ConnectType:
        return "string", Logical.ENUM, {"allowed": join_members(data_type.elements or ())}

    def visit_set(self, data_type: DataType) -> ConnectType:
        return "string", Logical.ENUM_SET, {"allowed": ",".join(data_type.elements or ())}

    def visit_bit(self, data_type: DataType) -> ConnectType:
        if data_type.bit_width == 1:
            return "boolean", None, None
        return "bytes", Logical.BITS, {"length": str(data_type.bit_width)}

    def visit_json(self, data_type: DataType) -> ConnectType:
        return "string", Logical.JSON, None

    def visit_vector(self, data_type: DataType) -> ConnectType:
        return "string", Logical.VECTOR, None

    def visit_geometry(self, data_type: DataType) -> ConnectType:
        # as the Debezium MySQL/PostgreSQL connectors write spatial columns
        return "struct", Logical.POINT if data_type.mysql_type is MySQLType.POINT else Logical.GEOMETRY, None

    def visit_array(self, data_type: DataType) -> ConnectType:
        return "array", None, None  # as the Debezium PostgreSQL connector writes arrays


_CONNECT_TYPE: Final = _ConnectType()


def connect_type(data_type: DataType) -> ConnectType:
    """Kafka Connect (type, logical name, parameters) of a column type."""
    return _CONNECT_TYPE.visit(data_type)


_GEOMETRY_FIELDS: Final = [
    {"type": "bytes", "optional": False, "field": "wkb"},
    {"type": "int32", "optional": True, "field": "srid"},
]
_POINT_FIELDS: Final = [
    {"type": "double", "optional": False, "field": "x"},
    {"type": "double", "optional": False, "field": "y"},
    {"type": "bytes", "optional": True, "field": "wkb"},
    {"type": "int32", "optional": True, "field": "srid"},
]


def _no_nesting(_data_type: DataType) -> dict[str, Any]:
    return {}


def _geometry_nesting(data_type: DataType) -> dict[str, Any]:
    return {"fields": _POINT_FIELDS if data_type.mysql_type is MySQLType.POINT else _GEOMETRY_FIELDS}


def _array_nesting(data_type: DataType) -> dict[str, Any]:
    if data_type.item is None:
        raise EncodeError(PROTOCOL, "an ARRAY column needs its element type")
    kind, name, parameters = connect_type(data_type.item)
    items: dict[str, Any] = {"type": kind, "optional": True}
    if name is not None:
        items.update(name=name.value, version=1)
        if parameters is not None:
            items["parameters"] = parameters
    items.update(_nested_schema(data_type.item))
    return {"items": items}


_NESTING: Final[Mapping[LogicalType, Callable[[DataType], dict[str, Any]]]] = by_logical_type(
    int=_no_nesting,
    float=_no_nesting,
    double=_no_nesting,
    decimal=_no_nesting,
    date=_no_nesting,
    datetime=_no_nesting,
    timestamp=_no_nesting,
    time=_no_nesting,
    year=_no_nesting,
    string=_no_nesting,
    bytes=_no_nesting,
    enum=_no_nesting,
    set=_no_nesting,
    bit=_no_nesting,
    json=_no_nesting,
    vector=_no_nesting,
    geometry=_geometry_nesting,
    array=_array_nesting,
)


def _nested_schema(data_type: DataType) -> dict[str, Any]:
    """The struct ``fields`` or array ``items`` a field schema of ``data_type`` needs (empty for the others)."""
    return _NESTING[data_type.logical](data_type)


def field_schema(column: Column, *, tidb_extension: bool, zone: dt.tzinfo) -> dict[str, Any]:
    """One column's field schema, keys in TiCDC's order."""
    kind, name, parameters = connect_type(column.data_type)
    entry: dict[str, Any] = {}
    if tidb_extension:
        entry["tidb_type"] = tidb_type(column.data_type)
    entry["type"] = kind
    entry["optional"] = column.nullable
    if name is not None:
        entry["name"] = name.value
        if name is not Logical.VECTOR:
            entry["version"] = 1
        if parameters is not None:
            entry["parameters"] = parameters
    entry.update(_nested_schema(column.data_type))
    entry["field"] = column.name
    if column.default is not None:
        entry["default"] = schema_default(column, zone)
    return entry


def _is_now(text: str) -> bool:
    return text.strip().upper().startswith(("CURRENT_TIMESTAMP", "NOW("))


# How TiCDC writes a column's DEFAULT text, in the field schema and as the value of a NULL: "text" as is,
# "binary" as is in the schema and base64 as a value, "number" through float64 (schema only; a NULL's default
# is the typed wire value), "clock" like "wire" but CURRENT_TIMESTAMP/NOW() become the epoch, "wire" parsed
# and written as a value would be.
_DefaultForm = Literal["text", "binary", "number", "clock", "wire"]
_DEFAULT_FORM: Final[Mapping[LogicalType, _DefaultForm]] = by_logical_type(
    int="number",
    float="number",
    double="number",
    decimal="number",
    year="number",
    date="wire",
    datetime="clock",
    timestamp="clock",
    time="wire",
    string="text",
    bytes="binary",
    enum="text",
    set="text",
    bit="wire",
    json="wire",
    vector="wire",
    geometry="wire",
    array="wire",
)


def schema_default(column: Column, zone: dt.tzinfo) -> Any:
    """The ``default`` of a field schema: numbers via float64, temporals in their wire unit."""
    text = column.default
    data_type = column.data_type
    if text is None:
        return None
    form = _DEFAULT_FORM[data_type.logical]
    if form == "clock" and _is_now(text):
        return default_now(column)
    if form in ("text", "binary"):
        return text
    try:
        value = parse_text(text, data_type, _UTC)
    except (TextFormError, ValueError) as exc:
        raise EncodeError(PROTOCOL, f"default {text!r}: {exc}", field=column.name) from exc
    if form == "number":
        return Float64(value)
    return wire_value(value, column, zone)


def default_now(column: Column) -> Any:
    if column.data_type.logical is LogicalType.TIMESTAMP:
        return None if column.nullable else "1970-01-01T00:00:00Z"
    return 0


def _shift_two_digit_year(year: int) -> int:
    """Debezium's rule: two-digit years 0..69 mean 20xx, 70..99 mean 19xx."""
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


def _date_days(value: dt.date) -> int:
    year = _shift_two_digit_year(value.year)
    if year != value.year:
        value = value.replace(year=year)
    return (value - EPOCH_DATE).days


def _datetime_units(value: dt.datetime, unit: dt.timedelta) -> int:
    year = _shift_two_digit_year(value.year)
    if year != value.year:
        value = value.replace(year=year)
    return (value.replace(tzinfo=None) - EPOCH_NAIVE) // unit


def zoned_text(value: dt.datetime, fsp: int | None, zone: dt.tzinfo) -> str:
    """``YYYY-MM-DDTHH:MM:SS[.fff]Z`` in UTC with exactly fsp digits of the microsecond field (the value's own
    digits when the fsp is unknown)."""
    if fsp is None:
        fsp = own_fsp(value)  # before the conversion, which forgets the digits the value was read with
    moment = value.replace(tzinfo=zone) if value.tzinfo is None else value
    utc = moment.astimezone(_UTC)
    text = f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    if fsp > 0:
        text += "." + f"{utc.microsecond:06d}"[:fsp]
    return text + "Z"


def _bits(value: int, width: int) -> str:
    size = (width + 7) // 8
    return base64.b64encode(value.to_bytes(8, "little")[:size]).decode("ascii")


# One writer per logical type: the payload form of one non-NULL typed value (TypeError/ValueError when the
# value is mistyped). A dict lookup instead of an if-chain keeps the per-value cost flat across types.
_Writer = Callable[[Value, Column, dt.tzinfo], Any]


def _w_int(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    number = _as_int(value)
    data_type = column.data_type
    if number >= 1 << 63 and data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned:
        return number - _TWO_64
    return number


def _w_string(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    if type(value) is not str and not isinstance(value, str):
        raise TypeError(f"expected str, got {type(value).__name__}")
    return value


def _w_bytes(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    return base64.b64encode(value).decode("ascii")


def _w_double(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    return float64(float(value))


def _w_float(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    return Float32(value) if column.data_type.decimal is None else Float64(Float32(value))


def _w_decimal(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    return float64(float(Decimal(value)))


def _w_year(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    return _as_int(value)


def _w_date(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    if isinstance(value, ZeroTemporal):
        return None if column.nullable else 0
    if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
        raise TypeError(f"expected date, got {type(value).__name__}")
    return _date_days(value)


def _w_datetime(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    if isinstance(value, ZeroTemporal):
        return None if column.nullable else 0
    if not isinstance(value, dt.datetime):
        raise TypeError(f"expected datetime, got {type(value).__name__}")
    return _datetime_units(value, _MS if column.data_type.fsp <= 3 else _US)


def _w_timestamp(value: Value, column: Column, zone: dt.tzinfo) -> Any:
    if isinstance(value, ZeroTemporal):
        return "1970-01-01T00:00:00Z"
    if not isinstance(value, dt.datetime):
        raise TypeError(f"expected datetime, got {type(value).__name__}")
    return zoned_text(value, column.data_type.known_fsp, zone)


def _w_time(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    if not isinstance(value, dt.timedelta):
        raise TypeError(f"expected timedelta, got {type(value).__name__}")
    return value // _US


def _w_enum(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    if isinstance(value, EnumIndex):
        named = enum_name(value.index, column.data_type)
        return named if isinstance(named, str) else ""
    if not isinstance(value, str):
        raise TypeError(f"expected str, got {type(value).__name__}")
    return value


def _w_set(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    if isinstance(value, SetBits):
        names = set_names(value.bits, column.data_type)
        return "" if isinstance(names, SetBits) else ",".join(names)
    if not isinstance(value, tuple | list):
        raise TypeError(f"expected tuple of names, got {type(value).__name__}")
    return ",".join(value)


def _w_bit(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    number = _as_int(value)
    width = column.data_type.bit_width
    if width == 1:
        return number != 0
    return _bits(number, width)


def _w_json(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    return format_json(value)


def _w_vector(value: Value, _column: Column, _zone: dt.tzinfo) -> Any:
    return format_vector(value)


def _w_geometry(value: Value, column: Column, _zone: dt.tzinfo) -> Any:
    if not isinstance(value, Geometry):
        raise TypeError(f"expected Geometry, got {type(value).__name__}")
    wkb = base64.b64encode(value.wkb).decode("ascii")
    if column.data_type.mysql_type is MySQLType.POINT:
        x, y = point_coordinates(value.wkb)
        return {"x": float64(x), "y": float64(y), "wkb": wkb, "srid": value.srid}
    return {"wkb": wkb, "srid": value.srid}


def point_coordinates(wkb: bytes) -> tuple[float, float]:
    """x and y of a 2D WKB point (ValueError for any other geometry)."""
    if len(wkb) != 21 or wkb[0] not in (0, 1):
        raise ValueError("a POINT value must be a 2D WKB point")
    order = "<" if wkb[0] == 1 else ">"
    kind, x, y = struct.unpack(order + "Idd", wkb[1:])
    if kind != 1:
        raise ValueError(f"a POINT value must be a WKB point, got geometry type {kind}")
    return x, y


def _w_array(value: Value, column: Column, zone: dt.tzinfo) -> Any:
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    item = column.data_type.item
    if item is None:
        raise ValueError("an ARRAY column needs its element type")
    element = Column(name=column.name, data_type=item)
    write = WRITERS[item.logical]
    return [None if v is None else write(v, element, zone) for v in value]


WRITERS: Final[Mapping[LogicalType, _Writer]] = by_logical_type(
    int=_w_int,
    float=_w_float,
    double=_w_double,
    decimal=_w_decimal,
    date=_w_date,
    datetime=_w_datetime,
    timestamp=_w_timestamp,
    time=_w_time,
    year=_w_year,
    string=_w_string,
    bytes=_w_bytes,
    enum=_w_enum,
    set=_w_set,
    bit=_w_bit,
    json=_w_json,
    vector=_w_vector,
    geometry=_w_geometry,
    array=_w_array,
)


def wire_value(value: Value, column: Column, zone: dt.tzinfo) -> Any:
    """The payload form of one non-NULL typed value (raises TypeError/ValueError on a mistyped value)."""
    return WRITERS[MYSQL_TO_LOGICAL[column.data_type.mysql_type]](value, column, zone)


def _as_int(value: Value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected int, got {type(value).__name__}")
    return value


def null_value(column: Column, zone: dt.tzinfo) -> Any:
    """What TiCDC writes for SQL NULL: the column default when it has one (Kafka Connect's null replacement)."""
    text = column.default
    if text is None:
        return None
    form = _DEFAULT_FORM[column.data_type.logical]
    if form == "clock" and _is_now(text):
        return default_now(column)
    if form == "text":
        return text
    if form == "binary":
        return base64.b64encode(text.encode("utf-8")).decode("ascii")
    try:
        return wire_value(parse_text(text, column.data_type, zone), column, zone)
    except (TextFormError, ValueError, TypeError) as exc:
        raise EncodeError(PROTOCOL, f"default {text!r}: {exc}", field=column.name) from exc


# ------------------------------------------------------------------------------------- values changed to fit
#
# What TiCDC's Debezium form cannot hold, checked after a value is written: (reason, example) when the wire
# value is not the typed value (a DECIMAL as a double, a fraction below the unit, a zero date, a member index
# without names...), None when it is. The reason is the same for every value of a column changed alike.

_Check = Callable[[Value, Any, Column], Change]


def _decimal_change(value: Value, wire: Any, _column: Column) -> Change:
    written = Decimal(repr(float(wire)))
    if written == Decimal(value):
        return None
    return "DECIMAL written as a double (Debezium's decimal.handling.mode=double)", f"{value} written as {wire!r}"


def _two_digit_year(value: dt.date) -> Change:
    if _shift_two_digit_year(value.year) == value.year:
        return None
    return "years 0-99 shifted as Debezium reads two-digit years", f"{value.isoformat()} written as year +1900/+2000"


def _zero(value: Value, wire: Any) -> Change:
    return "zero date written as " + ("null" if wire is None else repr(wire)), f"{value} written as {wire!r}"


def _date_change(value: Value, wire: Any, _column: Column) -> Change:
    return _zero(value, wire) if isinstance(value, ZeroTemporal) else _two_digit_year(value)


def _datetime_change(value: Value, wire: Any, column: Column) -> Change:
    if isinstance(value, ZeroTemporal):
        return _zero(value, wire)
    if column.data_type.fsp <= 3 and value.microsecond % 1000:
        return "microseconds cut to milliseconds (io.debezium.time.Timestamp)", f"{value.isoformat()} written as {wire}"
    return _two_digit_year(value)


def _timestamp_change(value: Value, wire: Any, column: Column) -> Change:
    return _zero(value, wire) if isinstance(value, ZeroTemporal) else change_to_fit(value, column.data_type)


def _member_change(value: Value, wire: Any, _column: Column) -> Change:
    if isinstance(value, EnumIndex | SetBits) and wire == "":
        return 'ENUM/SET members without their names written as ""', f'{value!r} written as ""'
    return None


def _bit_change(value: Value, wire: Any, column: Column) -> Change:
    width = column.data_type.bit_width
    if value >> width:
        return f"BIT value wider than its width {width}", f"{value} written as {wire!r}"
    return None


CHANGES: Final[Mapping[LogicalType, _Check | None]] = by_logical_type(
    int=None,
    float=None,
    double=None,
    decimal=_decimal_change,
    date=_date_change,
    datetime=_datetime_change,
    timestamp=_timestamp_change,
    time=None,
    year=None,
    string=None,
    bytes=None,
    enum=_member_change,
    set=_member_change,
    bit=_bit_change,
    json=None,
    vector=None,
    geometry=None,
    array=None,
)
"""How each type's values may change on the way to TiCDC's Debezium form (None: they cannot)."""


def null_change(column: Column, wire: Any) -> Change:
    """A NULL written as the column's default (TiCDC's Kafka Connect null replacement)."""
    if wire is None:
        return None
    return "NULL written as the column default (Kafka Connect's replace.null.with.default)", f"NULL written as {wire!r}"
