"""Avro record schemas generated from a `TableSchema` exactly as TiCDC registers them (reference 4.2).

The JSON text is byte-for-byte what TiCDC's Go encoder registers: top-level keys ``type, name, namespace,
fields``; field keys sorted (``default, name, type``); a column type ``{"type", "connect.parameters"}`` with
sorted parameters, plus ``logicalType, precision, scale`` for precise DECIMAL.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import attrs

from cdc_avro.names import (
    DEFAULT_NAMESPACE,
    TIDB_CHECKSUM_VERSION,
    TIDB_COMMIT_TS,
    TIDB_CORRUPTED,
    TIDB_OP,
    TIDB_PHYSICAL_TIME,
    TIDB_ROW_CHECKSUM,
    record_namespace,
)
from cdc_avro.tidbtypes import BigintUnsignedMode, DecimalMode, avro_primitive, tidb_type
from cdc_core.errors import SchemaError
from cdc_core.gojson import ENCODING_JSON, float64
from cdc_core.naming import sanitize_name
from cdc_core.schema import Column, TableSchema
from cdc_core.textual import to_float32
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType


@attrs.frozen(kw_only=True)
class SchemaOptions:
    decimal_mode: DecimalMode = DecimalMode.PRECISE
    bigint_mode: BigintUnsignedMode = BigintUnsignedMode.LONG
    tidb_extension: bool = False
    row_checksum: bool = False
    namespace: str = DEFAULT_NAMESPACE


@attrs.frozen(kw_only=True)
class FieldPlan:
    """One column as written: the Avro field name, the column, its Avro primitive and nullability."""

    name: str
    column: Column
    primitive: str
    nullable: bool


@attrs.frozen(kw_only=True)
class RecordPlan:
    """A generated key or value record: the registered JSON text and the per-column plan to write data."""

    schema_json: str
    fields: tuple[FieldPlan, ...]
    extension: bool
    checksum: bool


def escape_member(member: str) -> str:
    """ENUM/SET member as TiCDC writes it into ``allowed`` (commas escaped, SQL quote doubling undone)."""
    return member.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def column_type(column: Column, options: SchemaOptions) -> dict[str, Any]:
    data_type = column.data_type
    primitive = avro_primitive(data_type.mysql_type, data_type.unsigned, options.decimal_mode, options.bigint_mode)
    parameters: dict[str, str] = {}
    if data_type.mysql_type in (MySQLType.ENUM, MySQLType.SET):
        parameters["allowed"] = ",".join(escape_member(e) for e in data_type.elements or ())
    if data_type.mysql_type is MySQLType.BIT and data_type.known_bit_width is not None:
        parameters["length"] = str(data_type.known_bit_width)  # left out when unknown: it shapes no value
    parameters["tidb_type"] = tidb_type(data_type.mysql_type, data_type.unsigned)
    document: dict[str, Any] = {"type": primitive, "connect.parameters": parameters}
    if data_type.mysql_type is MySQLType.DECIMAL and options.decimal_mode is DecimalMode.PRECISE:
        document["logicalType"] = "decimal"
        document["precision"] = data_type.precision
        document["scale"] = data_type.scale
    return document


class _Default(LogicalTypeVisitor[Callable[[str], Any]]):
    """How TiCDC turns a column's DEFAULT text into the Avro ``default`` (floats as Go prints float64)."""

    def __init__(self, options: SchemaOptions) -> None:
        self.options = options

    def visit_int(self, data_type: DataType) -> Callable[[str], Any]:
        if data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned:
            if self.options.bigint_mode is BigintUnsignedMode.STRING:
                return str
            return lambda text: int(text) - (1 << 64) if int(text) >= 1 << 63 else int(text)
        return int

    def visit_year(self, data_type: DataType) -> Callable[[str], Any]:
        return int

    def visit_float(self, data_type: DataType) -> Callable[[str], Any]:
        return lambda text: float64(to_float32(float(text)))

    def visit_double(self, data_type: DataType) -> Callable[[str], Any]:
        return lambda text: float64(float(text))

    def visit_decimal(self, data_type: DataType) -> Callable[[str], Any]:
        string_mode = self.options.decimal_mode is DecimalMode.STRING

        def default(text: str) -> Any:
            Decimal(text)  # a precise DECIMAL gets no default (goavro cannot), but the text must still parse
            return text if string_mode else None

        return default

    def visit_bit(self, data_type: DataType) -> Callable[[str], Any]:
        return _base64_text

    def visit_bytes(self, data_type: DataType) -> Callable[[str], Any]:
        return _base64_text

    def visit_date(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_datetime(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_timestamp(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_time(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_string(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_enum(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_set(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_json(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_vector(self, data_type: DataType) -> Callable[[str], Any]:
        return str

    def visit_geometry(self, data_type: DataType) -> Callable[[str], Any]:
        return str  # never reached: the schema generator refuses spatial columns

    def visit_array(self, data_type: DataType) -> Callable[[str], Any]:
        return str  # never reached, as for GEOMETRY


def _base64_text(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")  # a Go byte slice marshals as base64


def default_value(column: Column, options: SchemaOptions) -> Any:
    """The Avro ``default`` TiCDC derives from the TiDB default text (None when there is none).

    The text goes through the same conversion as a value, then Go marshals it: FLOAT defaults are parsed at
    32-bit precision and printed as float64, and BIT/binary defaults (Go byte slices) become base64 text.
    """
    text = column.default
    if text is None:
        return None
    try:
        return _Default(options).visit(column.data_type)(text)
    except (ValueError, InvalidOperation) as exc:
        raise SchemaError(
            f"column {column.name}: default {text!r} does not fit {column.data_type.type_text()}"
        ) from exc


def _field(column: Column, options: SchemaOptions) -> tuple[dict[str, Any], FieldPlan]:
    avro_type = column_type(column, options)
    name = sanitize_name(column.name)
    field: dict[str, Any] = {}
    if "logicalType" in avro_type:
        if column.nullable:
            field = {"default": None, "name": name, "type": ["null", avro_type]}
        else:
            field = {"name": name, "type": avro_type}
    else:
        default = default_value(column, options)
        if column.nullable:
            union = ["null", avro_type] if default is None or default == "null" else [avro_type, "null"]
            field = {"default": default, "name": name, "type": union}
        elif default is not None:
            field = {"default": default, "name": name, "type": avro_type}
        else:
            field = {"name": name, "type": avro_type}
    plan = FieldPlan(name=name, column=column, primitive=avro_type["type"], nullable=column.nullable)
    return field, plan


_EXTENSION: Final = (
    {"default": "", "name": TIDB_OP, "type": "string"},
    {"default": 0, "name": TIDB_COMMIT_TS, "type": "long"},
    {"default": 0, "name": TIDB_PHYSICAL_TIME, "type": "long"},
)
_CHECKSUM: Final = (
    {"default": "", "name": TIDB_ROW_CHECKSUM, "type": "string"},
    {"default": False, "name": TIDB_CORRUPTED, "type": "boolean"},
    {"default": 0, "name": TIDB_CHECKSUM_VERSION, "type": "int"},
)


def _record(table: TableSchema, columns: tuple[Column, ...], options: SchemaOptions, *, is_key: bool) -> RecordPlan:
    fields: list[dict[str, Any]] = []
    plans: list[FieldPlan] = []
    for column in columns:
        field, plan = _field(column, options)
        fields.append(field)
        plans.append(plan)
    extension = options.tidb_extension and not is_key
    checksum = extension and options.row_checksum
    if extension:
        fields.extend(dict(f) for f in _EXTENSION)
    if checksum:
        fields.extend(dict(f) for f in _CHECKSUM)
    top = {
        "type": "record",
        "name": sanitize_name(table.table),
        "namespace": record_namespace(table.database, options.namespace),
        "fields": fields,
    }
    return RecordPlan(
        schema_json=ENCODING_JSON.dumps(top).decode(), fields=tuple(plans), extension=extension, checksum=checksum
    )


def key_columns(table: TableSchema) -> tuple[Column, ...]:
    """Handle-key columns in column order (TiCDC walks the row and keeps the handle-key flagged ones)."""
    handle = set(table.handle_key)
    return tuple(c for c in table.stored_columns if c.name in handle)


def key_record(table: TableSchema, options: SchemaOptions) -> RecordPlan | None:
    """The key record, or None for a table without a handle key (TiCDC then writes a null key)."""
    columns = key_columns(table)
    return _record(table, columns, options, is_key=True) if columns else None


def value_record(table: TableSchema, options: SchemaOptions) -> RecordPlan:
    return _record(table, table.stored_columns, options, is_key=False)
