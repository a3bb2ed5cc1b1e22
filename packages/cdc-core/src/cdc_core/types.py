"""The MySQL/TiDB type system: type names, their logical types, and column data types.

`MYSQL_TO_LOGICAL` is the one inbound table every adapter relies on; `LogicalType` is what values are typed
by. Type names are TiDB's lower-case names, where a binary charset turns ``char`` into ``binary``,
``varchar`` into ``varbinary`` and ``*text`` into ``*blob`` (as TiDB reports them in its schemas).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import StrEnum
from typing import Final, Generic, TypeVar, assert_never

import attrs

from cdc_core.errors import SchemaError


class MySQLType(StrEnum):
    TINYINT = "tinyint"
    SMALLINT = "smallint"
    MEDIUMINT = "mediumint"
    INT = "int"
    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    DATE = "date"
    DATETIME = "datetime"
    TIMESTAMP = "timestamp"
    TIME = "time"
    YEAR = "year"
    CHAR = "char"
    VARCHAR = "varchar"
    TINYTEXT = "tinytext"
    TEXT = "text"
    MEDIUMTEXT = "mediumtext"
    LONGTEXT = "longtext"
    BINARY = "binary"
    VARBINARY = "varbinary"
    TINYBLOB = "tinyblob"
    BLOB = "blob"
    MEDIUMBLOB = "mediumblob"
    LONGBLOB = "longblob"
    ENUM = "enum"
    SET = "set"
    BIT = "bit"
    JSON = "json"
    VECTOR = "vector"
    # MySQL's spatial types (Canal, Debezium MySQL/MariaDB; PostGIS and PostgreSQL's geometric types map here too)
    GEOMETRY = "geometry"
    POINT = "point"
    LINESTRING = "linestring"
    POLYGON = "polygon"
    MULTIPOINT = "multipoint"
    MULTILINESTRING = "multilinestring"
    MULTIPOLYGON = "multipolygon"
    GEOMETRYCOLLECTION = "geometrycollection"
    # PostgreSQL arrays (Debezium PostgreSQL): ``DataType.item`` is the element type
    ARRAY = "array"


class LogicalType(StrEnum):
    """How a value is typed in Python (see `cdc_core.values`)."""

    INT = "int"
    FLOAT = "float"  # 32-bit on the wire; Python float
    DOUBLE = "double"
    DECIMAL = "decimal"
    DATE = "date"
    DATETIME = "datetime"
    TIMESTAMP = "timestamp"
    TIME = "time"
    YEAR = "year"
    STRING = "string"
    BYTES = "bytes"
    ENUM = "enum"
    SET = "set"
    BIT = "bit"
    JSON = "json"
    VECTOR = "vector"
    GEOMETRY = "geometry"
    ARRAY = "array"


MYSQL_TO_LOGICAL: Final[Mapping[MySQLType, LogicalType]] = {
    MySQLType.TINYINT: LogicalType.INT,
    MySQLType.SMALLINT: LogicalType.INT,
    MySQLType.MEDIUMINT: LogicalType.INT,
    MySQLType.INT: LogicalType.INT,
    MySQLType.BIGINT: LogicalType.INT,
    MySQLType.FLOAT: LogicalType.FLOAT,
    MySQLType.DOUBLE: LogicalType.DOUBLE,
    MySQLType.DECIMAL: LogicalType.DECIMAL,
    MySQLType.DATE: LogicalType.DATE,
    MySQLType.DATETIME: LogicalType.DATETIME,
    MySQLType.TIMESTAMP: LogicalType.TIMESTAMP,
    MySQLType.TIME: LogicalType.TIME,
    MySQLType.YEAR: LogicalType.YEAR,
    MySQLType.CHAR: LogicalType.STRING,
    MySQLType.VARCHAR: LogicalType.STRING,
    MySQLType.TINYTEXT: LogicalType.STRING,
    MySQLType.TEXT: LogicalType.STRING,
    MySQLType.MEDIUMTEXT: LogicalType.STRING,
    MySQLType.LONGTEXT: LogicalType.STRING,
    MySQLType.BINARY: LogicalType.BYTES,
    MySQLType.VARBINARY: LogicalType.BYTES,
    MySQLType.TINYBLOB: LogicalType.BYTES,
    MySQLType.BLOB: LogicalType.BYTES,
    MySQLType.MEDIUMBLOB: LogicalType.BYTES,
    MySQLType.LONGBLOB: LogicalType.BYTES,
    MySQLType.ENUM: LogicalType.ENUM,
    MySQLType.SET: LogicalType.SET,
    MySQLType.BIT: LogicalType.BIT,
    MySQLType.JSON: LogicalType.JSON,
    MySQLType.VECTOR: LogicalType.VECTOR,
    MySQLType.GEOMETRY: LogicalType.GEOMETRY,
    MySQLType.POINT: LogicalType.GEOMETRY,
    MySQLType.LINESTRING: LogicalType.GEOMETRY,
    MySQLType.POLYGON: LogicalType.GEOMETRY,
    MySQLType.MULTIPOINT: LogicalType.GEOMETRY,
    MySQLType.MULTILINESTRING: LogicalType.GEOMETRY,
    MySQLType.MULTIPOLYGON: LogicalType.GEOMETRY,
    MySQLType.GEOMETRYCOLLECTION: LogicalType.GEOMETRY,
    MySQLType.ARRAY: LogicalType.ARRAY,
}

# Types of the model that TiDB has no column of (MySQL spatial types, PostgreSQL arrays): TiCDC-only protocols
# (Simple, Avro) can neither carry nor meet them.
NOT_IN_TIDB: Final = frozenset(
    t for t, logical in MYSQL_TO_LOGICAL.items() if logical in (LogicalType.GEOMETRY, LogicalType.ARRAY)
)

# Spellings MySQL accepts in DDL (and Canal/Debezium print) for the canonical names above.
TYPE_ALIASES: Final[Mapping[str, MySQLType]] = {
    "integer": MySQLType.INT,
    "int4": MySQLType.INT,
    "int8": MySQLType.BIGINT,
    "middleint": MySQLType.MEDIUMINT,
    "bool": MySQLType.TINYINT,
    "boolean": MySQLType.TINYINT,
    "numeric": MySQLType.DECIMAL,
    "dec": MySQLType.DECIMAL,
    "fixed": MySQLType.DECIMAL,
    "real": MySQLType.DOUBLE,
    "double precision": MySQLType.DOUBLE,
    "float4": MySQLType.FLOAT,
    "float8": MySQLType.DOUBLE,
    "character": MySQLType.CHAR,
    "character varying": MySQLType.VARCHAR,
    "vector<float32>": MySQLType.VECTOR,
    "tidbvectorfloat32": MySQLType.VECTOR,
    "geomcollection": MySQLType.GEOMETRYCOLLECTION,
}

# ``SERIAL`` is MySQL's shorthand for ``BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE``: the type part.
SERIAL: Final = "serial"

# Unsigned ranges, used by encoders that reinterpret unsigned values and by decoders that re-widen them.
INTEGER_BITS: Final[Mapping[MySQLType, int]] = {
    MySQLType.TINYINT: 8,
    MySQLType.SMALLINT: 16,
    MySQLType.MEDIUMINT: 24,
    MySQLType.INT: 32,
    MySQLType.BIGINT: 64,
}

# Display lengths TiDB reports when a column declares none (Simple `length`, Canal content-compatible text).
DEFAULT_LENGTHS: Final[Mapping[MySQLType, int]] = {
    MySQLType.TINYINT: 4,
    MySQLType.SMALLINT: 6,
    MySQLType.MEDIUMINT: 9,
    MySQLType.INT: 11,
    MySQLType.BIGINT: 20,
    MySQLType.FLOAT: 12,
    MySQLType.DOUBLE: 22,
    MySQLType.DECIMAL: 10,
    MySQLType.DATE: 10,
    MySQLType.DATETIME: 19,
    MySQLType.TIMESTAMP: 19,
    MySQLType.TIME: 10,
    MySQLType.YEAR: 4,
    MySQLType.BIT: 1,
    MySQLType.JSON: 4294967295,
    MySQLType.LONGTEXT: 4294967295,
    MySQLType.LONGBLOB: 4294967295,
    MySQLType.MEDIUMTEXT: 16777215,
    MySQLType.MEDIUMBLOB: 16777215,
    MySQLType.TEXT: 65535,
    MySQLType.BLOB: 65535,
    MySQLType.TINYTEXT: 255,
    MySQLType.TINYBLOB: 255,
    MySQLType.CHAR: 1,
    MySQLType.BINARY: 1,
}

_TEXT_TO_BINARY: Final[Mapping[MySQLType, MySQLType]] = {
    MySQLType.CHAR: MySQLType.BINARY,
    MySQLType.VARCHAR: MySQLType.VARBINARY,
    MySQLType.TINYTEXT: MySQLType.TINYBLOB,
    MySQLType.TEXT: MySQLType.BLOB,
    MySQLType.MEDIUMTEXT: MySQLType.MEDIUMBLOB,
    MySQLType.LONGTEXT: MySQLType.LONGBLOB,
}


def _elements(value: tuple[str, ...] | list[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen(kw_only=True)
class DataType:
    """A column's declared type, as complete as the message that described it.

    ``decimal`` carries the DECIMAL scale or the fractional-seconds precision (fsp) of DATETIME, TIMESTAMP
    and TIME; ``length`` the DECIMAL precision, the character length or the BIT width; ``item`` the element
    type of an ARRAY.

    A parameter the message did not carry (``length``, ``decimal``, ``charset``, ``collation``) is None:
    *unknown*, which is not MySQL's default. ``decimal(10,0)`` and ``datetime`` with fsp 0 are written out as
    such; a Canal ``mysqlType`` of plain ``decimal`` or ``datetime`` says neither. Encoders write a value of a
    column with an unknown parameter with its own digits (`known_scale`, `known_fsp`), never rounded to a
    default.
    """

    mysql_type: MySQLType = attrs.field(converter=MySQLType)
    length: int | None = None
    decimal: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    elements: tuple[str, ...] | None = attrs.field(default=None, converter=_elements)
    item: DataType | None = None

    @property
    def logical(self) -> LogicalType:
        return MYSQL_TO_LOGICAL[self.mysql_type]

    @property
    def has_fsp(self) -> bool:
        """A temporal type with fractional seconds (DATETIME, TIMESTAMP, TIME): ``decimal`` is its fsp."""
        return HAS_FSP[self.logical]

    @property
    def known_fsp(self) -> int | None:
        """Fractional-seconds precision of a temporal type; None when unknown (or not a temporal type)."""
        return self.decimal if self.has_fsp else None

    @property
    def known_scale(self) -> int | None:
        """DECIMAL scale; None when the message did not carry it."""
        return self.decimal

    @property
    def known_precision(self) -> int | None:
        """DECIMAL precision; None when the message did not carry it."""
        return self.length

    @property
    def known_bit_width(self) -> int | None:
        """BIT width; None when the message did not carry it."""
        return self.length

    # The four below stand in MySQL's default for an unknown parameter. They choose a unit a wire form already
    # fixes (a decoder's milliseconds or microseconds) or a Spark type; writing a value with them would round it
    # to a parameter nobody declared, which is what the ``known_*`` properties are for.

    @property
    def fsp(self) -> int:
        """Fractional-seconds precision of a temporal type (0 when unknown; see `known_fsp`)."""
        return (self.decimal or 0) if self.has_fsp else 0

    @property
    def precision(self) -> int:
        """DECIMAL precision (MySQL's default 10 when unknown; see `known_precision`)."""
        return self.length if self.length else 10

    @property
    def scale(self) -> int:
        """DECIMAL scale (0 when unknown; see `known_scale`)."""
        return self.decimal or 0

    @property
    def bit_width(self) -> int:
        """BIT width (1 when unknown; see `known_bit_width`)."""
        return self.length if self.length else 1

    @property
    def is_binary(self) -> bool:
        """Binary string types; decided by type name, never by charset (numbers have charset binary too)."""
        return self.logical is LogicalType.BYTES

    def type_text(self, *, with_params: bool = True) -> str:
        """MySQL's column-definition text, e.g. ``decimal(10,4) unsigned`` or ``enum('a','b')``; a parameter
        that is unknown is left out (``decimal`` without its precision and scale)."""
        name = self.mysql_type.value
        if self.mysql_type is MySQLType.ARRAY:
            return f"array<{self.item.type_text(with_params=with_params) if self.item else ''}>"
        params = ""
        if with_params:
            if self.elements is not None:
                params = "(" + ",".join(_quote_element(e) for e in self.elements) + ")"
            elif self.mysql_type is MySQLType.DECIMAL:
                if self.length is not None:
                    params = f"({self.length})" if self.decimal is None else f"({self.length},{self.decimal})"
            elif self.mysql_type in (MySQLType.FLOAT, MySQLType.DOUBLE) and self.decimal is not None:
                params = f"({self.length or DEFAULT_LENGTHS[self.mysql_type]},{self.decimal})"
            elif self.has_fsp:
                params = f"({self.decimal})" if self.decimal else ""
            elif self.length is not None and self.mysql_type not in _UNSIZED:
                params = f"({self.length})"
        suffix = (" unsigned" if self.unsigned else "") + (" zerofill" if self.zerofill else "")
        return name + params + suffix

    def as_binary(self) -> DataType:
        """The binary-charset spelling of a text type (``varchar`` -> ``varbinary``)."""
        binary = _TEXT_TO_BINARY.get(self.mysql_type)
        return self if binary is None else attrs.evolve(self, mysql_type=binary, charset="binary", collation="binary")


_UNSIZED: Final = frozenset(
    {
        MySQLType.JSON,
        MySQLType.DATE,
        MySQLType.TINYTEXT,
        MySQLType.TEXT,
        MySQLType.MEDIUMTEXT,
        MySQLType.LONGTEXT,
        MySQLType.TINYBLOB,
        MySQLType.BLOB,
        MySQLType.MEDIUMBLOB,
        MySQLType.LONGBLOB,
        MySQLType.GEOMETRY,
        MySQLType.POINT,
        MySQLType.LINESTRING,
        MySQLType.POLYGON,
        MySQLType.MULTIPOINT,
        MySQLType.MULTILINESTRING,
        MySQLType.MULTIPOLYGON,
        MySQLType.GEOMETRYCOLLECTION,
    }
)


def _quote_element(element: str) -> str:
    return "'" + element.replace("\\", "\\\\").replace("'", "''") + "'"


_TYPE_TEXT = re.compile(
    r"^\s*(?P<name>[a-z][a-z0-9 <>]*?)\s*(?:\((?P<params>.*)\))?"
    r"(?P<mods>(?:\s+(?:unsigned|signed|zerofill|binary))*)\s*$",
    re.IGNORECASE | re.DOTALL,
)


def parse_type_text(text: str) -> DataType:
    """Parse a MySQL column type such as ``int(10) unsigned``, ``decimal(10,4)`` or ``enum('a','b')``.

    Parameters the text leaves out stay unknown (None): the bare type names TiCDC writes (``decimal``,
    ``datetime``) say nothing of precision, scale or fsp. Raises `SchemaError` for a type this library does not
    know.
    """
    stripped = text.strip()
    if stripped.lower().startswith("array<") and stripped.endswith(">"):
        inner = stripped[6:-1]
        return DataType(mysql_type=MySQLType.ARRAY, item=parse_type_text(inner) if inner.strip() else None)
    match = _TYPE_TEXT.match(text)
    if match is None:
        raise SchemaError(f"unparsable column type {text!r}")
    name = " ".join(match["name"].lower().split())
    mods = match["mods"].lower().split()
    if name == SERIAL and match["params"] is None and not mods:
        return DataType(mysql_type=MySQLType.BIGINT, unsigned=True)
    mysql_type = _lookup_type(name, text)
    params = match["params"]
    length: int | None = None
    decimal: int | None = None
    elements: tuple[str, ...] | None = None
    if params is not None and params.strip():
        if mysql_type in (MySQLType.ENUM, MySQLType.SET):
            elements = tuple(_split_elements(params, text))
        else:
            numbers = [p.strip() for p in params.split(",")]
            # ASCII digits only: str.isdigit also takes '²' (which int() then refuses) and Arabic-Indic digits
            if not all(n.isascii() and n.isdigit() for n in numbers) or len(numbers) > 2:
                raise SchemaError(f"column type {text!r}: parameters must be one or two integers")
            if HAS_FSP[MYSQL_TO_LOGICAL[mysql_type]]:
                decimal = int(numbers[0])
            else:
                length = int(numbers[0])
                if len(numbers) == 2:
                    decimal = int(numbers[1])
                elif mysql_type is MySQLType.DECIMAL:
                    decimal = 0  # ``decimal(M)`` is ``decimal(M,0)``: a written precision declares the scale too
    elif mysql_type in (MySQLType.ENUM, MySQLType.SET):
        elements = ()
    zerofill = "zerofill" in mods
    return DataType(
        mysql_type=mysql_type,
        length=length,
        decimal=decimal,
        unsigned="unsigned" in mods or zerofill,
        zerofill=zerofill,
        elements=elements,
    )


def _lookup_type(name: str, text: str) -> MySQLType:
    try:
        return MySQLType(name)
    except ValueError:
        pass
    if name in TYPE_ALIASES:
        return TYPE_ALIASES[name]
    if name.startswith("vector"):
        return MySQLType.VECTOR
    raise SchemaError(f"unknown column type {name!r} in {text!r}")


def _split_elements(params: str, text: str) -> list[str]:
    """Split ``'a','b''c'`` into members, honouring SQL quote doubling and backslash escapes."""
    out: list[str] = []
    i, n = 0, len(params)
    while i < n:
        while i < n and params[i] in " ,":
            i += 1
        if i >= n:
            break
        quote = params[i]
        if quote not in "'\"":
            raise SchemaError(f"column type {text!r}: members must be quoted")
        i += 1
        buf: list[str] = []
        while True:
            if i >= n:
                raise SchemaError(f"column type {text!r}: unterminated member")
            ch = params[i]
            if ch == "\\" and i + 1 < n:
                buf.append(params[i + 1])
                i += 2
            elif ch == quote and i + 1 < n and params[i + 1] == quote:
                buf.append(quote)
                i += 2
            elif ch == quote:
                i += 1
                break
            else:
                buf.append(ch)
                i += 1
        out.append("".join(buf))
    return out


def unsigned_max(mysql_type: MySQLType) -> int:
    return (1 << INTEGER_BITS[mysql_type]) - 1


def signed_range(mysql_type: MySQLType) -> tuple[int, int]:
    bits = INTEGER_BITS[mysql_type]
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def integer_range(data_type: DataType) -> tuple[int, int] | None:
    """The values an integer or BIT column holds, as decoders bound them; None when the type sets no bound here
    (YEAR, a BIT whose width the protocol does not carry, any other type)."""
    if data_type.logical is LogicalType.BIT:
        return None if data_type.length is None else (0, (1 << data_type.length) - 1)
    if data_type.mysql_type not in INTEGER_BITS:
        return None
    return (0, unsigned_max(data_type.mysql_type)) if data_type.unsigned else signed_range(data_type.mysql_type)


# ------------------------------------------------------------------------------------- exhaustive switching
#
# Code that does something different per logical type says so through one of these two, never an if-chain:
# a new LogicalType member then fails the type check (mypy --strict) everywhere until it is handled.
#   1. `LogicalTypeVisitor`: one abstract method per member; `visit` dispatches with an exhaustive match
#      (`assert_never`), and a visitor lacking a method cannot be instantiated.
#   2. `by_logical_type`: a table with one required keyword argument per member.
# Adding a member: add it to the match in `LogicalTypeVisitor.visit`, an abstract ``visit_<member>`` and a
# ``<member>`` parameter of `by_logical_type` (test_type_visitor.py checks the three agree).

R = TypeVar("R")
V = TypeVar("V")


class LogicalTypeVisitor(ABC, Generic[R]):
    """One method per logical type, each given the column's `DataType`; `visit` calls the right one."""

    def visit(self, data_type: DataType) -> R:
        logical = data_type.logical
        match logical:
            case LogicalType.INT:
                return self.visit_int(data_type)
            case LogicalType.FLOAT:
                return self.visit_float(data_type)
            case LogicalType.DOUBLE:
                return self.visit_double(data_type)
            case LogicalType.DECIMAL:
                return self.visit_decimal(data_type)
            case LogicalType.DATE:
                return self.visit_date(data_type)
            case LogicalType.DATETIME:
                return self.visit_datetime(data_type)
            case LogicalType.TIMESTAMP:
                return self.visit_timestamp(data_type)
            case LogicalType.TIME:
                return self.visit_time(data_type)
            case LogicalType.YEAR:
                return self.visit_year(data_type)
            case LogicalType.STRING:
                return self.visit_string(data_type)
            case LogicalType.BYTES:
                return self.visit_bytes(data_type)
            case LogicalType.ENUM:
                return self.visit_enum(data_type)
            case LogicalType.SET:
                return self.visit_set(data_type)
            case LogicalType.BIT:
                return self.visit_bit(data_type)
            case LogicalType.JSON:
                return self.visit_json(data_type)
            case LogicalType.VECTOR:
                return self.visit_vector(data_type)
            case LogicalType.GEOMETRY:
                return self.visit_geometry(data_type)
            case LogicalType.ARRAY:
                return self.visit_array(data_type)
            case _:
                assert_never(logical)

    @abstractmethod
    def visit_int(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_float(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_double(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_decimal(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_date(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_datetime(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_timestamp(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_time(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_year(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_string(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_bytes(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_enum(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_set(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_bit(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_json(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_vector(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_geometry(self, data_type: DataType) -> R: ...
    @abstractmethod
    def visit_array(self, data_type: DataType) -> R: ...


def by_logical_type(
    *,
    int: V,
    float: V,
    double: V,
    decimal: V,
    date: V,
    datetime: V,
    timestamp: V,
    time: V,
    year: V,
    string: V,
    bytes: V,
    enum: V,
    set: V,
    bit: V,
    json: V,
    vector: V,
    geometry: V,
    array: V,
) -> dict[LogicalType, V]:
    """A table with one entry per logical type (a missing one is a type error), for per-value hot paths."""

    def entry(logical: LogicalType) -> V:
        match logical:
            case LogicalType.INT:
                return int
            case LogicalType.FLOAT:
                return float
            case LogicalType.DOUBLE:
                return double
            case LogicalType.DECIMAL:
                return decimal
            case LogicalType.DATE:
                return date
            case LogicalType.DATETIME:
                return datetime
            case LogicalType.TIMESTAMP:
                return timestamp
            case LogicalType.TIME:
                return time
            case LogicalType.YEAR:
                return year
            case LogicalType.STRING:
                return string
            case LogicalType.BYTES:
                return bytes
            case LogicalType.ENUM:
                return enum
            case LogicalType.SET:
                return set
            case LogicalType.BIT:
                return bit
            case LogicalType.JSON:
                return json
            case LogicalType.VECTOR:
                return vector
            case LogicalType.GEOMETRY:
                return geometry
            case LogicalType.ARRAY:
                return array
            case _:
                assert_never(logical)

    return {logical: entry(logical) for logical in LogicalType}


HAS_FSP: Final = by_logical_type(
    int=False,
    float=False,
    double=False,
    decimal=False,
    date=False,
    datetime=True,
    timestamp=True,
    time=True,
    year=False,
    string=False,
    bytes=False,
    enum=False,
    set=False,
    bit=False,
    json=False,
    vector=False,
    geometry=False,
    array=False,
)
"""Temporal types whose ``decimal`` is a fractional-seconds precision."""
