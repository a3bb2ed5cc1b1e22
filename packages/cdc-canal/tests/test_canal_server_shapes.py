"""Shapes official Canal (1.1.x, ``canal.mq.flatMessage=true``) writes that TiCDC never does.

Messages are written by hand after Canal's ``LogEventConvert``: values are ``String.valueOf`` of the binlog
value (DECIMAL without padding to the scale, FLOAT as Java prints the float), spatial columns are MySQL's
internal bytes (4-byte little-endian SRID, then OGC WKB) as ISO-8859-1 text with ``sqlType`` BLOB, and
``pkNames`` is appended once per row of a multi-row message.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from typing import Any

import orjson
import pytest

from cdc_core import canonical
from cdc_core.errors import DecodeError
from cdc_core.events import DDLEvent, DDLType, Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.types import DataType, LogicalType, MySQLType
from cdc_core.values import Geometry


def decode(document: dict[str, Any]) -> list[Any]:
    message = Message(value=orjson.dumps(document), topic="example", partition=0, offset=9)
    return get_codec("canal-json").decoder().decode(message)


def message(
    data: list[dict[str, Any]], mysql_type: dict[str, str], sql_type: dict[str, int], **extra: Any
) -> dict[str, Any]:
    return {
        "data": data,
        "database": "shop",
        "es": 1700000000000,
        "id": 3,
        "isDdl": False,
        "mysqlType": mysql_type,
        "old": None,
        "pkNames": ["id"],
        "sql": "",
        "sqlType": sql_type,
        "table": "things",
        "ts": 1700000000123,
        "type": "INSERT",
        **extra,
    }


# ----------------------------------------------------------------------------------------------- decimal


@pytest.mark.parametrize(
    ("text", "expected"),
    [("12.34", "12.3400"), ("7", "7.0000"), ("-0.5", "-0.5000"), ("1.2345", "1.2345"), ("0", "0.0000")],
)
def test_decimal_text_is_padded_to_the_column_scale(text: str, expected: str) -> None:
    doc = message([{"id": "1", "price": text}], {"id": "int(11)", "price": "decimal(10,4)"}, {"id": 4, "price": 3})
    (event,) = decode(doc)
    assert str(event.after["price"]) == expected
    assert canonical.to_canonical(event)["after"]["price"] == expected


def test_decimal_without_a_declared_scale_stays_as_written() -> None:
    doc = message([{"id": "1", "price": "12.34"}], {"id": "int", "price": "decimal"}, {"id": 4, "price": 3})
    (event,) = decode(doc)
    assert str(event.after["price"]) == "12.34"


# ------------------------------------------------------------------------------------------------- float


@pytest.mark.parametrize(
    ("text", "expected"), [("9.9", 9.9), ("5.15", 5.15), ("0.1", 0.1), ("3.4028235E38", 3.4028235e38)]
)
def test_float_keeps_the_written_value(text: str, expected: float) -> None:
    doc = message([{"id": "1", "f": text}], {"id": "int(11)", "f": "float"}, {"id": 4, "f": 7})
    (event,) = decode(doc)
    assert event.after["f"] == expected
    assert canonical.dumps(event).count(f'"f":{expected!r}') == 1  # not 9.899999618530273


# --------------------------------------------------------------------------------------- serial, spatial


def test_serial_is_bigint_unsigned() -> None:
    doc = message([{"id": "18446744073709551615"}], {"id": "serial"}, {"id": -5})
    (event,) = decode(doc)
    assert event.after == {"id": 18446744073709551615}
    assert event.schema.column("id").data_type == DataType(mysql_type=MySQLType.BIGINT, unsigned=True)


def _mysql_geometry(srid: int, wkb: bytes) -> str:
    return (struct.pack("<I", srid) + wkb).decode("latin-1")


POINT_WKB = b"\x01" + struct.pack("<Idd", 1, 1.5, -2.0)
LINE_WKB = b"\x01" + struct.pack("<II4d", 2, 2, 0.0, 0.0, 1.0, 1.0)


@pytest.mark.parametrize(
    "mysql_type",
    ["point", "geometry", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
     "geometrycollection", "geomcollection"],
)  # fmt: skip
def test_spatial_types_are_read(mysql_type: str) -> None:
    wkb = POINT_WKB if mysql_type == "point" else LINE_WKB
    doc = message(
        [{"id": "1", "g": _mysql_geometry(4326, wkb)}, {"id": "2", "g": None}],
        {"id": "int(11)", "g": mysql_type},
        {"id": 4, "g": 2004},
    )
    first, second = decode(doc)
    assert first.after["g"] == Geometry(wkb=wkb, srid=4326)
    assert second.after["g"] is None
    column = first.schema.column("g").data_type
    assert column.logical is LogicalType.GEOMETRY
    rendered = canonical.to_canonical(first)["after"]["g"]
    assert set(rendered) == {"$geometry"} and rendered["$geometry"]["srid"] == 4326
    assert canonical.loads(canonical.dumps(first)) == first


def test_spatial_value_too_short_names_the_field() -> None:
    doc = message([{"id": "1", "g": "\u0000\u0000"}], {"id": "int(11)", "g": "point"}, {"id": 4, "g": 2004})
    with pytest.raises(DecodeError) as info:
        decode(doc)
    assert info.value.field == "data[0].g" and "9 bytes" in info.value.reason


def test_spatial_values_encode_back_as_canal_prints_them() -> None:
    doc = message(
        [{"id": "1", "g": _mysql_geometry(0, POINT_WKB)}], {"id": "int(11)", "g": "point"}, {"id": 4, "g": 2004}
    )
    (event,) = decode(doc)
    assert event.after["g"] == Geometry(wkb=POINT_WKB, srid=None)  # SRID 0: none given, as Debezium has it
    (out,) = get_codec("canal-json").encoder({"content-compatible": True}).encode(event)
    written = orjson.loads(out.value or b"")
    assert written["data"][0]["g"] == _mysql_geometry(0, POINT_WKB)
    assert written["sqlType"]["g"] == 2004


# -------------------------------------------------------------------------------------- missing mysqlType


def test_init_snapshot_with_a_column_mysql_type_lacks_keeps_every_row() -> None:
    """An INIT snapshot whose rows carry a column (``note``) that ``mysqlType``/``sqlType`` do not list."""
    doc = message(
        [{"id": "1", "qty": "2", "note": "added later"}, {"id": "2", "qty": "5", "note": None}],
        {"id": "int(11)", "qty": "int(10) unsigned"},
        {"id": 4, "qty": 4},
        type="INIT",
    )
    first, second = decode(doc)
    assert first.after == {"id": 1, "qty": 2, "note": "added later"}
    assert second.after == {"id": 2, "qty": 5, "note": None}
    assert first.schema.column("note").data_type.logical is LogicalType.STRING
    assert first.meta["canal_type"] == "INIT"


def test_a_column_with_only_a_sql_type_is_typed_from_it() -> None:
    doc = message([{"id": "1", "qty": "2"}], {"id": "int(11)"}, {"id": 4, "qty": 4})
    (event,) = decode(doc)
    assert event.after == {"id": 1, "qty": 2}


def test_an_unknown_mysql_type_with_a_known_sql_type_falls_back_to_it() -> None:
    doc = message([{"id": "1", "v": "42"}], {"id": "int(11)", "v": "mystery(3)"}, {"id": 4, "v": -5})
    (event,) = decode(doc)
    assert event.after["v"] == 42


# ------------------------------------------------------------------------------------------------ pkNames


def test_repeated_pk_names_give_each_key_column_once() -> None:
    doc = message(
        [{"id": "1", "k": "a"}, {"id": "2", "k": "b"}, {"id": "3", "k": "c"}],
        {"id": "int(11)", "k": "varchar(8)"},
        {"id": 4, "k": 12},
        pkNames=["id", "k", "id", "k", "id", "k"],
        type="DELETE",
    )
    events = decode(doc)
    assert [e.before["id"] for e in events] == [1, 2, 3]
    assert all(isinstance(e, RowChange) and e.op is Op.DELETE for e in events)
    assert events[0].schema.primary_key == ("id", "k")
    assert [c.nullable for c in events[0].schema.columns] == [False, False]


# Canal 1.1.2's FlatMessage has no pkNames (added in 1.1.3); an UPDATE as that version wrote it
CANAL_1_1_2_UPDATE = (
    '{"data":[{"deptno":"112013601","emp_name":"Li Wei 2","birth_date":"1970-01-01","leave_date":null,'
    '"pk_serial":"2"}],"database":"report","es":1543909620000,"id":5,"isDdl":false,"mysqlType":{"deptno":'
    '"varchar(11)","emp_name":"varchar(50)","birth_date":"date","leave_date":"date","pk_serial":"int(32)"},'
    '"old":[{"emp_name":"Li Wei"}],"sql":"","sqlType":{"deptno":12,"emp_name":12,"birth_date":91,"leave_date":91,'
    '"pk_serial":4},"table":"staff_info","ts":1543909620416,"type":"UPDATE"}'
)


def test_a_message_of_canal_before_pk_names_decodes_without_a_key() -> None:
    message = Message(value=CANAL_1_1_2_UPDATE.encode(), topic="example", partition=0, offset=9)
    (event,) = get_codec("canal-json").decoder().decode(message)
    assert isinstance(event, RowChange) and event.op is Op.UPDATE
    assert (event.database, event.table) == ("report", "staff_info")
    assert event.schema is not None and event.schema.primary_key == ()
    assert event.before is not None and event.after is not None
    assert (event.before["emp_name"], event.after["emp_name"]) == ("Li Wei", "Li Wei 2")
    assert event.after["pk_serial"] == 2 and event.after["leave_date"] is None
    assert str(event.after["birth_date"]) == "1970-01-01"


def test_decimal_and_float_pass_through_canonical_json_unchanged() -> None:
    doc = message(
        [{"id": "1", "price": "3.1", "f": "9.9"}],
        {"id": "int(11)", "price": "decimal(6,2)", "f": "float"},
        {"id": 4, "price": 3, "f": 7},
    )
    (event,) = decode(doc)
    line = canonical.dumps(event)
    assert '"price":"3.10"' in line and '"f":9.9' in line
    assert canonical.loads(line).after == {"id": 1, "price": Decimal("3.10"), "f": 9.9}


# ------------------------------------------------------------------------------------- captured messages


def test_rows_query_messages_of_a_real_canal_server_carry_no_events() -> None:
    """MariaDB's annotate-rows events reach Canal 1.1.4's flat messages as ``QUERY`` with ``isDdl`` false before
    every row message (tests/captures/): the statement's text, not a DDL; the row messages carry the change."""
    from pathlib import Path

    from cdc_core.messagelines import read_lines

    decoder = get_codec("canal-json").decoder()
    queries, changes = 0, []
    with (Path(__file__).parent / "captures" / "canal-1.1.4-mariadb.jsonl").open("rb") as stream:
        for _, captured in read_lines(stream):
            document = orjson.loads(captured.value or b"")
            events = decoder.decode(captured)
            if document["type"] == "QUERY":
                assert document["isDdl"] is False and events == []
                queries += 1
            changes.extend(e for e in events if isinstance(e, RowChange) and e.table == "types")
    assert queries == 7
    assert [(e.op, e.image["id"]) for e in changes] == [
        (Op.INSERT, 1), (Op.INSERT, 2), (Op.INSERT, 3), (Op.UPDATE, 1), (Op.UPDATE, 3),
        (Op.UPDATE, 30), (Op.DELETE, 2), (Op.DELETE, 30), (Op.INSERT, 4),
    ]  # fmt: skip


