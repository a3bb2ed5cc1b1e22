"""Column readers: from a field schema (or a user-supplied column type) to a converter of payload values.

A field schema gives the wire form (Kafka Connect type plus logical name); the column type comes from, in
order of preference, a user-supplied `TableSchema`, TiCDC's ``tidb_type``, or the wire form itself
(`wire_types`). The pair picks one converter of `wire_values`, so that the per-value work in the hot path is a
single call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from cdc_core.errors import SchemaError
from cdc_core.schema import Column
from cdc_core.types import DataType, LogicalType, LogicalTypeVisitor, MySQLType
from cdc_debezium.connector_modes import BinaryMode, DecimalMode, Modes, TimePrecisionMode
from cdc_debezium.names import SOURCE_NAME, Logical
from cdc_debezium.wire_types import (
    CONNECT_INT,
    schema_items,
    schema_parts,
    type_from_schema,
    type_from_source,
    type_from_tidb,
)
from cdc_debezium.wire_values import (
    Converter,
    array,
    base64_bytes,
    base64url_bytes,
    bits,
    bool_integer,
    bounded_integer,
    connect_decimal,
    datetime_ms,
    datetime_ns,
    datetime_us,
    days,
    decimal_bytes,
    decimal_number,
    decimal_variable,
    document,
    float32,
    geometry,
    hex_bytes,
    integer,
    integral,
    iso_date,
    iso_time,
    iso_timestamp,
    json_text,
    map_document,
    micro_duration,
    number,
    point,
    schemaless_json,
    set_members,
    string,
    struct_document,
    time_ms,
    time_ns,
    time_us,
    uint64,
    vector,
    zoned_time,
    zoned_timestamp,
)


def binary_converter(modes: Modes, kind: str) -> Converter:
    """Bytes from a Connect ``bytes`` value (base64 in JSON) or a ``string`` per ``binary.handling.mode``."""
    return _binary(modes, kind)


def _binary(modes: Modes, kind: str) -> Converter:
    if kind == "bytes" or modes.binary in (BinaryMode.BASE64, BinaryMode.BYTES):
        return base64_bytes
    if modes.binary is BinaryMode.BASE64_URL_SAFE:
        return base64url_bytes
    return hex_bytes


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
        return struct_document
    if kind == "map":
        return map_document
    return _PlainConverter(kind, modes).visit(data_type)


def _connect_integer(data_type: DataType) -> Converter:
    unsigned64 = data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned
    return bounded_integer(data_type, uint64 if unsigned64 else integer)


class _PlainConverter(LogicalTypeVisitor[Converter]):
    """Values of a field schema of plain Connect type ``kind`` (no logical name that decides by itself)."""

    def __init__(self, kind: str, modes: Modes) -> None:
        self.kind, self.modes = kind, modes

    def _by_kind(
        self,
        data_type: DataType,
        *,
        for_int: Converter | None = None,
        for_float: Converter = number,
        for_bytes: Converter = base64_bytes,
        for_string: Converter | None = None,
    ) -> Converter:
        """What each kind holds for this column type (``for_int`` or ``for_string`` None: what the connector
        settings make of the column's values in that kind)."""
        kind = self.kind
        if kind == "boolean":
            return bool_integer
        if kind in CONNECT_INT:
            return for_int if for_int is not None else _schemaless_converter(data_type, self.modes)
        if kind in ("float", "double"):
            return for_float
        if kind == "bytes":
            return for_bytes
        if kind == "string":
            return for_string if for_string is not None else _schemaless_converter(data_type, self.modes)
        raise SchemaError(f"unsupported field schema type {kind!r}")

    def visit_int(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_int=_connect_integer(data_type))

    def visit_year(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_int=integer)

    def visit_bit(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_int=_connect_integer(data_type), for_bytes=bits)

    def visit_float(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_float=float32)

    def visit_double(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_decimal(self, data_type: DataType) -> Converter:
        if self.kind == "bytes":
            return decimal_bytes(data_type.decimal)
        return decimal_number(data_type.decimal, double=self.kind in ("double", "float"))

    def visit_date(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_datetime(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_timestamp(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_time(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type)

    def visit_string(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_string=string)

    def visit_bytes(self, data_type: DataType) -> Converter:
        return self._by_kind(data_type, for_string=_binary(self.modes, self.kind))

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
    kind, name, _ = schema_parts(field)
    if kind == "array" and name not in _NAMED:
        items = schema_items(field)
        item_type = data_type.item if data_type.logical is LogicalType.ARRAY and data_type.item else None
        return array(converter_for_schema(items, item_type or type_from_schema(items), modes))
    return converter_for(kind, name, data_type, modes)


_NAMED: Final[Mapping[str, Converter]] = {
    Logical.DATE: days,
    Logical.CONNECT_DATE: days,
    Logical.TIMESTAMP: datetime_ms,
    Logical.CONNECT_TIMESTAMP: datetime_ms,
    Logical.MICRO_TIMESTAMP: datetime_us,
    Logical.NANO_TIMESTAMP: datetime_ns,
    Logical.TIME: time_ms,
    Logical.CONNECT_TIME: time_ms,
    Logical.MICRO_TIME: time_us,
    Logical.NANO_TIME: time_ns,
    Logical.ZONED_TIME: zoned_time,
    Logical.ISO_DATE: iso_date,
    Logical.ISO_TIME: iso_time,
    Logical.ISO_TIMESTAMP: iso_timestamp,
    Logical.MICRO_DURATION: micro_duration,
    Logical.INTERVAL: string,
    Logical.UUID: string,
    Logical.XML: string,
    Logical.LTREE: string,
    Logical.TSVECTOR: string,
    Logical.YEAR: integer,
    Logical.JSON: json_text,
    Logical.VECTOR: vector,
    Logical.FLOAT_VECTOR: array(float32),
    Logical.DOUBLE_VECTOR: array(number),
    Logical.VARIABLE_DECIMAL: decimal_variable,
    Logical.POINT: point,
    Logical.GEOMETRY: geometry,
    Logical.GEOGRAPHY: geometry,
}


def _named_converter(name: str, data_type: DataType, modes: Modes) -> Converter | None:
    if name == Logical.ZONED_TIMESTAMP:
        return zoned_timestamp(modes.zone, keep_digits=data_type.known_fsp is None)
    if name == Logical.CONNECT_DECIMAL:
        if data_type.logical is LogicalType.INT:
            return bounded_integer(data_type, integral(connect_decimal(0)))
        return connect_decimal(data_type.decimal)
    if name == Logical.BITS:
        return bounded_integer(data_type, bits) if data_type.logical is LogicalType.BIT else bits
    if name == Logical.ENUM:
        return string
    if name == Logical.ENUM_SET:
        return set_members(data_type)
    return _NAMED.get(name)


class _Schemaless(LogicalTypeVisitor[Converter]):
    """Values of a column whose field schema is absent: the wire form follows the connector settings."""

    def __init__(self, modes: Modes) -> None:
        self.modes = modes
        self.adaptive = modes.time_precision is not TimePrecisionMode.CONNECT

    def visit_int(self, data_type: DataType) -> Converter:
        return _connect_integer(data_type)

    def visit_year(self, data_type: DataType) -> Converter:
        return integer

    def visit_bit(self, data_type: DataType) -> Converter:
        return bounded_integer(data_type, bool_integer if data_type.bit_width == 1 else bits)

    def visit_float(self, data_type: DataType) -> Converter:
        return float32

    def visit_double(self, data_type: DataType) -> Converter:
        return number

    def visit_decimal(self, data_type: DataType) -> Converter:
        if self.modes.decimal is DecimalMode.PRECISE:
            return connect_decimal(data_type.decimal)
        return decimal_number(data_type.decimal, double=self.modes.decimal is DecimalMode.DOUBLE)

    def visit_date(self, data_type: DataType) -> Converter:
        return days

    def visit_datetime(self, data_type: DataType) -> Converter:
        return datetime_us if self.adaptive and data_type.fsp > 3 else datetime_ms

    def visit_timestamp(self, data_type: DataType) -> Converter:
        return zoned_timestamp(self.modes.zone, keep_digits=data_type.known_fsp is None)

    def visit_time(self, data_type: DataType) -> Converter:
        if self.modes.time_precision is TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS:
            return time_us
        return time_us if self.adaptive and data_type.fsp > 3 else time_ms

    def visit_string(self, data_type: DataType) -> Converter:
        return string

    def visit_bytes(self, data_type: DataType) -> Converter:
        return _binary(self.modes, "string")

    def visit_enum(self, data_type: DataType) -> Converter:
        return string

    def visit_set(self, data_type: DataType) -> Converter:
        return set_members(data_type)

    def visit_json(self, data_type: DataType) -> Converter:
        return schemaless_json

    def visit_vector(self, data_type: DataType) -> Converter:
        return vector

    def visit_geometry(self, data_type: DataType) -> Converter:
        return point if data_type.mysql_type is MySQLType.POINT else geometry

    def visit_array(self, data_type: DataType) -> Converter:
        item = data_type.item
        return array(self.visit(item) if item is not None else document)


def _schemaless_converter(data_type: DataType, modes: Modes) -> Converter:
    return _Schemaless(modes).visit(data_type)


@attrs.frozen
class ColumnReader:
    column: Column | None
    convert: Converter


def reader_from_field(field: Mapping[str, Any], user_column: Column | None, modes: Modes) -> ColumnReader:
    """A reader for one entry of a before/after struct's ``fields`` (raises SchemaError when malformed).

    The column is named by ``__debezium.source.column.name`` when the connector propagates it (the name before
    ``field.name.adjustment.mode`` rewrote it), else by the field name.
    """
    kind, name, parameters = schema_parts(field)
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
