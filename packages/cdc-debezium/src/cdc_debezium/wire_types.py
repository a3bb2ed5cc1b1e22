"""Column types from field schemas: what the wire form alone says (Connect type, logical name and parameters),
completed by TiCDC's ``tidb_type`` or by the source type Debezium propagates (``column.propagate.source.type``).

Mapping tables and small parsers, decided once per field schema; the values of the column are converted by
`wire_values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from cdc_core.errors import SchemaError
from cdc_core.textual import split_members
from cdc_core.types import INTEGER_BITS, DataType, LogicalType, MySQLType, parse_type_text
from cdc_debezium.names import SOURCE_LENGTH, SOURCE_SCALE, SOURCE_TYPE, Logical

# Kafka Connect's integer kinds and the MySQL type each is the natural home of.
CONNECT_INT: Final[Mapping[str, MySQLType]] = {
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
    if kind in CONNECT_INT:
        return d(mysql_type=CONNECT_INT[kind])
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
    kind, name, parameters = schema_parts(field)
    if kind == "array" and name not in _FIXED_NAMES:
        return DataType(mysql_type=MySQLType.ARRAY, item=type_from_schema(schema_items(field)))
    return type_from_wire(kind, name, parameters)


def schema_parts(field: Mapping[str, Any]) -> tuple[str, str | None, Mapping[str, Any] | None]:
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


def schema_items(field: Mapping[str, Any]) -> Mapping[str, Any]:
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