# Canal 1.1.4 marks a DDL its parser does not classify QUERY with isDdl false (1.1.5 on: isDdl true); captured
CANAL_1_1_4_CREATE_DATABASE = {
    "data": None, "database": "`test`", "es": 1583143732000, "id": 1, "isDdl": False, "mysqlType": None,
    "old": None, "pkNames": None, "sql": "CREATE DATABASE `test` CHARSET `utf8mb4` COLLATE `utf8mb4_unicode_ci`",
    "sqlType": None, "table": "", "ts": 1583143930177, "type": "QUERY",
}  # fmt: skip


def test_a_ddl_canal_before_1_1_5_marked_not_ddl_is_a_ddl() -> None:
    (event,) = decode(CANAL_1_1_4_CREATE_DATABASE)
    assert isinstance(event, DDLEvent) and event.ddl_type is DDLType.QUERY
    assert event.sql == CANAL_1_1_4_CREATE_DATABASE["sql"] and event.table is None
    assert event.meta == {"es": 1583143732000, "ts": 1583143930177}


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO shop.marks VALUES (2, 'ping')",
        "  /* app=checkout */ update shop.types SET id = 30 WHERE id = 3",
        "-- by the batch job\nDELETE FROM shop.types WHERE id IN (2, 30)",
        "# replayed\nREPLACE INTO t VALUES (1)",
        "WITH old AS (SELECT 1) DELETE FROM t",
        "",
    ],
)
def test_a_rows_query_of_dml_is_still_no_event(sql: str) -> None:
    assert decode({**CANAL_1_1_4_CREATE_DATABASE, "database": "shop", "sql": sql}) == []


def test_ddl_query_is_still_a_ddl() -> None:
    ddl = {
        "data": None,
        "database": "shop",
        "table": "",
        "isDdl": True,
        "type": "QUERY",
        "sql": "CREATE VIEW v AS SELECT 1",
    }
    (event,) = decode(ddl)
    assert event.sql == "CREATE VIEW v AS SELECT 1"
