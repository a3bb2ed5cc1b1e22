"""Simple's ``tableSchema`` object, both wire forms, to and from `cdc_core.schema.TableSchema`.

JSON and Avro differ: the database field is ``schema`` in JSON and ``database`` in Avro; JSON omits zero
``length``/``decimal`` and false ``unsigned``/``zerofill``, Avro always has ``length`` and sets ``decimal`` only
for DECIMAL (the fsp of DATETIME/TIMESTAMP/TIME is not carried) and ``unsigned``/``zerofill`` only for
numeric types; a BIT default is a JSON number but an Avro string.

A scale or fsp the schema does not know is written as ``-1``, TiDB's "unspecified", and read back as unknown:
a JSON ``decimal`` left out is 0 (Go omits a zero), so it cannot say "unknown" by its absence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from cdc_core.errors import SchemaError
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import HAS_FSP, MYSQL_TO_LOGICAL, NOT_IN_TIDB, TYPE_ALIASES, DataType, MySQLType, by_logical_type
from cdc_simple import fields
from cdc_simple.fields import fail

# Avro carries unsigned/zerofill for these logical types only (tiflow newAvroDataType).
AVRO_NUMERIC: Final = by_logical_type(
    int=True,
    float=True,
    double=True,
    decimal=True,
    bit=True,
    year=True,
    date=False,
    datetime=False,
    timestamp=False,
    time=False,
    string=False,
    bytes=False,
    enum=False,
    set=False,
    json=False,
    vector=False,
    geometry=False,
    array=False,
)
_ELEMENT_TYPES: Final = frozenset({MySQLType.ENUM, MySQLType.SET})
UNSPECIFIED: Final = -1  # TiDB's UnspecifiedLength: how a type parameter nobody knows is written


def mysql_type(name: str, path: str) -> MySQLType:
    lowered = name.strip().lower()
    try:
        found = MySQLType(lowered)
    except ValueError:
        alias = TYPE_ALIASES.get(lowered)
        if alias is None:
            raise fail(f"unknown mysqlType {name!r}", path) from None
        found = alias
    if found in NOT_IN_TIDB:
        raise fail(f"unknown mysqlType {name!r} (TiDB has no such column type)", path)
    return found


def _data_type(doc: Mapping[str, Any], path: str, *, avro: bool) -> DataType:
    kind = mysql_type(fields.string(doc, "mysqlType", path), f"{path}.mysqlType")
    length = fields.integer(doc, "length", path, 0)
    decimal = doc.get("decimal")
    if decimal is not None:
        decimal = fields.integer(doc, "decimal", path)
    if decimal is not None and decimal < 0:
        decimal = None  # TiDB's unspecified: unknown
    elif kind is MySQLType.DECIMAL or (HAS_FSP[MYSQL_TO_LOGICAL[kind]] and not avro):
        decimal = decimal or 0  # a scale or fsp JSON carries always; Go omits a zero one (Avro: fsp not carried)
    elif not decimal:
        decimal = None
    elements = fields.str_list(doc, "elements", path)
    return DataType(
        mysql_type=kind,
        length=length if length > 0 else None,
        decimal=decimal,
        unsigned=fields.boolean(doc, "unsigned", path, False),
        zerofill=fields.boolean(doc, "zerofill", path, False),
        charset=fields.opt_string(doc, "charset", path) or None,
        collation=fields.opt_string(doc, "collate", path) or None,
        elements=tuple(elements) if elements is not None and (elements or kind in _ELEMENT_TYPES) else None,
    )


def _default(doc: Mapping[str, Any], path: str) -> str | None:
    value = doc.get("default")
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # BIT defaults are JSON numbers
    raise fail(f"expected a string, number or null, got {type(value).__name__}", f"{path}.default")


def decode(doc: Mapping[str, Any], path: str, *, avro: bool = False) -> TableSchema:
    """The TableSchema of a wire ``tableSchema`` object (already parsed)."""
    database = fields.string(doc, "database" if avro else "schema", path)
    columns = []
    for i, column in enumerate(fields.obj_list(doc, "columns", path)):
        where = f"{path}.columns[{i}]"
        columns.append(
            Column(
                name=fields.string(column, "name", where),
                data_type=_data_type(fields.obj(column, "dataType", where), f"{where}.dataType", avro=avro),
                nullable=fields.boolean(column, "nullable", where, True),
                default=_default(column, where),
            )
        )
    indexes = []
    for i, index in enumerate(fields.obj_list(doc, "indexes", path)):
        where = f"{path}.indexes[{i}]"
        indexes.append(
            Index(
                name=fields.string(index, "name", where),
                columns=fields.str_list(index, "columns", where) or (),
                unique=fields.boolean(index, "unique", where, False),
                primary=fields.boolean(index, "primary", where, False),
                nullable=fields.boolean(index, "nullable", where, False),
            )
        )
    try:
        return TableSchema(
            database=database,
            table=fields.string(doc, "table", path),
            columns=columns,
            indexes=indexes,
            table_id=fields.integer(doc, "tableID", path, 0),
            version=fields.integer(doc, "version", path, 0),
        )
    except SchemaError as exc:
        raise fail(str(exc), path) from exc


# ------------------------------------------------------------------------------------------------ encode


def _json_data_type(t: DataType) -> dict[str, Any]:
    out: dict[str, Any] = {"mysqlType": t.mysql_type.value, "charset": t.charset or "", "collate": t.collation or ""}
    if t.length:
        out["length"] = t.length
    decimal = _decimal(t)
    if decimal:
        out["decimal"] = decimal
    if t.elements:
        out["elements"] = list(t.elements)
    if t.unsigned:
        out["unsigned"] = True
    if t.zerofill:
        out["zerofill"] = True
    return out


def _json_default(column: Column) -> Any:
    default = column.default
    # ASCII digits only: str.isdigit also takes '²' (which int() refuses) and Arabic-Indic digits
    if default is not None and column.data_type.mysql_type is MySQLType.BIT and default.isascii() and default.isdigit():
        return int(default)
    return default


def to_json(schema: TableSchema) -> dict[str, Any]:
    """The JSON ``tableSchema`` object in Go struct order."""
    return {
        "schema": schema.database,
        "table": schema.table,
        "tableID": schema.table_id or 0,
        "version": schema.version or 0,
        "columns": [
            {
                "name": c.name,
                "dataType": _json_data_type(c.data_type),
                "nullable": c.nullable,
                "default": _json_default(c),
            }
            for c in schema.columns
        ],
        "indexes": [_index(i) for i in schema.indexes],
    }


def _index(index: Index) -> dict[str, Any]:
    return {
        "name": index.name,
        "unique": index.unique,
        "primary": index.primary,
        "nullable": index.nullable,
        "columns": list(index.columns),
    }


def _decimal(t: DataType) -> int | None:
    """The scale of a DECIMAL or the fsp of a temporal type, -1 when unknown (TiDB's unspecified)."""
    if t.mysql_type is MySQLType.DECIMAL or t.has_fsp:
        return UNSPECIFIED if t.decimal is None else t.decimal
    return t.decimal


def _avro_data_type(t: DataType) -> dict[str, Any]:
    numeric = AVRO_NUMERIC[t.logical]
    return {
        "mysqlType": t.mysql_type.value,
        "charset": t.charset or "",
        "collate": t.collation or "",
        "length": t.length or 0,
        "decimal": _decimal(t) if t.mysql_type is MySQLType.DECIMAL else None,
        "elements": list(t.elements) if t.mysql_type in _ELEMENT_TYPES and t.elements is not None else None,
        "unsigned": t.unsigned if numeric else None,
        "zerofill": t.zerofill if numeric else None,
    }


def to_avro(schema: TableSchema) -> dict[str, Any]:
    """The Avro ``TableSchema`` record as a fastavro datum."""
    return {
        "database": schema.database,
        "table": schema.table,
        "tableID": schema.table_id or 0,
        "version": schema.version or 0,
        "columns": [
            {"name": c.name, "dataType": _avro_data_type(c.data_type), "nullable": c.nullable, "default": c.default}
            for c in schema.columns
        ],
        "indexes": [_index(i) for i in schema.indexes],
    }
