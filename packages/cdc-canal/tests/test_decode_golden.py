"""Golden decoding: the upstream corpus and every example of the protocol document, with hand-worked values."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest

from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.types import MySQLType
from cdc_core.values import EnumIndex, SetBits
from cdc_testing.corpus import corpus_files

CORPUS = "tiflow/pkg/sink/codec/canal/canal_json_txn_event_decoder_test.extracted/*.json"


def decode(document: dict[str, Any] | bytes, **options: object) -> list[Any]:
    value = document if isinstance(document, bytes) else orjson.dumps(document)
    decoder = get_codec("canal-json").decoder(options)
    return decoder.decode(Message(value=value, topic="t", partition=0, offset=7))


def _corpus(kind: str) -> Path:
    (path,) = [p for p in corpus_files(CORPUS) if f".{kind}." in p.name]
    return path


EMPLOYEE_2014 = {
    "FirstName": "Bob",
    "HireDate": dt.date(2014, 6, 4),
    "LastName": "Smith",
    "OfficeLocation": "New York",
    "id": 101,
}
EMPLOYEE_2015 = {**EMPLOYEE_2014, "HireDate": dt.date(2015, 10, 8), "OfficeLocation": "Los Angeles"}


def test_corpus_insert() -> None:
    (event,) = decode(_corpus("insert").read_bytes())
    assert event == RowChange(op=Op.INSERT, database="test", table="employee", after=EMPLOYEE_2014)
    assert list(event.after) == ["FirstName", "HireDate", "LastName", "OfficeLocation", "id"]
    assert event.commit_ts is None  # no _tidb in these messages
    assert event.meta == {"es": 1668067205238, "ts": 1668067206650}
    assert event.schema.primary_key == ("id",)
    assert event.schema.column("HireDate").data_type.mysql_type is MySQLType.DATE
    assert (event.source.topic, event.source.partition, event.source.offset) == ("t", 0, 7)


def test_corpus_update_has_full_old_image() -> None:
    (event,) = decode(_corpus("update").read_bytes())
    assert event == RowChange(
        op=Op.UPDATE, database="test", table="employee", before=EMPLOYEE_2014, after=EMPLOYEE_2015
    )
    assert event.changed_columns is None  # TiCDC's full old does not say which columns changed


def test_corpus_delete_reads_the_row_from_data() -> None:
    (event,) = decode(_corpus("delete").read_bytes())
    assert event == RowChange(op=Op.DELETE, database="test", table="employee", before=EMPLOYEE_2015)


# ------------------------------------------------------------------------------------ protocol document

SPEC_DDL = {
    "id": 0,
    "database": "test",
    "table": "",
    "pkNames": None,
    "isDdl": True,
    "type": "QUERY",
    "es": 1639633094670,
    "ts": 1639633095489,
    "sql": "drop database if exists test",
    "sqlType": None,
    "mysqlType": None,
    "data": None,
    "old": None,
    "_tidb": {"commitTs": 163963309467037594},
}

TP_INT_SQL_TYPES = {"c_bigint": -5, "c_int": 4, "c_mediumint": 4, "c_smallint": 5, "c_tinyint": -6, "id": 4}
TP_INT_MYSQL_TYPES = {
    "c_bigint": "bigint",
    "c_int": "int",
    "c_mediumint": "mediumint",
    "c_smallint": "smallint",
    "c_tinyint": "tinyint",
    "id": "int",
}
TP_INT_INSERTED = {
    "c_bigint": "9223372036854775807",
    "c_int": "2147483647",
    "c_mediumint": "8388607",
    "c_smallint": "32767",
    "c_tinyint": "127",
    "id": "2",
}
SPEC_INSERT = {
    "id": 0,
    "database": "test",
    "table": "tp_int",
    "pkNames": ["id"],
    "isDdl": False,
    "type": "INSERT",
    "es": 1639633141221,
    "ts": 1639633142960,
    "sql": "",
    "sqlType": TP_INT_SQL_TYPES,
    "mysqlType": TP_INT_MYSQL_TYPES,
    "data": [TP_INT_INSERTED],
    "old": None,
    "_tidb": {"commitTs": 163963314122145239},
}
SPEC_WATERMARK = {
    "id": 0,
    "database": "",
    "table": "",
    "pkNames": None,
    "isDdl": False,
    "type": "TIDB_WATERMARK",
    "es": 1640007049196,
    "ts": 1640007050284,
    "sql": "",
    "sqlType": None,
    "mysqlType": None,
    "data": None,
    "old": None,
    "_tidb": {"watermarkTs": 429918007904436226},
}


def test_spec_ddl_event() -> None:
    (event,) = decode(SPEC_DDL)
    assert event == DDLEvent(
        ddl_type=DDLType.QUERY,
        sql="drop database if exists test",
        database="test",
        table=None,
        commit_ts=163963309467037594,
    )
    assert event.meta == {"es": 1639633094670, "ts": 1639633095489}


def test_spec_insert_event() -> None:
    (event,) = decode(SPEC_INSERT)
    assert event == RowChange(
        op=Op.INSERT,
        database="test",
        table="tp_int",
        after={
            "c_bigint": 9223372036854775807,
            "c_int": 2147483647,
            "c_mediumint": 8388607,
            "c_smallint": 32767,
            "c_tinyint": 127,
            "id": 2,
        },
        commit_ts=163963314122145239,
    )
    # the document's commitTs is illustrative (its physical part is not es); es and ts are kept as read
    assert event.meta == {"es": 1639633141221, "ts": 1639633142960}


def test_spec_watermark_event() -> None:
    (event,) = decode(SPEC_WATERMARK)
    assert event == Watermark(ts=429918007904436226)
    assert event.ts >> 18 == SPEC_WATERMARK["es"]  # es = watermarkTs >> 18 in the document's example


TP_INT_UPDATED = {**TP_INT_INSERTED, "c_int": "0", "c_tinyint": "0"}


def _update(old: dict[str, str], mysql_types: dict[str, str]) -> dict[str, Any]:
    return {
        **SPEC_INSERT,
        "type": "UPDATE",
        "mysqlType": mysql_types,
        "data": [TP_INT_UPDATED],
        "old": [old],
    }


CANAL_TP_INT_TYPES = {
    "c_bigint": "bigint(20)",
    "c_int": "int(11)",
    "c_mediumint": "mediumint(9)",
    "c_smallint": "smallint(6)",
    "c_tinyint": "tinyint(4)",
    "id": "int(11)",
}


def test_spec_update_decodes_the_same_from_both_flavours() -> None:
    (ticdc,) = decode(_update(TP_INT_INSERTED, TP_INT_MYSQL_TYPES))
    (canal,) = decode(_update({"c_int": "2147483647", "c_tinyint": "127"}, CANAL_TP_INT_TYPES))
    before = {
        "c_bigint": 9223372036854775807,
        "c_int": 2147483647,
        "c_mediumint": 8388607,
        "c_smallint": 32767,
        "c_tinyint": 127,
        "id": 2,
    }
    after = {**before, "c_int": 0, "c_tinyint": 0}
    for event in (ticdc, canal):
        assert event.op is Op.UPDATE
        assert event.before == before
        assert event.after == after
        assert list(event.before) == list(TP_INT_INSERTED)  # completed image keeps column order
    assert ticdc.changed_columns is None
    assert canal.changed_columns == ("c_int", "c_tinyint")  # column order, not old's order
    assert canal.schema.column("c_int").data_type.length == 11


def test_spec_delete_event_and_pre_5_4_old_copy() -> None:
    message = {**SPEC_INSERT, "type": "DELETE", "data": [TP_INT_UPDATED]}
    (current,) = decode(message)
    (legacy,) = decode({**message, "old": [TP_INT_UPDATED]})  # before v5.4.0 old repeated data
    assert current == legacy
    assert current.before["c_int"] == 0 and current.after is None


T_DATA = {
    "c_binary": "abc" + "\u0000" * 13,
    "c_bit": "65",
    "c_char": "abc",
    "c_decimal": "123.4560",
    "c_enum": "1",
    "c_set": "3",
    "c_varbinary": "abc",
    "c_varchar": "abc",
    "id": "1",
}
T_SQL_TYPES = {
    "c_binary": 2004,
    "c_bit": -7,
    "c_char": 1,
    "c_decimal": 3,
    "c_enum": 4,
    "c_set": -7,
    "c_varbinary": 2004,
    "c_varchar": 12,
    "id": 4,
}
T_TICDC_TYPES = {
    "c_binary": "binary",
    "c_bit": "bit",
    "c_char": "char",
    "c_decimal": "decimal",
    "c_enum": "enum",
    "c_set": "set",
    "c_varbinary": "varbinary",
    "c_varchar": "varchar",
    "id": "int",
}
T_CANAL_TYPES = {
    "c_binary": "binary(16)",
    "c_bit": "bit(64)",
    "c_char": "char(16)",
    "c_decimal": "decimal(10, 4)",
    "c_enum": "enum('a','b','c')",
    "c_set": "set('a','b','c')",
    "c_varbinary": "varbinary(16)",
    "c_varchar": "varchar(16)",
    "id": "int",
}


def _t_insert(mysql_types: dict[str, str], data: dict[str, str] = T_DATA) -> dict[str, Any]:
    return {**SPEC_INSERT, "table": "t", "sqlType": T_SQL_TYPES, "mysqlType": mysql_types, "data": [data]}


def test_spec_parametric_types_ticdc_keeps_indexes() -> None:
    # insert ... values (123.456, "abc", "abc", "abc", "abc", 'a', 'a,b', b'1000001') into decimal(10,4),
    # char(16), varchar(16), binary(16), varbinary(16), enum('a','b','c'), set('a','b','c'), bit(64)
    (event,) = decode(_t_insert(T_TICDC_TYPES))
    assert event.after == {
        "c_binary": b"abc" + b"\x00" * 13,
        "c_bit": 0b1000001,
        "c_char": "abc",
        "c_decimal": Decimal("123.4560"),
        "c_enum": EnumIndex(1),  # plain "enum" lists no members: the index stays and says so
        "c_set": SetBits(0b11),
        "c_varbinary": b"abc",
        "c_varchar": "abc",
        "id": 1,
    }
    assert str(event.after["c_decimal"]) == "123.4560"


def test_spec_parametric_types_canal_names_members() -> None:
    (by_index,) = decode(_t_insert(T_CANAL_TYPES))
    (by_name,) = decode(_t_insert(T_CANAL_TYPES, {**T_DATA, "c_enum": "a", "c_set": "a,b"}))
    for event in (by_index, by_name):
        assert event.after["c_enum"] == "a"
        assert event.after["c_set"] == ("a", "b")
        assert event.after["c_binary"] == b"abc" + b"\x00" * 13
    decimal_type = by_index.schema.column("c_decimal").data_type
    assert (decimal_type.precision, decimal_type.scale) == (10, 4)
    assert by_index.schema.column("c_enum").data_type.elements == ("a", "b", "c")


def test_binary_values_are_latin1_code_points() -> None:
    every_byte = bytes(range(256))
    message = _t_insert(T_TICDC_TYPES, {**T_DATA, "c_varbinary": every_byte.decode("latin-1")})
    (event,) = decode(orjson.dumps(message))
    assert event.after["c_varbinary"] == every_byte


def test_timestamp_is_read_in_the_configured_zone() -> None:
    message = {
        **SPEC_INSERT,
        "table": "ts",
        "sqlType": {"id": 4, "t": 93},
        "mysqlType": {"id": "int", "t": "timestamp(3)"},
        "data": [{"id": "1", "t": "2023-11-30 20:34:56.123"}],
    }
    (shanghai,) = decode(message, **{"time-zone": "Asia/Shanghai"})
    (utc,) = decode(message)
    expected = dt.datetime(2023, 11, 30, 12, 34, 56, 123000, tzinfo=dt.UTC)
    assert shanghai.after["t"] == expected
    assert utc.after["t"] == expected + dt.timedelta(hours=8)
    assert shanghai.after["t"].utcoffset() == dt.timedelta(hours=8)


def test_multi_row_data_gives_one_event_per_row_in_order() -> None:
    rows = [{**TP_INT_INSERTED, "id": str(i)} for i in (5, 3, 9)]
    olds = [{"c_int": str(i)} for i in (50, 30, 90)]
    events = decode({**SPEC_INSERT, "type": "UPDATE", "mysqlType": CANAL_TP_INT_TYPES, "data": rows, "old": olds})
    assert [e.after["id"] for e in events] == [5, 3, 9]
    assert [e.before["c_int"] for e in events] == [50, 30, 90]
    assert all(e.changed_columns == ("c_int",) for e in events)


def test_tidb_extension_flags() -> None:
    key_only = {**SPEC_INSERT, "data": [{"id": "2"}], "_tidb": {"commitTs": 5 << 18, "onlyHandleKey": True}}
    (event,) = decode(key_only)
    assert event.handle_key_only and event.after == {"id": 2} and event.commit_ts == 5 << 18
    location = "file:///tmp/claims/0b5b.json"
    claim = {**key_only, "_tidb": {"commitTs": 5 << 18, "claimCheckLocation": location}}
    (event,) = decode(claim)
    assert event.claim_check_location == location and event.handle_key_only


@pytest.mark.parametrize("kind", ["CREATE", "ALTER", "ERASE", "TRUNCATE", "RENAME", "CINDEX", "DINDEX", "QUERY"])
def test_every_ddl_kind(kind: str) -> None:
    (event,) = decode({**SPEC_DDL, "type": kind, "table": "t1", "sql": f"-- {kind}"})
    assert event.ddl_type is DDLType(kind) and event.table == "t1" and event.sql == f"-- {kind}"


def test_official_canal_init_rows_are_inserts_and_markers_carry_nothing() -> None:
    (event,) = decode({**SPEC_INSERT, "type": "INIT"})
    assert event.op is Op.INSERT and event.after["id"] == 2 and event.meta["canal_type"] == "INIT"
    for kind in ("GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT"):
        assert decode({**SPEC_INSERT, "type": kind, "data": None}) == []


def test_database_and_table_filters() -> None:
    assert decode(SPEC_INSERT, **{"database.include": "prod_.*"}) == []
    assert len(decode(SPEC_INSERT, **{"database.include": "te.t"})) == 1
    assert decode(SPEC_INSERT, **{"table.include": "tp_(?!int).*"}) == []
    assert len(decode(SPEC_INSERT, **{"table.include": "tp_.*"})) == 1
    assert decode(SPEC_DDL, **{"database.include": "other"}) == []
    # a schema-level DDL has no table and is kept by a table filter
    assert len(decode(SPEC_DDL, **{"table.include": "tp_.*"})) == 1


def test_the_declared_mysql_type_decides_text_against_binary() -> None:
    """Canal reports TEXT columns read from the binlog's BLOB storage with a binary sqlType (-4 LONGVARBINARY, -3
    VARBINARY, 2004 BLOB) yet writes text: the declared mysqlType decides, non-Latin text included; a column whose
    mysqlType is binary stays bytes (ISO-8859-1 code points), and sqlType alone still types an undeclared one."""
    message = {
        **SPEC_INSERT,
        "sqlType": {"id": 4, "t": -4, "tt": -3, "v": 2004, "b": -4, "only_code": 91},
        "mysqlType": {"id": "int", "t": "text", "tt": "tinytext", "v": "varchar(8)", "b": "varbinary(4)"},
        "data": [
            {"id": "1", "t": "日本語 ☃ héllo", "tt": "Ωμέγα", "v": "ü", "b": "\u00ff\u0000", "only_code": "2020-02-29"}
        ],
    }
    (event,) = decode(message)
    assert event.after == {
        "id": 1,
        "t": "日本語 ☃ héllo",
        "tt": "Ωμέγα",
        "v": "ü",
        "b": b"\xff\x00",
        "only_code": dt.date(2020, 2, 29),
    }
    assert event.schema is not None
    types = {c.name: c.data_type.mysql_type for c in event.schema.columns}
    assert (types["t"], types["tt"], types["v"], types["b"]) == (
        MySQLType.TEXT,
        MySQLType.TINYTEXT,
        MySQLType.VARCHAR,
        MySQLType.VARBINARY,
    )


def test_terminator_separated_batch_decodes_in_order() -> None:
    # TestCanalJSONBatchDecoderWithTerminator: the storage sink joins messages with CRLF
    value = b"\r\n".join(_corpus(kind).read_bytes().strip() for kind in ("insert", "update", "delete")) + b"\r\n"
    events = decode(value)
    assert [e.op for e in events] == [Op.INSERT, Op.UPDATE, Op.DELETE]
    assert events[1].before == EMPLOYEE_2014 and events[2].before == EMPLOYEE_2015


def test_json_values_keep_big_integers_exact() -> None:
    message = {
        **SPEC_INSERT,
        "sqlType": {"id": 4, "j": 12},
        "mysqlType": {"id": "int", "j": "json"},
        "data": [{"id": "1", "j": '{"big": 18446744073709551616, "neg": -9223372036854775809, "f": 0.1, "s": "é"}'}],
    }
    (event,) = decode(message)
    assert event.after["j"] == {"big": 18446744073709551616, "neg": -9223372036854775809, "f": 0.1, "s": "é"}
    assert type(event.after["j"]["big"]) is int


def test_zero_dates_are_kept_verbatim() -> None:
    from cdc_core.values import ZeroTemporal

    message = {
        **SPEC_INSERT,
        "sqlType": {"id": 4, "d": 91, "dt": 93, "ts": 93},
        "mysqlType": {"id": "int", "d": "date", "dt": "datetime", "ts": "timestamp"},
        "data": [{"id": "1", "d": "0000-00-00", "dt": "2021-00-15 00:00:00", "ts": "0000-00-00 00:00:00"}],
    }
    (event,) = decode(message)
    assert event.after == {
        "id": 1,
        "d": ZeroTemporal("0000-00-00"),
        "dt": ZeroTemporal("2021-00-15 00:00:00"),
        "ts": ZeroTemporal("0000-00-00 00:00:00"),
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int(10) unsigned zerofill", ("int", 10, None, True, True)),
        ("decimal(10, 4)", ("decimal", 10, 4, False, False)),
        ("varchar(16) character set utf8mb4", ("varchar", 16, None, False, False)),
        ("datetime(3)", ("datetime", None, 3, False, False)),
        ("tinyint(1)", ("tinyint", 1, None, False, False)),
        ("bigint unsigned", ("bigint", None, None, True, False)),
    ],
)
def test_official_canal_type_definitions(text: str, expected: tuple[Any, ...]) -> None:
    from cdc_canal.inbound import resolve_type

    data_type = resolve_type(text, None)
    assert (
        data_type.mysql_type.value,
        data_type.length,
        data_type.decimal,
        data_type.unsigned,
        data_type.zerofill,
    ) == (expected)


# The official Canal message Flink's canal-json format documents (upper-case JDBC-style type names).
FLINK_CANAL_UPDATE = (
    b'{"data":[{"id":"111","name":"scooter","description":"Big 2-wheel scooter","weight":"5.18"}],'
    b'"database":"inventory","es":1589373560000,"id":9,"isDdl":false,"mysqlType":{"id":"INTEGER",'
    b'"name":"VARCHAR(255)","description":"VARCHAR(512)","weight":"FLOAT"},"old":[{"weight":"5.15"}],'
    b'"pkNames":["id"],"sql":"","sqlType":{"id":4,"name":12,"description":12,"weight":7},'
    b'"table":"products","ts":1589373560798,"type":"UPDATE"}'
)


def test_official_canal_update_as_flink_documents_it() -> None:
    (event,) = decode(FLINK_CANAL_UPDATE)
    row = {"id": 111, "name": "scooter", "description": "Big 2-wheel scooter"}
    assert event == RowChange(
        op=Op.UPDATE,
        database="inventory",
        table="products",
        before={**row, "weight": 5.15},  # the FLOAT as written, not the widened float32 5.150000095367432
        after={**row, "weight": 5.18},
        changed_columns=("weight",),
    )
    assert event.schema.column("name").data_type.length == 255
    assert event.schema.column("id").data_type.mysql_type is MySQLType.INT
    assert event.meta == {"es": 1589373560000, "ts": 1589373560798}


def test_charset_clauses_are_cut_only_after_the_parameters() -> None:
    from cdc_canal.inbound import resolve_type

    assert resolve_type("enum('a collate b','c')", None).elements == ("a collate b", "c")
    assert resolve_type("varchar(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", [1]).length == 8
    assert resolve_type("text collate utf8_bin", 2004).mysql_type is MySQLType.TEXT  # the declared type decides
