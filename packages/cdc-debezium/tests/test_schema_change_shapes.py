"""Schema-change and source shapes of Debezium connectors other than MySQL, and of Flink's debezium-json sink.

The messages are trimmed from the examples in Debezium's sqlserver.adoc and db2.adoc (schema-change topic) and
from Flink's debezium-json test data; the expected events are worked out by hand.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from cdc_core.errors import DecodeError
from cdc_core.events import DDLEvent, DDLType
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_debezium.ddl import TableId, ddl_type_of, parse_ids

COLUMN = {"name": "id", "jdbcType": 4, "typeName": "int identity", "length": 10, "scale": 0, "optional": False}


def schema_change(connector: str, db: str, schema: str, table: str, table_id: str, sql: str | None) -> bytes:
    source = {"version": "3.0.0.Final", "connector": connector, "name": "server1", "ts_ms": 0, "snapshot": "true"}
    payload = {
        "source": {**source, "db": db, "schema": schema, "table": table},
        "ts_ms": 1588252618953,
        "databaseName": db,
        "schemaName": schema,
        "ddl": sql,
        "tableChanges": [
            {
                "type": "CREATE",
                "id": table_id,
                "table": {"defaultCharsetName": None, "primaryKeyColumnNames": ["id"], "columns": [COLUMN]},
            }
        ],
    }
    return orjson.dumps(payload)


def decode(value: bytes) -> list[Any]:
    return get_codec("debezium").decoder().decode(Message(value=value, topic="server1", partition=0, offset=5))


SQLSERVER = ("sqlserver", "testDB", "dbo", "customers", '"testDB"."dbo"."customers"')
DB2 = ("db2", "testdb", "DB2INST1", "CUSTOMERS", '"DB2INST1"."CUSTOMERS"')


@pytest.mark.parametrize(
    ("shape", "table_ids"),
    [(SQLSERVER, ["testDB.dbo.customers"]), (DB2, ["DB2INST1.CUSTOMERS"])],
    ids=["sqlserver", "db2"],
)
@pytest.mark.parametrize("sql", [None, "N/A"], ids=["snapshot-ddl-null", "streaming-ddl-na"])
def test_schema_change_without_ddl_text_is_a_ddl_event(
    shape: tuple[str, str, str, str, str], table_ids: list[str], sql: str | None
) -> None:
    # SchemaChangeEvent.ofSnapshotCreate passes ddl=null; the table structure is in tableChanges alone.
    connector, db, schema, table, table_id = shape
    (event,) = decode(schema_change(connector, db, schema, table, table_id, sql))
    # the schema holds the table, as MySQL's database does; the database it is in is the catalog
    assert event == DDLEvent(ddl_type=DDLType.CREATE, sql=sql, database=schema, table=table)
    assert event.meta["catalog"] == db
    assert event.meta["table_ids"] == table_ids
    assert event.meta["connector"] == connector


def test_three_part_id_names_the_table_when_source_does_not() -> None:
    value = orjson.loads(schema_change(*SQLSERVER, None))
    del value["source"]["table"]
    (event,) = decode(orjson.dumps(value))
    assert (event.database, event.table) == ("dbo", "customers")
    del value["source"]["schema"]  # the id's part before the table names the schema then
    value["source"]["db"] = ""
    (event,) = decode(orjson.dumps(value))
    assert (event.database, event.table) == ("dbo", "customers")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"testDB"."dbo"."customers"', [("testDB", "dbo", "customers")]),  # SQL Server, Oracle
        ("testDB.dbo.customers", [("testDB", "dbo", "customers")]),
        ('"DB2INST1"."CUSTOMERS"', [("DB2INST1", "CUSTOMERS")]),  # Db2: schema.table
        ('"test"."table2","test"."table1"', [("test", "table2"), ("test", "table1")]),  # TiCDC RENAME: old, new
        ("inventory.customers", [("inventory", "customers")]),
        ('"my.db"."a""b"', [("my.db", 'a"b')]),  # quoted for the dot; "" is a quote
        ('"orders"', [("orders",)]),
        ("", []),
    ],
)
def test_parse_ids(text: str, expected: list[tuple[str, ...]]) -> None:
    assert parse_ids(text) == [TableId(parts) for parts in expected]


def test_table_ids_are_whole_and_unambiguous() -> None:
    assert str(TableId(("testDB", "dbo", "customers"))) == "testDB.dbo.customers"
    assert str(TableId(("test", "t1"))) == "test.t1"  # MySQL and TiCDC, as before
    assert str(TableId(("my.db", 'a"b'))) == '"my.db"."a""b"'


@pytest.mark.parametrize("text", ['"a"."b"."c"."d"', '"a".', '"a",', '"a', 7])
def test_malformed_table_id_is_a_typed_error(text: object) -> None:
    value = orjson.loads(schema_change(*SQLSERVER, None))
    value["tableChanges"][0]["id"] = text
    with pytest.raises(DecodeError) as info:
        decode(orjson.dumps(value))
    assert info.value.field == "value.tableChanges[0].id"
    assert "one to three parts" in info.value.reason


def test_flink_row_without_source_says_source_is_missing() -> None:
    # Flink's debezium-json format writes only before, after and op: there is no source naming the table.
    value = b'{"before":null,"after":{"id":101,"name":"scooter","weight":3.14},"op":"c"}'
    with pytest.raises(DecodeError) as info:
        decode(value)
    assert info.value.field == "value.source"
    assert info.value.reason.startswith("missing")


def test_null_source_is_still_a_kind_error() -> None:
    with pytest.raises(DecodeError) as info:
        decode(b'{"before":null,"after":{"id":1},"source":null,"op":"c"}')
    assert info.value.field == "value.source"
    assert info.value.reason == "expected an object, got null"


@pytest.mark.parametrize(
    ("change", "sql", "kind"),
    [
        ("ALTER", "CREATE UNIQUE INDEX idx ON t (a)", DDLType.CINDEX),
        ("ALTER", "create /* online */ index idx on t (a)", DDLType.CINDEX),  # a comment between the words
        ("ALTER", "-- by the migration\nDROP INDEX idx ON t", DDLType.DINDEX),  # a line comment first
        ("ALTER", "/* app */ TRUNCATE t", DDLType.TRUNCATE),
        (None, "CREATE TABLE t (a int)", DDLType.CREATE),
        ("ALTER", "/* unclosed", DDLType.ALTER),  # no word: the change's type decides
    ],
)
def test_the_ddl_kind_reads_the_statements_words_past_comments(change: str | None, sql: str, kind: DDLType) -> None:
    assert ddl_type_of(change, sql) == kind
