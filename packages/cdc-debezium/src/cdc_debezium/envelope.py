"""Fixed schema documents of the Debezium envelope, keys in TiCDC's order.

Row and watermark schemas list entries as ``type, optional, [name, version, parameters, default,] field``;
the schema-change key and value schemas use ``field, optional, type`` (reference 2.1, 2.2).
"""

from __future__ import annotations

from typing import Any, Final


def _row_field(kind: str, optional: bool, field: str) -> dict[str, Any]:
    return {"type": kind, "optional": optional, "field": field}


SOURCE_SCHEMA: Final[dict[str, Any]] = {
    "type": "struct",
    "fields": [
        _row_field("string", False, "version"),
        _row_field("string", False, "connector"),
        _row_field("string", False, "name"),
        _row_field("int64", False, "ts_ms"),
        {
            "type": "string",
            "optional": True,
            "name": "io.debezium.data.Enum",
            "version": 1,
            "parameters": {"allowed": "true,last,false,incremental"},
            "default": "false",
            "field": "snapshot",
        },
        _row_field("string", False, "db"),
        _row_field("string", True, "sequence"),
        _row_field("string", True, "table"),
        _row_field("int64", False, "server_id"),
        _row_field("string", True, "gtid"),
        _row_field("string", False, "file"),
        _row_field("int64", False, "pos"),
        _row_field("int32", False, "row"),
        _row_field("int64", True, "thread"),
        _row_field("string", True, "query"),
    ],
    "optional": False,
    "name": "io.debezium.connector.mysql.Source",
    "field": "source",
}

TRANSACTION_SCHEMA: Final[dict[str, Any]] = {
    "type": "struct",
    "fields": [
        _row_field("string", False, "id"),
        _row_field("int64", False, "total_order"),
        _row_field("int64", False, "data_collection_order"),
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
    "field": "transaction",
}


def _change_field(field: str, optional: bool, kind: str, **extra: Any) -> dict[str, Any]:
    return {"field": field, "optional": optional, "type": kind, **extra}


def _strings() -> dict[str, Any]:
    return {"type": "string", "optional": False}


SCHEMA_CHANGE_KEY_SCHEMA: Final[dict[str, Any]] = {
    "type": "struct",
    "name": "io.debezium.connector.mysql.SchemaChangeKey",
    "optional": False,
    "version": 1,
    "fields": [_change_field("databaseName", False, "string")],
}

_COLUMN_SCHEMA: Final[dict[str, Any]] = {
    "name": "io.debezium.connector.schema.Column",
    "optional": False,
    "type": "struct",
    "version": 1,
    "fields": [
        _change_field("name", False, "string"),
        _change_field("jdbcType", False, "int32"),
        _change_field("nativeType", True, "int32"),
        _change_field("typeName", False, "string"),
        _change_field("typeExpression", True, "string"),
        _change_field("charsetName", True, "string"),
        _change_field("length", True, "int32"),
        _change_field("scale", True, "int32"),
        _change_field("position", False, "int32"),
        _change_field("optional", True, "boolean"),
        _change_field("autoIncremented", True, "boolean"),
        _change_field("generated", True, "boolean"),
        _change_field("comment", True, "string"),
        _change_field("defaultValueExpression", True, "string"),
        _change_field("enumValues", True, "array", items=_strings()),
    ],
}

_TABLE_SCHEMA: Final[dict[str, Any]] = {
    "field": "table",
    "optional": True,
    "type": "struct",
    "name": "io.debezium.connector.schema.Table",
    "version": 1,
    "fields": [
        _change_field("defaultCharsetName", True, "string"),
        _change_field("primaryKeyColumnNames", True, "array", items=_strings()),
        _change_field("columns", False, "array", items=_COLUMN_SCHEMA),
        _change_field("comment", True, "string"),
    ],
}

SCHEMA_CHANGE_VALUE_SCHEMA: Final[dict[str, Any]] = {
    "optional": False,
    "type": "struct",
    "version": 1,
    "name": "io.debezium.connector.mysql.SchemaChangeValue",
    "fields": [
        SOURCE_SCHEMA,
        _change_field("ts_ms", False, "int64"),
        _change_field("databaseName", True, "string"),
        _change_field("schemaName", True, "string"),
        _change_field("ddl", True, "string"),
        _change_field(
            "tableChanges",
            False,
            "array",
            items={
                "name": "io.debezium.connector.schema.Change",
                "optional": False,
                "type": "struct",
                "version": 1,
                "fields": [
                    _change_field("type", False, "string"),
                    _change_field("id", False, "string"),
                    _TABLE_SCHEMA,
                ],
            },
        ),
    ],
}
