"""Every example message of the Simple protocol spec decodes to the right typed events."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from cdc_core.codec import Decoder
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.types import MySQLType
from cdc_simple import tableschema


def _msg(value: bytes, offset: int) -> Message:
    return Message(value=value, topic="simple", partition=0, offset=offset)


def test_every_spec_message_decodes_in_stream_order(
    spec_messages: dict[str, bytes], make_decoder: Callable[..., Decoder]
) -> None:
    decoder = make_decoder()
    order = ["ALTER", "INSERT", "UPDATE", "DELETE", "WATERMARK", "BOOTSTRAP"]
    events = [decoder.decode(_msg(spec_messages[kind], i)) for i, kind in enumerate(order)]
    (ddl,), (insert,), (update,), (delete,), (watermark,), (bootstrap,) = events

    assert isinstance(ddl, DDLEvent)
    assert ddl.ddl_type is DDLType.ALTER
    assert ddl.sql == "ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP"
    assert (ddl.database, ddl.table, ddl.commit_ts) == ("simple", "user", 447987408682614795)
    assert ddl.table_schema is not None and ddl.pre_table_schema is not None
    assert ddl.table_schema.version == 447987408682614791
    assert ddl.pre_table_schema.version == 447984074911121426
    assert ddl.table_schema.column("createTime").data_type.mysql_type is MySQLType.TIMESTAMP
    assert ddl.pre_table_schema.column_names == ("id", "name", "age", "score")
    assert ddl.table_schema.primary_key == ("id",)
    assert ddl.meta == {"build_ts": 1708936343598}

    assert isinstance(insert, RowChange) and insert.op is Op.INSERT
    assert insert.after == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}
    assert list(insert.after) == ["id", "name", "age", "score"]  # schema order, not the wire's sorted order
    assert insert.before is None
    assert (insert.commit_ts, insert.table_id, insert.schema_version) == (
        447984084414103554,
        148,
        447984074911121426,
    )
    assert insert.schema is ddl.pre_table_schema

    assert isinstance(update, RowChange) and update.op is Op.UPDATE
    assert update.before == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}
    assert update.after == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0}

    assert isinstance(delete, RowChange) and delete.op is Op.DELETE
    assert delete.before == {"id": 1, "name": "John Doe", "age": 25, "score": 95.0}
    assert delete.after is None

    assert isinstance(watermark, Watermark) and watermark.ts == 447984124732375041
    assert watermark.source is not None and watermark.source.offset == 4

    assert isinstance(bootstrap, Bootstrap)
    assert (bootstrap.database, bootstrap.table) == ("simple", "new_user")
    assert bootstrap.table_schema.version == 447984074911121426


def test_spec_table_schema_column_and_index_definitions(spec_blocks: list[dict[str, Any]]) -> None:
    schemas = [b for b in spec_blocks if "columns" in b and "schema" in b]
    assert schemas, "the spec's TableSchema definition example is missing"
    for block in schemas:
        schema = tableschema.decode(block, "tableSchema")
        assert schema.qualified_name == "simple.user"
        assert schema.column("id").nullable is False
        assert schema.column("name").data_type.length == 255
        assert schema.column("name").data_type.collation == "utf8mb4_bin"
        assert schema.column("score").data_type.mysql_type is MySQLType.FLOAT
        assert tableschema.to_json(schema) == block  # the encoder writes the same object back
    columns = [b for b in spec_blocks if "dataType" in b]
    indexes = [b for b in spec_blocks if "primary" in b and "columns" in b and "name" in b]
    assert columns and indexes
    wrapped = tableschema.decode(
        {"schema": "s", "table": "t", "tableID": 1, "version": 1, "columns": columns, "indexes": indexes}, "x"
    )
    assert wrapped.primary_key == ("id",)


def test_timestamp_is_read_in_its_location_zone(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    ddl = (
        b'{"version":1,"type":"CREATE","sql":"CREATE TABLE t (id int primary key, ts timestamp(3))","commitTs":10,'
        b'"buildTs":1,"tableSchema":{"schema":"d","table":"t","tableID":5,"version":9,"columns":['
        b'{"name":"id","dataType":{"mysqlType":"int","charset":"binary","collate":"binary","length":11},'
        b'"nullable":false,"default":null},'
        b'{"name":"ts","dataType":{"mysqlType":"timestamp","charset":"binary","collate":"binary","length":23,'
        b'"decimal":3},"nullable":true,"default":null}],"indexes":[]}}'
    )
    row = (
        b'{"version":1,"database":"d","table":"t","tableID":5,"type":"INSERT","commitTs":11,"buildTs":2,'
        b'"schemaVersion":9,"data":{"id":"1","ts":{"location":"Asia/Shanghai","value":"2024-02-26 16:32:23.120"}}}'
    )
    (create,) = decoder.decode(_msg(ddl, 0))
    assert isinstance(create, DDLEvent) and create.pre_table_schema is None
    (insert,) = decoder.decode(_msg(row, 1))
    assert isinstance(insert, RowChange) and insert.after is not None
    assert insert.after["ts"] == dt.datetime(2024, 2, 26, 8, 32, 23, 120000, tzinfo=dt.UTC)
    assert insert.after["ts"].utcoffset() == dt.timedelta(hours=8)
