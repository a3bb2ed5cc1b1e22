"""The encoder reproduces TiCDC's golden Debezium messages, and writes TiCDC's JSON dialect byte for byte.

The corpus files hold JSONEq literals whose key order follows their test authors, so every file is compared
parsed; the ones whose order is the encoder's documented order (reference section 2) are also compared as
exact bytes against their compact re-serialization.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import attrs
import orjson
import pytest

from cdc_core.codec import Options
from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange, Watermark
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_debezium import OPTIONS, DebeziumEncoder
from cdc_testing.corpus import corpus_files

CLOCK = 1701326309000
EXTRACTED = "{repo}/pkg/sink/codec/debezium/codec_test.extracted/{name}.*.json"


def encoder(**options: object) -> DebeziumEncoder:
    raw = {"cluster-id": "test_cluster", **options}
    return DebeziumEncoder(
        Options([s for s in OPTIONS if s.for_encoder], raw, protocol="debezium"), clock=lambda: CLOCK
    )


def golden(repo: str, name: str) -> bytes:
    (path,) = corpus_files(EXTRACTED.format(repo=repo, name=name))
    return path.read_bytes()


def table1(repo: str) -> TableSchema:
    # tiflow's test column is nullable, ticdc's NOT NULL; both key rows by it
    tiny = Column(name="tiny", data_type=DataType(mysql_type=MySQLType.TINYINT), nullable=repo == "tiflow")
    return TableSchema(
        database="test",
        table="table1",
        columns=[tiny],
        indexes=[Index(name="PRIMARY", columns=["tiny"], unique=True, primary=True)],
    )


def row(repo: str, op: Op, before: Any, after: Any) -> RowChange:
    return RowChange(
        op=op, database="test", table="table1", before=before, after=after, commit_ts=1, schema=table1(repo)
    )


def id_table(database: str, table: str, length: int | None) -> TableSchema:
    column = Column(name="id", data_type=DataType(mysql_type=MySQLType.INT, length=length), nullable=False)
    return TableSchema(
        database=database,
        table=table,
        columns=[column],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )


def ddl_events(repo: str) -> dict[str, DDLEvent]:
    # tiflow's test hands TiCDC TableInfo=table1, PreTableInfo=table2 for the rename; ticdc's the reverse.
    # tiflow builds the column's field type by hand (flen 0, no charset); ticdc from DDL text (int(10), utf8mb4).
    length, charset = (0, "") if repo == "tiflow" else (10, "utf8mb4")
    new, old = ("table1", "table2") if repo == "tiflow" else ("table2", "table1")
    create_sql = "CREATE TABLE test.table1" if repo == "tiflow" else "CREATE TABLE test.table1(id int(10) primary key)"
    return {
        "rename": DDLEvent(
            ddl_type=DDLType.RENAME,
            sql="RENAME TABLE test.table1 to test.table2",
            database="test",
            table=new,
            commit_ts=1,
            table_schema=id_table("test", new, length),
            pre_table_schema=id_table("test", old, length),
            meta={"default_charset": charset},
        ),
        "create": DDLEvent(
            ddl_type=DDLType.CREATE,
            sql=create_sql,
            database="test",
            table="table1",
            commit_ts=1,
            table_schema=id_table("test", "table1", length),
            meta={"default_charset": charset},
        ),
        "drop": DDLEvent(
            ddl_type=DDLType.ERASE,
            sql="DROP TABLE test.table2",
            database="test",
            table="table2",
            commit_ts=1,
            pre_table_schema=id_table("test", "table2", length),
        ),
    }


def cases(repo: str) -> list[tuple[str, str, dict[str, object], Event]]:
    ddl = ddl_events(repo)
    off = {"debezium-disable-schema": True}
    return [
        ("TestEncodeInsert.01", "TestEncodeInsert.02", off, row(repo, Op.INSERT, None, {"tiny": 1})),
        ("TestEncodeInsert.03", "TestEncodeInsert.04", {}, row(repo, Op.INSERT, None, {"tiny": 1})),
        ("TestEncodeUpdate.01", "TestEncodeUpdate.02", off, row(repo, Op.UPDATE, {"tiny": 2}, {"tiny": 1})),
        ("TestEncodeUpdate.03", "TestEncodeUpdate.04", {}, row(repo, Op.UPDATE, {"tiny": 2}, {"tiny": 1})),
        (
            "TestEncodeUpdate.05",
            "TestEncodeUpdate.06",
            {**off, "output-old-value": False},
            row(repo, Op.UPDATE, {"tiny": 2}, {"tiny": 1}),
        ),
        ("TestEncodeDelete.01", "TestEncodeDelete.02", off, row(repo, Op.DELETE, {"tiny": 2}, None)),
        ("TestEncodeDelete.03", "TestEncodeDelete.04", {}, row(repo, Op.DELETE, {"tiny": 2}, None)),
        ("TestCheckPointEvent.01", "TestCheckPointEvent.02", {"enable-tidb-extension": True}, Watermark(ts=3)),
        ("TestDDLEvent.01", "TestDDLEvent.02", {}, ddl["rename"]),
        ("TestDDLEvent.03", "TestDDLEvent.04", off, ddl["create"]),
        ("TestDDLEvent.05", "TestDDLEvent.06", off, ddl["drop"]),
    ]


ALL_CASES = [(repo, *case) for repo in ("tiflow", "ticdc") for case in cases(repo)]
# Files written in the encoder's own order (reference 2.1): payload source, ts_ms, transaction, op, before,
# after; schema type, optional, name, version, fields; field entries type, optional, [name...], field.
EXACT_ORDER = {"TestEncodeInsert.04", "TestEncodeUpdate.04", "TestEncodeDelete.04", "TestEncodeInsert.01"}


@pytest.mark.parametrize(("repo", "key_name", "value_name", "options", "event"), ALL_CASES)
def test_reproduces_ticdc_golden_messages(
    repo: str, key_name: str, value_name: str, options: dict[str, object], event: Event
) -> None:
    (message,) = encoder(**options).encode(event)
    assert orjson.loads(message.value or b"") == orjson.loads(golden(repo, value_name))
    assert orjson.loads(message.key or b"") == orjson.loads(golden(repo, key_name))
    for name, produced in ((value_name, message.value), (key_name, message.key)):
        if name in EXACT_ORDER:
            assert produced == orjson.dumps(orjson.loads(golden(repo, name)))


def test_exact_byte_order_of_a_delete_with_schema_off() -> None:
    (message,) = encoder(**{"debezium-disable-schema": True}).encode(row("ticdc", Op.DELETE, {"tiny": 2}, None))
    assert message.value == (
        b'{"payload":{"source":{"version":"2.4.0.Final","connector":"TiCDC","name":"test_cluster","ts_ms":0,'
        b'"snapshot":"false","db":"test","table":"table1","server_id":0,"gtid":null,"file":"","pos":0,"row":0,'
        b'"thread":0,"query":null,"commit_ts":1,"cluster_id":"test_cluster"},"ts_ms":1701326309000,'
        b'"transaction":null,"op":"d","after":null,"before":{"tiny":2}}}'
    )
    assert message.key == b'{"payload":{"tiny":2}}'


def test_watermarks_only_with_tidb_extension() -> None:
    assert encoder().encode(Watermark(ts=3)) == []


def test_schema_change_key_uses_field_optional_type_order() -> None:
    (message,) = encoder().encode(ddl_events("ticdc")["drop"])
    assert message.key == (
        b'{"payload":{"databaseName":"test"},"schema":{"type":"struct","name":'
        b'"io.debezium.connector.mysql.SchemaChangeKey","optional":false,"version":1,'
        b'"fields":[{"field":"databaseName","optional":false,"type":"string"}]}}'
    )


# ----------------------------------------------------------------------------------- the JSON dialect


def _one_column(data_type: DataType, value: Any, *, default: str | None = None, nullable: bool = True) -> RowChange:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[
            Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False),
            Column(name="c", data_type=data_type, nullable=nullable, default=default),
        ],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )
    return RowChange(
        op=Op.INSERT, database="d", table="t", after={"id": 1, "c": value}, commit_ts=1 << 18, schema=schema
    )


def _after_bytes(event: RowChange, **options: object) -> bytes:
    (message,) = encoder(**{"debezium-disable-schema": True, **options}).encode(event)
    value = message.value or b""
    start = value.index(b'"after":') + len(b'"after":')
    return value[start:-2]


STAMP = dt.datetime(2023, 11, 30, 12, 34, 56)
CLOCK_TIME = dt.timedelta(hours=12, minutes=34, seconds=56)
VARCHAR = DataType(mysql_type=MySQLType.VARCHAR, length=50)


@pytest.mark.parametrize(
    ("data_type", "value", "wire"),
    [
        # no HTML escaping, raw UTF-8, short escapes for " \ \n \r \t, lower-case \u00xx for other controls
        (
            VARCHAR,
            '<a&b>"\\\n\r\t\x01\x1f中文\u2028',
            b'"<a&b>\\"\\\\\\n\\r\\t\\u0001\\u001f\xe4\xb8\xad\xe6\x96\x87\xe2\x80\xa8"',
        ),
        # json-iterator has no short escapes for backspace and form feed
        (VARCHAR, "a\bb\fc\\b", b'"a\\u0008b\\u000cc\\\\b"'),
        # invalid UTF-8 upstream (a surrogateescape character here) passes through as the raw byte
        (VARCHAR, "x\udcff", b'"x\xff"'),
        # json-iterator 1.1.12: plain digits in [1e-6, 1e21), else Go's exponent of at least two digits
        (DataType(mysql_type=MySQLType.DOUBLE), 1e-7, b"1e-07"),
        (DataType(mysql_type=MySQLType.DOUBLE), 1e21, b"1e+21"),
        (DataType(mysql_type=MySQLType.DOUBLE), 123456789012345680000.0, b"123456789012345680000"),
        (DataType(mysql_type=MySQLType.DOUBLE), 0.000001, b"0.000001"),
        (DataType(mysql_type=MySQLType.DOUBLE), 1e-7 * 3, b"3e-07"),
        (DataType(mysql_type=MySQLType.DOUBLE), 5e-324, b"5e-324"),
        (DataType(mysql_type=MySQLType.DOUBLE), 100.0, b"100"),
        # FLOAT with 32-bit shortest digits
        (DataType(mysql_type=MySQLType.FLOAT), 12345.123046875, b"12345.123"),
        # DECIMAL through float64
        (
            DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=5),
            Decimal("12345.12345"),
            b"12345.12345",
        ),
        # BIGINT UNSIGNED as two's complement
        (DataType(mysql_type=MySQLType.BIGINT, unsigned=True), 18446744073709551615, b"-1"),
        # BIT(n) little-endian base64 truncated to ceil(n/8) bytes, BIT(1) boolean
        (DataType(mysql_type=MySQLType.BIT, length=60), 16, b'"EAAAAAAAAAA="'),
        (DataType(mysql_type=MySQLType.BIT, length=5), 16, b'"EA=="'),
        (DataType(mysql_type=MySQLType.BIT, length=1), 1, b"true"),
        # two-digit-year rule: year 23 is written as 2023
        (DataType(mysql_type=MySQLType.DATE), dt.date(23, 11, 30), b"19691"),
        (
            DataType(mysql_type=MySQLType.DATETIME, decimal=4),
            dt.datetime(2023, 11, 30, 12, 34, 56, 123500),
            b"1701347696123500",
        ),
        (
            DataType(mysql_type=MySQLType.TIMESTAMP, decimal=5),
            dt.datetime(2023, 11, 30, 12, 34, 56, 123460, tzinfo=dt.UTC),
            b'"2023-11-30T12:34:56.12346Z"',
        ),
        (
            DataType(mysql_type=MySQLType.TIME, decimal=6),
            -dt.timedelta(hours=12, minutes=34, seconds=56, microseconds=123456),
            b"-45296123456",
        ),
    ],
)
def test_value_dialect(data_type: DataType, value: Any, wire: bytes) -> None:
    assert _after_bytes(_one_column(data_type, value)) == b'{"id":1,"c":' + wire + b"}"


def test_null_with_default_is_written_as_the_default() -> None:
    event = _one_column(DataType(mysql_type=MySQLType.INT), None, default="15")
    assert _after_bytes(event) == b'{"id":1,"c":15}'
    (message,) = encoder().encode(event)
    fields = orjson.loads(message.value or b"")["schema"]["fields"][1]["fields"]
    assert fields[1] == {"type": "int32", "optional": True, "field": "c", "default": 15.0}


def test_tidb_extension_writes_tidb_type_first() -> None:
    event = _one_column(DataType(mysql_type=MySQLType.BIGINT, unsigned=True), 5)
    (message,) = encoder(**{"enable-tidb-extension": True}).encode(event)
    assert b'{"tidb_type":"bigint unsigned","type":"int64","optional":true,"field":"c"}' in (message.value or b"")


def test_schema_names_are_sanitized() -> None:
    event = _one_column(VARCHAR, "x")
    (message,) = encoder(**{"cluster-id": "9-cluster"}).encode(event)
    schema = orjson.loads(message.value or b"")["schema"]
    assert schema["name"] == "_9_cluster.d.t.Envelope"


def test_time_zone_option_both_ways() -> None:
    from cdc_core.message import Message
    from cdc_debezium import DebeziumDecoder

    stamp = DataType(mysql_type=MySQLType.TIMESTAMP, decimal=3)
    # a naive TIMESTAMP is local time of the TiCDC server zone: 20:34:56.789 in Shanghai is 12:34:56.789 UTC
    event = _one_column(stamp, dt.datetime(2023, 11, 30, 20, 34, 56, 789000))
    assert _after_bytes(event, **{"time-zone": "Asia/Shanghai"}) == b'{"id":1,"c":"2023-11-30T12:34:56.789Z"}'
    (message,) = encoder(**{"time-zone": "Asia/Shanghai"}).encode(event)
    specs = [s for s in OPTIONS if s.for_decoder]
    decoder = DebeziumDecoder(Options(specs, {"time-zone": "Asia/Shanghai"}, protocol="debezium"))
    (decoded,) = decoder.decode(Message(value=message.value, key=message.key))
    value = decoded.after["c"]
    assert value == dt.datetime(2023, 11, 30, 12, 34, 56, 789000, tzinfo=dt.UTC)
    assert value.utcoffset() == dt.timedelta(hours=8)


def test_key_uses_the_not_null_unique_index_without_primary_key() -> None:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[
            Column(name="a", data_type=DataType(mysql_type=MySQLType.INT)),
            Column(name="code", data_type=DataType(mysql_type=MySQLType.VARCHAR, length=8), nullable=False),
        ],
        indexes=[Index(name="uk", columns=["code"], unique=True)],
    )
    event = RowChange(op=Op.DELETE, database="d", table="t", before={"a": 1, "code": "x"}, commit_ts=1, schema=schema)
    (message,) = encoder().encode(event)
    assert message.key == (
        b'{"payload":{"code":"x"},"schema":{"type":"struct","name":"test_cluster.d.t.Key","optional":false,'
        b'"fields":[{"type":"string","optional":false,"field":"code"}]}}'
    )


def test_schema_level_ddl_and_truncate_have_no_table_changes() -> None:
    create_db = DDLEvent(ddl_type=DDLType.CREATE, sql="CREATE DATABASE shop", database="shop", commit_ts=1 << 18)
    truncate = DDLEvent(
        ddl_type=DDLType.TRUNCATE, sql="TRUNCATE TABLE shop.t", database="shop", table="t", commit_ts=1 << 18
    )
    for event, table in ((create_db, ""), (truncate, "t")):
        (message,) = encoder(**{"debezium-disable-schema": True}).encode(event)
        payload = orjson.loads(message.value or b"")["payload"]
        assert payload["tableChanges"] == [] and payload["ddl"] == event.sql
        assert (payload["source"]["db"], payload["source"]["table"], payload["source"]["ts_ms"]) == ("shop", table, 1)
        assert message.key == b'{"payload":{"databaseName":"shop"}}'


def test_ddl_round_trip_of_the_golden_events() -> None:
    from cdc_core.message import Message
    from cdc_debezium import DebeziumDecoder

    decoder = DebeziumDecoder(Options([s for s in OPTIONS if s.for_decoder], protocol="debezium"))
    for repo in ("tiflow", "ticdc"):
        for event in ddl_events(repo).values():
            (message,) = encoder().encode(event)
            (decoded,) = decoder.decode(Message(value=message.value, key=message.key))
            expected = event if event.ddl_type is not DDLType.ERASE else attrs.evolve(event, pre_table_schema=None)
            assert decoded == expected
