"""The encoder writes TiCDC's Canal-JSON bytes: key order, sqlType codes, mysqlType texts and every option."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdc_canal.encoder import CanalEncoder
from cdc_canal.outbound import mysql_type_text
from cdc_core.errors import EncodeError
from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.gojson import EASYJSON
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import DataType, parse_type_text
from cdc_testing.corpus import corpus_files

CORPUS = "tiflow/pkg/sink/codec/canal/canal_json_txn_event_decoder_test.extracted/*.json"
NOW = 1639633142960
COMMIT_TS = compose(1639633141221, 7)


def encoder(**options: object) -> CanalEncoder:
    codec = get_codec("canal-json")
    from cdc_core.codec import Options

    specs = [s for s in codec.options if s.for_encoder]
    return CanalEncoder(Options(specs, options, protocol="canal-json"), clock=lambda: NOW)


def decode(message: Message, **options: object) -> list[Any]:
    return get_codec("canal-json").decoder(options).decode(message)


def _col(name: str, type_text: str, *, nullable: bool = True) -> Column:
    return Column(name=name, data_type=parse_type_text(type_text), nullable=nullable)


TP_INT = TableSchema(
    database="test",
    table="tp_int",
    columns=[
        _col("id", "int(11)", nullable=False),
        _col("c_tinyint", "tinyint(4)"),
        _col("c_smallint", "smallint(6)"),
        _col("c_mediumint", "mediumint(9)"),
        _col("c_int", "int(11)"),
        _col("c_bigint", "bigint(20)"),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
ROW = {
    "id": 2,
    "c_tinyint": 127,
    "c_smallint": 32767,
    "c_mediumint": 8388607,
    "c_int": 2147483647,
    "c_bigint": 9223372036854775807,
}
INSERT = RowChange(op=Op.INSERT, database="test", table="tp_int", after=ROW, commit_ts=COMMIT_TS, schema=TP_INT)

# Hand-written from the protocol document's INSERT example, in TiCDC's DML key order (old before data).
EXPECTED_INSERT = (
    b'{"id":0,"database":"test","table":"tp_int","pkNames":["id"],"isDdl":false,"type":"INSERT",'
    b'"es":1639633141221,"ts":1639633142960,"sql":"",'
    b'"sqlType":{"id":4,"c_tinyint":-6,"c_smallint":5,"c_mediumint":4,"c_int":4,"c_bigint":-5},'
    b'"mysqlType":{"id":"int","c_tinyint":"tinyint","c_smallint":"smallint","c_mediumint":"mediumint",'
    b'"c_int":"int","c_bigint":"bigint"},"old":null,'
    b'"data":[{"id":"2","c_tinyint":"127","c_smallint":"32767","c_mediumint":"8388607","c_int":"2147483647",'
    b'"c_bigint":"9223372036854775807"}],"_tidb":{"commitTs":429819990172237831}}'
)


def test_insert_bytes_match_ticdc() -> None:
    assert COMMIT_TS == 429819990172237831
    (message,) = encoder(**{"enable-tidb-extension": True}).encode(INSERT)
    assert message.value == EXPECTED_INSERT
    assert message.key is None and message.partition == 0


def test_without_extension_there_is_no_tidb_and_no_watermark() -> None:
    (message,) = encoder().encode(INSERT)
    assert message.value == EXPECTED_INSERT.replace(b',"_tidb":{"commitTs":429819990172237831}', b"")
    assert encoder().encode(Watermark(ts=COMMIT_TS)) == []


def test_update_and_delete_key_order_and_images() -> None:
    update = RowChange(
        op=Op.UPDATE,
        database="test",
        table="tp_int",
        before=ROW,
        after={**ROW, "c_int": 0, "c_tinyint": 0},
        commit_ts=COMMIT_TS,
        schema=TP_INT,
    )
    full = orjson.loads(encoder().encode(update)[0].value)
    assert list(full) == [
        "id",
        "database",
        "table",
        "pkNames",
        "isDdl",
        "type",
        "es",
        "ts",
        "sql",
        "sqlType",
        "mysqlType",
        "old",
        "data",
    ]
    assert full["old"] == [{k: str(v) for k, v in ROW.items()}]
    assert full["data"][0]["c_int"] == "0"
    partial = orjson.loads(encoder(**{"only-output-updated-columns": True}).encode(update)[0].value)
    assert partial["old"] == [{"c_tinyint": "127", "c_int": "2147483647"}]
    unchanged = RowChange(op=Op.UPDATE, database="test", table="tp_int", before=ROW, after=ROW, schema=TP_INT)
    assert orjson.loads(encoder(**{"only-output-updated-columns": True}).encode(unchanged)[0].value)["old"] == [{}]
    delete = RowChange(op=Op.DELETE, database="test", table="tp_int", before=ROW, commit_ts=COMMIT_TS, schema=TP_INT)
    doc = orjson.loads(encoder().encode(delete)[0].value)
    assert doc["type"] == "DELETE" and doc["old"] is None and doc["data"] == [{k: str(v) for k, v in ROW.items()}]


def test_delete_only_output_handle_key_columns() -> None:
    delete = RowChange(op=Op.DELETE, database="test", table="tp_int", before=ROW, commit_ts=COMMIT_TS, schema=TP_INT)
    doc = orjson.loads(encoder(**{"delete-only-output-handle-key-columns": True}).encode(delete)[0].value)
    assert doc["data"] == [{"id": "2"}] and doc["sqlType"] == {"id": 4} and doc["mysqlType"] == {"id": "int"}
    (back,) = decode(Message(value=orjson.dumps(doc)))
    assert back.before == {"id": 2}


def test_content_compatible_mysql_types_and_implied_updated_columns() -> None:
    update = RowChange(
        op=Op.UPDATE, database="test", table="tp_int", before=ROW, after={**ROW, "c_int": 1}, schema=TP_INT
    )
    doc = orjson.loads(encoder(**{"content-compatible": True}).encode(update)[0].value)
    assert doc["mysqlType"] == {
        "id": "int(11)",
        "c_tinyint": "tinyint(4)",
        "c_smallint": "smallint(6)",
        "c_mediumint": "mediumint(9)",
        "c_int": "int(11)",
        "c_bigint": "bigint(20)",
    }
    assert doc["old"] == [{"c_int": "2147483647"}]


# tiflow canal/type_test.go pins these: (declared type, plain mysqlType, content-compatible mysqlType)
MYSQL_TYPE_TEXTS = [
    ("int(11)", "int", "int(11)"),
    ("int(10) unsigned", "int unsigned", "int(10) unsigned"),
    ("tinyint(1)", "tinyint", "tinyint(1)"),
    ("bit(1)", "bit", "bit(1)"),
    ("decimal(10,0)", "decimal", "decimal(10,0)"),
    ("decimal(10,0) unsigned zerofill", "decimal unsigned zerofill", "decimal(10,0) unsigned zerofill"),
    ("float", "float", "float"),
    ("float(10,3)", "float", "float(10,3)"),
    ("double(20,3)", "double", "double(20,3)"),
    ("char(1)", "char", "char(1)"),
    ("varchar(123)", "varchar", "varchar(123)"),
    ("binary(10)", "binary", "binary(10)"),
    ("varbinary(23)", "varbinary", "varbinary(23)"),
    ("text", "text", "text"),
    ("blob", "blob", "blob"),
    ("time(3)", "time", "time(3)"),
    ("datetime(3)", "datetime", "datetime(3)"),
    ("timestamp(3)", "timestamp", "timestamp(3)"),
    ("date", "date", "date"),
    ("year(4)", "year", "year(4)"),
    ("enum('a','b','c')", "enum", "enum('a','b','c')"),
    ("set('a','b','c')", "set", "set('a','b','c')"),
    ("json", "json", "json"),
    ("int(10) unsigned zerofill", "int unsigned zerofill", "int(10) unsigned zerofill"),
    # parameters the event does not know are left out, not written as MySQL's defaults
    ("int unsigned zerofill", "int unsigned zerofill", "int unsigned zerofill"),
    ("decimal", "decimal", "decimal"),
    ("datetime", "datetime", "datetime"),
    ("year", "year", "year"),
]


@pytest.mark.parametrize(("declared", "plain", "full"), MYSQL_TYPE_TEXTS)
def test_mysql_type_texts(declared: str, plain: str, full: str) -> None:
    data_type = parse_type_text(declared)
    assert mysql_type_text(data_type, full=False) == plain
    assert mysql_type_text(data_type, full=True) == full


# The protocol document's integer table: (mysqlType, value, sqlType code).
SQL_TYPE_PROMOTION = [
    ("tinyint", -128, -6),
    ("tinyint unsigned", 127, -6),
    ("tinyint unsigned", 128, 5),
    ("smallint unsigned", 32767, 5),
    ("smallint unsigned", 32768, 4),
    ("mediumint unsigned", 16777215, 4),
    ("int", -2147483648, 4),
    ("int unsigned", 2147483647, 4),
    ("int unsigned", 2147483648, -5),
    ("bigint", -9223372036854775808, -5),
    ("bigint unsigned", 9223372036854775807, -5),
    ("bigint unsigned", 9223372036854775808, 3),
    ("bigint unsigned", None, -5),
]


@pytest.mark.parametrize(("type_text", "value", "code"), SQL_TYPE_PROMOTION)
def test_sql_type_unsigned_promotion_per_value(type_text: str, value: int | None, code: int) -> None:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[_col("id", "int", nullable=False), _col("v", type_text)],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )
    event = RowChange(op=Op.INSERT, database="d", table="t", after={"id": 1, "v": value}, schema=schema)
    doc = orjson.loads(encoder().encode(event)[0].value)
    assert doc["sqlType"]["v"] == code
    assert doc["data"][0]["v"] == (None if value is None else str(value))


def test_ddl_goes_to_partition_zero_with_struct_key_order() -> None:
    ddl = DDLEvent(
        ddl_type=DDLType.CREATE,
        sql="create table a (id int primary key)",
        database="test",
        table="a",
        commit_ts=COMMIT_TS,
    )
    (message,) = encoder(**{"enable-tidb-extension": True, "partition-num": 4}).encode(ddl)
    assert message.partition == 0
    assert message.value == (
        b'{"id":0,"database":"test","table":"a","pkNames":null,"isDdl":true,"type":"CREATE",'
        b'"es":1639633141221,"ts":1639633142960,"sql":"create table a (id int primary key)","sqlType":null,'
        b'"mysqlType":null,"data":null,"old":null,"_tidb":{"commitTs":429819990172237831}}'
    )


def test_watermark_to_every_partition() -> None:
    messages = encoder(**{"enable-tidb-extension": True, "partition-num": 3}).encode(Watermark(ts=COMMIT_TS))
    assert [m.partition for m in messages] == [0, 1, 2]
    assert messages[0].value == (
        b'{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,"type":"TIDB_WATERMARK",'
        b'"es":1639633141221,"ts":1639633142960,"sql":"","sqlType":null,"mysqlType":null,"data":null,'
        b'"old":null,"_tidb":{"watermarkTs":429819990172237831}}'
    )
    assert decode(messages[2]) == [Watermark(ts=COMMIT_TS)]


def test_rows_are_dispatched_by_table_hash() -> None:
    import zlib

    (message,) = encoder(**{"partition-num": 7}).encode(INSERT)
    assert message.partition == zlib.crc32(b"testtp_int") % 7


def test_go_string_escaping() -> None:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[_col("id", "int", nullable=False), _col("s", "varchar(64)"), _col("b", "varbinary(8)")],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )
    text = "<a&b>\b\f\\b\\f\u2028\u2029\x01é"
    event = RowChange(
        op=Op.INSERT, database="d", table="t", after={"id": 1, "s": text, "b": b"\x08\xff"}, schema=schema
    )
    (message,) = encoder().encode(event)
    assert (
        b'"data":[{"id":"1","s":"\\u003ca\\u0026b\\u003e\\u0008\\u000c\\\\b\\\\f\\u2028\\u2029\\u0001\xc3\xa9",'
        b'"b":"\\u0008\xc3\xbf"}]' in message.value
    )
    (back,) = decode(message)
    assert back.after == {"id": 1, "s": text, "b": b"\x08\xff"}


def test_corpus_messages_re_encode_to_the_same_document() -> None:
    for path in corpus_files(CORPUS):
        original = orjson.loads(path.read_bytes())
        (event,) = decode(Message(value=path.read_bytes()))
        (message,) = CanalEncoder(_ticdc_options(), clock=lambda d=original: d["ts"]).encode(event)
        assert orjson.loads(message.value) == original, Path(path).name


def _ticdc_options() -> Any:
    from cdc_core.codec import Options

    specs = [s for s in get_codec("canal-json").options if s.for_encoder]
    return Options(specs, {}, protocol="canal-json")


def test_official_canal_flavour() -> None:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[_col("id", "int(11)", nullable=False), _col("e", "enum('a','b')"), _col("s", "set('x','y')")],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )
    before = {"id": 1, "e": "a", "s": ("x",)}
    update = RowChange(
        op=Op.UPDATE,
        database="d",
        table="t",
        before=before,
        after={**before, "s": ("x", "y")},
        commit_ts=COMMIT_TS,
        schema=schema,
    )
    doc = orjson.loads(encoder(flavour="canal", **{"enable-tidb-extension": True}).encode(update)[0].value)
    assert "_tidb" not in doc
    assert doc["mysqlType"] == {"id": "int(11)", "e": "enum('a','b')", "s": "set('x','y')"}
    assert doc["data"] == [{"id": "1", "e": "a", "s": "x,y"}] and doc["old"] == [{"s": "x"}]
    (back,) = decode(Message(value=orjson.dumps(doc)))
    assert back.before == before and back.changed_columns == ("s",)


def test_encode_errors_are_typed() -> None:
    with pytest.raises(EncodeError, match="schema"):
        encoder().encode(RowChange(op=Op.INSERT, database="d", table="t", after={"id": 1}))
    bad = RowChange(op=Op.INSERT, database="test", table="tp_int", after={**ROW, "c_int": "x"}, schema=TP_INT)
    with pytest.raises(EncodeError, match="c_int"):
        encoder().encode(bad)
    with pytest.raises(EncodeError, match="commitTs"):
        encoder(**{"enable-tidb-extension": True}).encode(
            RowChange(op=Op.INSERT, database="test", table="tp_int", after=ROW, schema=TP_INT)
        )
    key_only = RowChange(
        op=Op.INSERT,
        database="test",
        table="tp_int",
        after={"id": 2},
        schema=TP_INT,
        handle_key_only=True,
        commit_ts=COMMIT_TS,
    )
    with pytest.raises(EncodeError, match="enable-tidb-extension"):
        encoder().encode(key_only)
    (message,) = encoder(**{"enable-tidb-extension": True}).encode(key_only)
    doc = orjson.loads(message.value)
    assert doc["data"] == [{"id": "2"}] and doc["_tidb"] == {"commitTs": COMMIT_TS, "onlyHandleKey": True}
    assert DataType  # imported for annotations in helpers above


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(exclude_categories=["Cs"])) | st.text('\\bf\b\f<>&\u2028"n', max_size=12))
def test_go_escaping_is_lossless(text: str) -> None:
    out = EASYJSON.dumps({"s": text, "k": [text]})
    assert orjson.loads(out) == {"s": text, "k": [text]}
    assert not set(b"<>&") & set(out) and "\u2028".encode() not in out
    # no short \b or \f escape survives (an escaped backslash is a pair and is skipped)
    assert re.search(rb"(?<!\\)(?:\\\\)*\\[bf]", out) is None


def test_bootstrap_writes_nothing_and_unknown_events_are_refused() -> None:
    from cdc_core.events import Bootstrap

    assert encoder().encode(Bootstrap(table_schema=TP_INT)) == []
    with pytest.raises(EncodeError, match="unsupported event"):
        encoder().encode("not an event")  # type: ignore[arg-type]


def test_reducing_a_table_without_handle_key_is_refused() -> None:
    keyless = attrs_evolve(TP_INT, indexes=())
    event = RowChange(op=Op.DELETE, database="test", table="tp_int", before=ROW, schema=keyless)
    with pytest.raises(EncodeError, match="no handle key"):
        encoder(**{"delete-only-output-handle-key-columns": True}).encode(event)
    doc = orjson.loads(encoder().encode(event)[0].value)
    assert doc["pkNames"] == []  # no primary key: an empty list, as TiCDC writes it


def test_unknown_member_names_keep_their_index_or_bits_in_both_flavours() -> None:
    from cdc_core.values import EnumIndex, SetBits

    schema = TableSchema(
        database="d",
        table="t",
        columns=[_col("id", "int", nullable=False), _col("e", "enum('a','b')"), _col("s", "set('x','y')")],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )
    row = {"id": 1, "e": EnumIndex(2), "s": SetBits(3)}
    event = RowChange(op=Op.INSERT, database="d", table="t", after=row, schema=schema)
    for flavour, decoded in [("ticdc", row), ("canal", {"id": 1, "e": "b", "s": ("x", "y")})]:
        doc = orjson.loads(encoder(flavour=flavour).encode(event)[0].value)
        assert doc["data"] == [{"id": "1", "e": "2", "s": "3"}]
        (back,) = decode(Message(value=orjson.dumps(doc)))
        assert back.after == decoded  # the canal flavour's mysqlType lists the members, TiCDC's plain one does not
    for bad in ({"e": "c"}, {"s": ("q",)}, {"e": 3.5}, {"s": "x"}):
        with pytest.raises(EncodeError):
            encoder(flavour="canal").encode(attrs_evolve(event, after={**row, **bad}))


def attrs_evolve(instance: Any, **changes: Any) -> Any:
    import attrs

    return attrs.evolve(instance, **changes)
