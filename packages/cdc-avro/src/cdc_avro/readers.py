"""Writer schemas back to typed columns: everything a consumer needs comes from ``connect.parameters``."""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

import attrs
import fastavro

from cdc_avro.checksum import Contribution, contribution_for
from cdc_avro.datum import Reader, reader_for
from cdc_avro.names import EXTENSION_FIELDS
from cdc_avro.tidbtypes import FROM_TIDB_TYPE
from cdc_core.schema import Column
from cdc_core.textual import format_float64, split_members
from cdc_core.types import DataType, MySQLType


class WriterSchemaError(ValueError):
    """A writer schema is not one TiCDC's Avro encoder produces; the decoder positions it as a DecodeError."""


@attrs.frozen(kw_only=True)
class FieldReader:
    name: str
    column: Column
    read: Reader


@attrs.frozen(kw_only=True)
class RecordReader:
    """One writer schema: its parsed form, database/table from name and namespace, and field readers."""

    parsed: Any
    database: str
    table: str
    fields: tuple[FieldReader, ...]
    extension_fields: frozenset[str]
    contributions: tuple[Contribution, ...]  # row checksum bytes per field


def _branch(field_type: Any) -> tuple[Any, bool]:
    if isinstance(field_type, list):
        non_null = [t for t in field_type if t != "null"]
        if len(non_null) != 1:
            raise WriterSchemaError(f"union {field_type!r} is not a nullable column type")
        return non_null[0], len(non_null) < len(field_type)
    return field_type, False


def column_of(field: dict[str, Any]) -> tuple[Column, str]:
    """The column a field describes and the Avro primitive its data is written as."""
    name = field.get("name")
    if not isinstance(name, str):
        raise WriterSchemaError("field without a name")
    branch, nullable = _branch(field.get("type"))
    if not isinstance(branch, dict):
        raise WriterSchemaError(f"field {name}: no connect.parameters (not written by TiCDC)")
    parameters = branch.get("connect.parameters")
    if not isinstance(parameters, dict) or not isinstance(parameters.get("tidb_type"), str):
        raise WriterSchemaError(f"field {name}: connect.parameters.tidb_type missing")
    tidb_type: str = parameters["tidb_type"]
    unsigned = tidb_type.endswith(" UNSIGNED")
    base = tidb_type.removesuffix(" UNSIGNED")
    mysql_type = FROM_TIDB_TYPE.get(base)
    if mysql_type is None:
        raise WriterSchemaError(f"field {name}: unknown tidb_type {tidb_type!r}")
    primitive = branch.get("type")
    if not isinstance(primitive, str):
        raise WriterSchemaError(f"field {name}: type must be an Avro primitive")
    length: int | None = None
    decimal: int | None = None
    elements: tuple[str, ...] | None = None
    try:
        if mysql_type is MySQLType.BIT:
            length = int(parameters["length"]) if "length" in parameters else None  # unknown when left out
        elif mysql_type is MySQLType.DECIMAL and branch.get("logicalType") == "decimal":
            length, decimal = int(branch["precision"]), int(branch.get("scale", 0))
        elif mysql_type in (MySQLType.ENUM, MySQLType.SET):
            elements = split_members(str(parameters.get("allowed", "")))
    except (KeyError, ValueError, TypeError) as exc:
        raise WriterSchemaError(f"field {name}: bad type parameters: {exc}") from exc
    if mysql_type is MySQLType.INT and unsigned and primitive == "int":
        mysql_type = MySQLType.MEDIUMINT  # TINYINT..MEDIUMINT UNSIGNED are written as int, INT UNSIGNED as long
    data_type = DataType(mysql_type=mysql_type, unsigned=unsigned, length=length, decimal=decimal, elements=elements)
    default = default_text(field.get("default"), data_type) if "default" in field else None
    return Column(name=name, data_type=data_type, nullable=nullable, default=default), primitive


def default_text(value: Any, data_type: DataType) -> str | None:
    """The TiDB default text behind an Avro field default (inverse of `schemagen.default_value`)."""
    if value is None or isinstance(value, bool):
        return None
    if data_type.mysql_type in (MySQLType.BIT, MySQLType.BLOB) and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    if isinstance(value, int) and data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned and value < 0:
        return str(value + (1 << 64))
    if isinstance(value, float):
        return format_float64(value)
    return str(value) if isinstance(value, int | str) else None


def record_reader(schema_json: str, zone: dt.tzinfo) -> RecordReader:
    try:
        document = json.loads(schema_json)
    except ValueError as exc:
        raise WriterSchemaError(f"writer schema is not JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("type") != "record":
        raise WriterSchemaError("writer schema is not an Avro record")
    namespace = str(document.get("namespace", ""))
    parts = namespace.split(".")
    database = parts[1] if len(parts) > 1 else parts[0]
    fields: list[FieldReader] = []
    extension: set[str] = set()
    raw_fields = document.get("fields")
    if not isinstance(raw_fields, list):
        raise WriterSchemaError("writer schema has no field list")
    for field in raw_fields:
        if not isinstance(field, dict):
            raise WriterSchemaError("field is not an object")
        if field.get("name") in EXTENSION_FIELDS:
            extension.add(str(field["name"]))
            continue
        column, primitive = column_of(field)
        fields.append(FieldReader(name=column.name, column=column, read=reader_for(column.data_type, primitive, zone)))
    try:
        parsed = fastavro.parse_schema(document)
    except Exception as exc:  # fastavro raises several unrelated types for bad schemas
        raise WriterSchemaError(f"writer schema does not parse: {exc}") from exc
    return RecordReader(
        parsed=parsed,
        database=database,
        table=str(document.get("name", "")),
        fields=tuple(fields),
        extension_fields=frozenset(extension),
        contributions=tuple(contribution_for(f.column) for f in fields),
    )
