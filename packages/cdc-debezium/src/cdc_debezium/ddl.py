"""DDL messages: ``tableChanges`` both ways, and the DDL class of a change.

TiCDC, Debezium and dtle describe a changed table as ``tableChanges[0].table`` with Debezium's column
objects (``typeName``, ``jdbcType``, ``length``, ``scale``, ``enumValues``...). The encoder writes them the way
TiCDC does (reference 2.2); the decoder rebuilds a `TableSchema` from them where the type names are MySQL's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from cdc_core.errors import SchemaError
from cdc_core.events import DDLEvent, DDLType
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.statements import leading_words
from cdc_core.textual import TextFormError
from cdc_core.types import DEFAULT_LENGTHS, DataType, LogicalType, MySQLType, parse_type_text

# java.sql.Types codes TiCDC reports per column type (binary variants differ from their text twins).
JDBC_TYPES: Final[Mapping[MySQLType, int]] = {
    MySQLType.TIMESTAMP: 2014,
    MySQLType.DATETIME: 93,
    MySQLType.TINYINT: 5,
    MySQLType.SMALLINT: 5,
    MySQLType.MEDIUMINT: 4,
    MySQLType.INT: 4,
    MySQLType.YEAR: 4,
    MySQLType.BIGINT: -5,
    MySQLType.FLOAT: 6,
    MySQLType.DOUBLE: 8,
    MySQLType.DECIMAL: 3,
    MySQLType.DATE: 91,
    MySQLType.TIME: 92,
    MySQLType.ENUM: 1,
    MySQLType.SET: 1,
    MySQLType.CHAR: 1,
    MySQLType.BINARY: -2,
    MySQLType.VARCHAR: 12,
    MySQLType.VARBINARY: -3,
    MySQLType.TINYTEXT: 12,
    MySQLType.TEXT: 12,
    MySQLType.MEDIUMTEXT: 12,
    MySQLType.LONGTEXT: 12,
    MySQLType.TINYBLOB: 2004,
    MySQLType.BLOB: 2004,
    MySQLType.MEDIUMBLOB: 2004,
    MySQLType.LONGBLOB: 2004,
    MySQLType.BIT: -7,
    MySQLType.JSON: 1111,
    MySQLType.VECTOR: 1111,
    MySQLType.GEOMETRY: 1111,
    MySQLType.POINT: 1111,
    MySQLType.LINESTRING: 1111,
    MySQLType.POLYGON: 1111,
    MySQLType.MULTIPOINT: 1111,
    MySQLType.MULTILINESTRING: 1111,
    MySQLType.MULTIPOLYGON: 1111,
    MySQLType.GEOMETRYCOLLECTION: 1111,
    MySQLType.ARRAY: 2003,
}

_NO_SUFFIX: Final = frozenset({MySQLType.YEAR, MySQLType.BIT, MySQLType.CHAR, MySQLType.VARCHAR, MySQLType.DECIMAL})
_CHARSET_TYPES: Final = frozenset(
    {
        MySQLType.TIMESTAMP,
        MySQLType.TIME,
        MySQLType.DECIMAL,
        MySQLType.CHAR,
        MySQLType.VARCHAR,
        MySQLType.TINYTEXT,
        MySQLType.TEXT,
        MySQLType.MEDIUMTEXT,
        MySQLType.LONGTEXT,
        MySQLType.ENUM,
        MySQLType.SET,
    }
)


def change_type(event: DDLEvent) -> str | None:
    """``tableChanges[].type`` for a DDL, None when TiCDC writes no table change (schema DDL, TRUNCATE)."""
    if event.table is None or event.ddl_type is DDLType.TRUNCATE:
        return None
    if event.ddl_type is DDLType.CREATE:
        return "CREATE"
    if event.ddl_type in (DDLType.ERASE, DDLType.DINDEX):
        return "DROP"
    return "ALTER"


def _type_name(data_type: DataType) -> str:
    name = data_type.mysql_type.value.upper()
    if data_type.unsigned and data_type.mysql_type not in _NO_SUFFIX:
        name += " UNSIGNED ZEROFILL" if data_type.zerofill else " UNSIGNED"
    return name


def _length(data_type: DataType) -> int | None:
    """TiCDC's ``length``: null where TiDB's is unspecified, as an unknown parameter is here."""
    t = data_type.mysql_type
    if data_type.has_fsp:
        return data_type.known_fsp
    if t is MySQLType.SET:
        return 2 * len(data_type.elements or ()) - 1
    if t is MySQLType.ENUM:
        return 1
    if t in (MySQLType.DECIMAL, MySQLType.YEAR) or data_type.logical is LogicalType.INT:
        return data_type.length
    if data_type.length is not None and data_type.length != DEFAULT_LENGTHS.get(t):
        return data_type.length
    return None


def column_object(column: Column, position: int) -> dict[str, Any]:
    data_type = column.data_type
    t = data_type.mysql_type
    type_name = _type_name(data_type)
    expression = type_name
    if t is MySQLType.DOUBLE and data_type.decimal is not None:
        expression = f"{type_name}({data_type.length or DEFAULT_LENGTHS[t]},{data_type.decimal})"
    elif t is MySQLType.VECTOR and data_type.length:
        expression = f"{type_name}({data_type.length})"
    charset = data_type.charset if t in _CHARSET_TYPES and data_type.charset not in (None, "binary") else None
    scale = data_type.decimal if t in (MySQLType.DECIMAL, MySQLType.FLOAT, MySQLType.DOUBLE) else None
    elements = data_type.elements
    return {
        "name": column.name,
        "jdbcType": JDBC_TYPES[t],
        "nativeType": None,
        "comment": None,
        "defaultValueExpression": column.default,
        "enumValues": None if elements is None else [f"'{e}'" for e in elements],
        "typeName": type_name,
        "typeExpression": expression,
        "charsetName": charset,
        "length": _length(data_type),
        "scale": scale,
        "position": position,
        "optional": column.nullable,
        "autoIncremented": False,
        "generated": False,
    }


def table_object(schema: TableSchema, charset: str) -> dict[str, Any]:
    return {
        "defaultCharsetName": charset,
        "primaryKeyColumnNames": list(schema.primary_key),
        "columns": [column_object(c, i) for i, c in enumerate(schema.columns, start=1)],
        "comment": None,
    }


def table_id(database: str, table: str) -> str:
    return f'"{database}"."{table}"'


# ------------------------------------------------------------------------------------------------ inbound

# One part of a Debezium TableId: double-quoted ("" is a quote inside) or bare.
_ID_PART: Final = r'"(?:[^"]|"")*"|[^".,\s]+'
# One to three parts (catalog.schema.table, absent ones left out), then the comma before the next id or the end.
_TABLE_ID: Final = re.compile(rf"\s*({_ID_PART})(?:\.({_ID_PART}))?(?:\.({_ID_PART}))?\s*(,|\Z)")


@attrs.frozen
class TableId:
    """A ``tableChanges[].id`` entry: MySQL's db.table, Db2's schema.table, SQL Server's and Oracle's
    catalog.schema.table (parts unquoted)."""

    parts: tuple[str, ...]

    @property
    def database(self) -> str | None:
        """The part before the table (MySQL's database; the schema of Db2, SQL Server and Oracle), as an event's
        ``database`` is."""
        return self.parts[-2] if len(self.parts) > 1 else None

    @property
    def table(self) -> str:
        return self.parts[-1]

    def __str__(self) -> str:
        # Bare parts joined by dots, as TableId.toString does; a part that holds a dot or quote is quoted
        # so the whole id stays unambiguous.
        return ".".join(_quoted(p) if "." in p or '"' in p else p for p in self.parts)


def _quoted(part: str) -> str:
    return '"' + part.replace('"', '""') + '"'


def parse_ids(text: str) -> list[TableId] | None:
    """The comma-separated ids of ``tableChanges[].id`` (a RENAME names old then new), each of one to three
    parts, quoted or not; None when the text is not such a list."""
    ids: list[TableId] = []
    pos = 0
    while pos < len(text):
        match = _TABLE_ID.match(text, pos)
        if match is None:
            return None
        parts = (p for p in match.group(1, 2, 3) if p is not None)
        ids.append(TableId(tuple(p[1:-1].replace('""', '"') if p.startswith('"') else p for p in parts)))
        pos = match.end()
        if match.group(4) == "," and pos == len(text):
            return None  # a trailing comma: an id is missing
    return ids


def ddl_type_of(change: str | None, sql: str | None) -> DDLType:
    """The DDL class from the change type and the statement's leading keywords."""
    words = leading_words(sql or "", 3)
    first = words[0] if words else ""
    if first == "TRUNCATE":
        return DDLType.TRUNCATE
    if first == "RENAME":
        return DDLType.RENAME
    if first == "CREATE" and "INDEX" in words:
        return DDLType.CINDEX
    if first == "DROP" and "INDEX" in words:
        return DDLType.DINDEX
    if change == "CREATE" or (change is None and first == "CREATE"):
        return DDLType.CREATE
    if change == "DROP" or (change is None and first == "DROP"):
        return DDLType.ERASE
    if change == "ALTER" or (change is None and first == "ALTER"):
        return DDLType.ALTER
    return DDLType.QUERY


def _column_type(obj: Mapping[str, Any]) -> DataType:
    type_name = obj.get("typeName")
    if not isinstance(type_name, str):
        raise SchemaError("column has no string typeName")
    base = parse_type_text(type_name.lower())
    length = obj.get("length")
    scale = obj.get("scale")
    length = length if isinstance(length, int) and not isinstance(length, bool) else None
    scale = scale if isinstance(scale, int) and not isinstance(scale, bool) else None
    enum_values = obj.get("enumValues")
    elements = None
    if isinstance(enum_values, list):
        elements = tuple(str(v)[1:-1] if str(v).startswith("'") else str(v) for v in enum_values)
    charset = obj.get("charsetName") if isinstance(obj.get("charsetName"), str) else None
    if base.has_fsp:  # TiCDC's length is the fsp, null when unspecified
        return DataType(mysql_type=base.mysql_type, decimal=length, charset=charset)
    if base.mysql_type in (MySQLType.ENUM, MySQLType.SET):
        return DataType(mysql_type=base.mysql_type, elements=elements or (), charset=charset)
    return DataType(
        mysql_type=base.mysql_type,
        length=length if length is not None else base.length,
        decimal=scale if scale is not None else base.decimal,
        unsigned=base.unsigned,
        zerofill=base.zerofill,
        charset=charset,
    )


def schema_from_table(database: str, table: str, obj: Mapping[str, Any]) -> TableSchema:
    """A `TableSchema` from a ``tableChanges[].table`` object (raises SchemaError for unknown types)."""
    raw_columns = obj.get("columns")
    if not isinstance(raw_columns, list):
        raise SchemaError("table has no columns array")
    columns: list[Column] = []
    for raw in raw_columns:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise SchemaError("column is not an object with a string name")
        try:
            data_type = _column_type(raw)
        except TextFormError as exc:
            raise SchemaError(str(exc)) from exc
        default = raw.get("defaultValueExpression")
        columns.append(
            Column(
                name=raw["name"],
                data_type=data_type,
                nullable=bool(raw.get("optional", True)),
                default=default if isinstance(default, str) else None,
            )
        )
    pk = obj.get("primaryKeyColumnNames")
    indexes: Sequence[Index] = ()
    if isinstance(pk, list) and pk and all(isinstance(c, str) for c in pk):
        indexes = (Index(name="PRIMARY", columns=pk, unique=True, primary=True),)
    return TableSchema(database=database, table=table, columns=columns, indexes=indexes)
