"""Real Debezium and dtle flavours, the connector's handling modes, exact big numbers, and no-event messages.

Messages are written by hand from the Debezium MySQL connector documentation and dtle's Kafka format
document; expected values are worked out from them.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import orjson
import pytest

from cdc_core.codec import Options
from cdc_core.errors import DecodeError
from cdc_core.events import DDLEvent, DDLType, Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_debezium import OPTIONS, DebeziumDecoder

DBZ_SOURCE = {
    "version": "2.4.0.Final",
    "connector": "mysql",
    "name": "dbserver1",
    "ts_ms": 1701673705000,
    "snapshot": "false",
    "db": "inventory",
    "sequence": None,
    "table": "customers",
    "server_id": 223344,
    "gtid": "3E11FA47-71CA-11E1-9E33-C80AA9429562:23",
    "file": "mysql-bin.000005",
    "pos": 10394,
    "row": 2,
    "thread": 11,
    "query": None,
}


def decoder(schemas: list[TableSchema] | None = None, **options: object) -> DebeziumDecoder:
    specs = [s for s in OPTIONS if s.for_decoder]
    return DebeziumDecoder(Options(specs, options, protocol="debezium"), schemas=schemas or ())


def decode(doc: Any, key: Any = None, *, schemas: list[TableSchema] | None = None, **options: object) -> list[Any]:
    value = doc if isinstance(doc, bytes) or doc is None else orjson.dumps(doc)
    raw_key = None if key is None else orjson.dumps(key)
    message = Message(value=value, key=raw_key, topic="dbserver1.inventory.customers", partition=0, offset=5)
    return decoder(schemas, **options).decode(message)


def customers(*columns: tuple[str, DataType]) -> TableSchema:
    return TableSchema(
        database="inventory",
        table="customers",
        columns=[Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False)]
        + [Column(name=n, data_type=t) for n, t in columns],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    )


def field(kind: str, column: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "optional": True, **extra, "field": column}


def envelope(fields: list[dict[str, Any]], payload: dict[str, Any]) -> dict[str, Any]:
    value = {"type": "struct", "optional": True, "name": "dbserver1.inventory.customers.Value", "fields": fields}
    return {
        "schema": {
            "type": "struct",
            "name": "dbserver1.inventory.customers.Envelope",
            "optional": False,
            "fields": [{**value, "field": "before"}, {**value, "field": "after"}],
        },
        "payload": payload,
    }


ID_FIELD = {"type": "int32", "optional": False, "field": "id"}


# ------------------------------------------------------------------------------------------------- dtle

DTLE_VALUE = {
    "schema": {
        "type": "struct",
        "fields": [
            {
                "type": "struct",
                "fields": [ID_FIELD, {"type": "string", "optional": False, "field": "first_name"}],
                "optional": True,
                "name": "dbserver1.inventory.customers.Value",
                "field": "before",
            },
            {
                "type": "struct",
                "fields": [ID_FIELD, {"type": "string", "optional": False, "field": "first_name"}],
                "optional": True,
                "name": "dbserver1.inventory.customers.Value",
                "field": "after",
            },
        ],
        "optional": False,
        "name": "dbserver1.inventory.customers.Envelope",
        "version": 1,
    },
    "payload": {
        "before": None,
        "after": {"id": 1004, "first_name": "Anne"},
        "source": {
            "version": "0.8.3.Final",
            "name": "dbserver1",
            "server_id": 0,
            "ts_sec": 0,
            "gtid": None,
            "file": "mysql-bin.000003",
            "pos": 154,
            "row": 0,
            "snapshot": True,
            "thread": None,
            "db": "inventory",
            "table": "customers",
        },
        "op": "c",
        "ts_ms": 1486500577691,
    },
}
DTLE_KEY = {
    "schema": {
        "type": "struct",
        "name": "dbserver1.inventory.customers.Key",
        "optional": False,
        "fields": [{"field": "id", "type": "int32", "optional": False}],
    },
    "payload": {"id": 1004},
}


def test_dtle_row() -> None:
    (event,) = decode(DTLE_VALUE, DTLE_KEY)
    assert event == RowChange(
        op=Op.INSERT, database="inventory", table="customers", after={"id": 1004, "first_name": "Anne"}
    )
    assert event.meta == {
        "version": "0.8.3.Final",
        "cluster": "dbserver1",
        "server_id": 0,
        "ts_sec": 0,
        "file": "mysql-bin.000003",
        "pos": 154,
        "row": 0,
        "snapshot": True,
        "ts_ms": 1486500577691,
    }
    assert event.schema.primary_key == ("id",)
    assert event.schema.column("id").data_type.mysql_type is MySQLType.INT


def test_dtle_schema_change_topic() -> None:
    value = {
        "source": {"server": "mysql2"},
        "position": {
            "ts_sec": 1641807976,
            "file": "bin.000022",
            "pos": 439,
            "gtids": "acd7d195-06cd-11e9-928f-02000aba3e28:1-175",
            "snapshot": True,
        },
        "databaseName": "a",
        "ddl": "CREATE TABLE `a` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB",
        "tableChanges": [
            {
                "type": "CREATE",
                "id": '"a"."a"',
                "table": {
                    "defaultCharsetName": "latin1",
                    "primaryKeyColumnNames": ["id"],
                    "columns": [
                        {
                            "name": "id",
                            "jdbcType": 4,
                            "typeName": "INT",
                            "typeExpression": "INT",
                            "charsetName": None,
                            "length": 11,
                            "position": 1,
                            "optional": False,
                            "autoIncremented": True,
                            "generated": True,
                        }
                    ],
                },
            }
        ],
    }
    (event,) = decode(value)  # the key is always null on dtle's schema-change topic
    assert event == DDLEvent(
        ddl_type=DDLType.CREATE,
        sql=value["ddl"],
        database="a",
        table="a",
        table_schema=TableSchema(
            database="a",
            table="a",
            columns=[Column(name="id", data_type=DataType(mysql_type=MySQLType.INT, length=11), nullable=False)],
            indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
        ),
    )
    assert event.commit_ts is None
    assert event.meta["name"] == "mysql2"
    assert (event.meta["file"], event.meta["pos"], event.meta["snapshot"]) == ("bin.000022", 439, True)
    assert event.meta["gtids"] == "acd7d195-06cd-11e9-928f-02000aba3e28:1-175"
    assert event.meta["default_charset"] == "latin1"


# --------------------------------------------------------------------------------------- real Debezium


def _dbz_row(op: str, before: Any, after: Any, **source: Any) -> dict[str, Any]:
    payload = {
        "before": before,
        "after": after,
        "source": {**DBZ_SOURCE, **source},
        "op": op,
        "ts_ms": 1701673705263,
        "transaction": None,
    }
    return envelope([ID_FIELD, field("string", "email")], payload)


def test_snapshot_read_is_an_insert_marked_as_snapshot() -> None:
    (event,) = decode(_dbz_row("r", None, {"id": 1, "email": "a@b"}, snapshot="true"))
    assert event == RowChange(op=Op.INSERT, database="inventory", table="customers", after={"id": 1, "email": "a@b"})
    assert event.meta["snapshot_read"] is True and event.meta["snapshot"] == "true"
    assert event.meta["gtid"] == "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"
    assert (event.meta["file"], event.meta["pos"], event.meta["row"]) == ("mysql-bin.000005", 10394, 2)


def test_delete_then_tombstone() -> None:
    (event,) = decode(_dbz_row("d", {"id": 1, "email": "a@b"}, None))
    assert event.op is Op.DELETE and event.before == {"id": 1, "email": "a@b"}
    assert decode(None, {"payload": {"id": 1}}) == []
    assert decode(b"", {"payload": {"id": 1}}) == []
    assert decode({"schema": None, "payload": None}) == []


def test_truncate() -> None:
    payload = {"source": DBZ_SOURCE, "op": "t", "ts_ms": 1701673705263, "transaction": None}
    (event,) = decode({"payload": payload, "schema": {"type": "struct", "fields": []}})
    assert event == DDLEvent(ddl_type=DDLType.TRUNCATE, sql=None, database="inventory", table="customers")
    assert event.meta["file"] == "mysql-bin.000005"


@pytest.mark.parametrize(
    "payload",
    [
        {"status": "BEGIN", "id": "571:53195829", "event_count": None, "data_collections": None, "ts_ms": 1},
        {
            "status": "END",
            "id": "571:53195832",
            "event_count": 2,
            "data_collections": [{"data_collection": "s1.a", "event_count": 1}],
            "ts_ms": 2,
        },
    ],
)
def test_transaction_metadata_is_no_event(payload: dict[str, Any]) -> None:
    assert decode(payload) == []
    assert decode({"schema": {"type": "struct", "name": "io.debezium.connector.common.TransactionMetadataValue"},
                   "payload": payload}) == []  # fmt: skip


def test_heartbeat_is_no_event() -> None:
    schema = {"type": "struct", "name": "io.debezium.connector.common.Heartbeat", "fields": []}
    assert decode({"schema": schema, "payload": {"ts_ms": 1701673705263}}) == []
    assert decode({"ts_ms": 1701673705263}) == []


def test_transaction_block_is_kept_in_meta() -> None:
    doc = _dbz_row("c", None, {"id": 1, "email": "x"})
    block = {"id": "571:53195832", "total_order": 1, "data_collection_order": 1}
    doc["payload"]["transaction"] = block
    (event,) = decode(doc)
    assert event.meta["transaction"] == block


# ------------------------------------------------------------------------------- decimal.handling.mode

PRECISE_FIELD = field(
    "bytes", "price", name="org.apache.kafka.connect.data.Decimal", version=1,
    parameters={"scale": "5", "connect.decimal.precision": "10"},
)  # fmt: skip
DECIMAL_10_5 = DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=5)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [("SZUp2Q==", Decimal("12345.12345")), ("tmrWJw==", Decimal("-12345.12345")), ("/w==", Decimal("-0.00001"))],
)
def test_decimal_precise_from_the_schema(wire: str, expected: Decimal) -> None:
    (event,) = decode(envelope([ID_FIELD, PRECISE_FIELD], {**_payload(), "after": {"id": 1, "price": wire}}))
    assert event.after["price"] == expected and event.after["price"].as_tuple().exponent == -5
    assert event.schema.column("price").data_type == DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=5)


def _payload() -> dict[str, Any]:
    return {"before": None, "source": DBZ_SOURCE, "op": "c", "ts_ms": 1}


@pytest.mark.parametrize(
    ("mode", "wire", "expected"),
    [
        ("precise", "SZUp2Q==", Decimal("12345.12345")),
        ("string", "12345.12345", Decimal("12345.12345")),
        ("double", 12345.12345, Decimal("12345.12345")),
    ],
)
def test_decimal_modes_schemaless_with_user_schema(mode: str, wire: Any, expected: Decimal) -> None:
    payload = {**_payload(), "after": {"id": 1, "price": wire}}
    schema = customers(("price", DECIMAL_10_5))
    (event,) = decode({"payload": payload}, schemas=[schema], **{"decimal.handling.mode": mode})
    assert event.after["price"] == expected and str(event.after["price"]) == "12345.12345"


def test_decimal_string_mode_from_the_schema_with_user_schema() -> None:
    doc = envelope([ID_FIELD, field("string", "price")], {**_payload(), "after": {"id": 1, "price": "0.10000"}})
    (event,) = decode(doc, schemas=[customers(("price", DECIMAL_10_5))])
    assert str(event.after["price"]) == "0.10000"


def test_variable_scale_decimal() -> None:
    vsd = field("struct", "amount", name="io.debezium.data.VariableScaleDecimal", version=1)
    doc = envelope([ID_FIELD, vsd], {**_payload(), "after": {"id": 1, "amount": {"scale": 2, "value": "/w=="}}})
    (event,) = decode(doc)
    assert event.after["amount"] == Decimal("-0.01")


# ------------------------------------------------------------------------------- binary.handling.mode

VARBINARY = DataType(mysql_type=MySQLType.VARBINARY, length=16)


@pytest.mark.parametrize(
    ("mode", "wire"), [("base64", "Zm9vAP8="), ("hex", "666f6f00ff"), ("base64-url-safe", "Zm9vAP8=")]
)
def test_binary_modes(mode: str, wire: str) -> None:
    payload = {**_payload(), "after": {"id": 1, "data": wire}}
    schema = customers(("data", VARBINARY))
    (schemaless,) = decode({"payload": payload}, schemas=[schema], **{"binary.handling.mode": mode})
    (with_schema,) = decode(
        envelope([ID_FIELD, field("string", "data")], payload), schemas=[schema], **{"binary.handling.mode": mode}
    )
    assert schemaless.after["data"] == with_schema.after["data"] == b"foo\x00\xff"


def test_binary_mode_bytes_uses_connect_bytes() -> None:
    # binary.handling.mode=bytes: Kafka Connect bytes, which JsonConverter writes as base64
    doc = envelope([ID_FIELD, field("bytes", "data")], {**_payload(), "after": {"id": 1, "data": "Zm9vAP8="}})
    (event,) = decode(doc)
    assert event.after["data"] == b"foo\x00\xff"
    assert event.schema.column("data").data_type.mysql_type is MySQLType.VARBINARY


# -------------------------------------------------------------------------------- time.precision.mode

TIME_6 = DataType(mysql_type=MySQLType.TIME, decimal=6)
TIME_0 = DataType(mysql_type=MySQLType.TIME, decimal=0)
DATETIME_6 = DataType(mysql_type=MySQLType.DATETIME, decimal=6)
DATETIME_0 = DataType(mysql_type=MySQLType.DATETIME, decimal=0)
SECOND = dt.timedelta(seconds=1)


@pytest.mark.parametrize(
    ("mode", "t6", "t0", "dt6", "dt0"),
    [
        # adaptive_time_microseconds: TIME always µs, DATETIME ms up to fsp 3 and µs beyond
        ("adaptive_time_microseconds", 1_000_001, 1_000_000, 1_000_001, 1000),
        # adaptive: TIME and DATETIME both ms up to fsp 3 and µs beyond
        ("adaptive", 1_000_001, 1000, 1_000_001, 1000),
        # connect: Kafka Connect's Time/Timestamp, always ms
        ("connect", 1000, 1000, 1000, 1000),
    ],
)
def test_time_precision_modes_schemaless(mode: str, t6: int, t0: int, dt6: int, dt0: int) -> None:
    schema = customers(("t6", TIME_6), ("t0", TIME_0), ("dt6", DATETIME_6), ("dt0", DATETIME_0))
    payload = {**_payload(), "after": {"id": 1, "t6": t6, "t0": t0, "dt6": dt6, "dt0": dt0}}
    (event,) = decode({"payload": payload}, schemas=[schema], **{"time.precision.mode": mode})
    fraction = dt.timedelta(microseconds=1) if mode != "connect" else dt.timedelta(0)
    assert event.after["t6"] == SECOND + fraction
    assert event.after["t0"] == SECOND
    assert event.after["dt6"] == dt.datetime(1970, 1, 1, 0, 0, 1) + fraction
    assert event.after["dt0"] == dt.datetime(1970, 1, 1, 0, 0, 1)


@pytest.mark.parametrize(
    ("name", "kind", "wire", "expected"),
    [
        ("org.apache.kafka.connect.data.Time", "int32", 1500, dt.timedelta(milliseconds=1500)),
        ("io.debezium.time.Time", "int32", 1500, dt.timedelta(milliseconds=1500)),
        ("io.debezium.time.NanoTime", "int64", 1_500_000_000, dt.timedelta(milliseconds=1500)),
        ("org.apache.kafka.connect.data.Timestamp", "int64", 1500, dt.datetime(1970, 1, 1, 0, 0, 1, 500000)),
        ("io.debezium.time.NanoTimestamp", "int64", 1_500_000_000, dt.datetime(1970, 1, 1, 0, 0, 1, 500000)),
        ("org.apache.kafka.connect.data.Date", "int32", -1, dt.date(1969, 12, 31)),
        ("io.debezium.time.ZonedTimestamp", "string", "2023-11-30T20:34:56+08:00", dt.datetime(2023, 11, 30, 12, 34,
                                                                                               56, tzinfo=dt.UTC)),
    ],
)  # fmt: skip
def test_temporal_logical_names(name: str, kind: str, wire: Any, expected: Any) -> None:
    doc = envelope([ID_FIELD, field(kind, "v", name=name, version=1)], {**_payload(), "after": {"id": 1, "v": wire}})
    (event,) = decode(doc)
    assert event.after["v"] == expected and type(event.after["v"]) is type(expected)
    if isinstance(expected, dt.datetime) and expected.tzinfo is not None:
        assert event.after["v"].utcoffset() == dt.timedelta(0)


# ------------------------------------------------------------------------------------- exact big numbers


def test_json_numbers_beyond_float_precision_stay_exact() -> None:
    schema = customers(
        ("big", DataType(mysql_type=MySQLType.DECIMAL, length=30, decimal=9)),
        ("ubig", DataType(mysql_type=MySQLType.BIGINT, unsigned=True)),
    )
    raw = (
        b'{"payload":{"before":null,"after":{"id":1,"big":12345678901234567890.123456789,'
        b'"ubig":18446744073709551615},"source":{"db":"inventory","table":"customers"},"op":"c"}}'
    )
    (event,) = decode(raw, schemas=[schema])
    assert event.after["big"] == Decimal("12345678901234567890.123456789")
    assert str(event.after["big"]) == "12345678901234567890.123456789"
    assert event.after["ubig"] == 18446744073709551615


def test_json_integer_beyond_64_bits_untyped_stays_exact() -> None:
    raw = b'{"payload":{"after":{"id":1,"n":123456789012345678901234567890},"source":{"db":"d","table":"t"},"op":"c"}}'
    (event,) = decode(raw)
    assert event.after["n"] == "123456789012345678901234567890"  # text, every digit


def test_schemaless_columns_have_one_type_whatever_their_values() -> None:
    """Without schema and user TableSchema each column is text, however a message writes it: a number in one
    message and a string in the next (and an update's before and after) agree, digits as written."""
    first = b'{"payload":{"before":null,"after":{"id":1,"w":0.75},"source":{"db":"d","table":"t"},"op":"c"}}'
    second = b'{"payload":{"before":{"id":1,"w":0.75},"after":{"id":1,"w":"3.140000104904175"},'
    second += b'"source":{"db":"d","table":"t"},"op":"u"}}'
    third = b'{"after":{"id":2,"w":1.10,"ok":true,"p":{"x":1.5}},"source":{"db":"d","table":"t"},"op":"c"}'
    decoder_ = decoder()
    events = [e for raw in (first, second, third) for e in decoder_.decode(Message(value=raw))]
    assert [e.after for e in events] == [
        {"id": "1", "w": "0.75"},
        {"id": "1", "w": "3.140000104904175"},
        {"id": "2", "w": "1.10", "ok": "true", "p": '{"x":1.5}'},
    ]
    assert events[1].before == {"id": "1", "w": "0.75"}
    for event in events:
        assert event.schema is not None
        assert {c.data_type.mysql_type for c in event.schema.columns} == {MySQLType.LONGTEXT}
    assert events[2].schema is not None and events[2].schema.column_names == ("id", "w", "ok", "p")


@pytest.mark.parametrize("schema_first", [True, False])
def test_exact_digits_found_whichever_member_comes_first(schema_first: bool) -> None:
    # columns named "payload" and "schema" must not confuse the scan for long numbers
    schema = customers(
        ("payload", DataType(mysql_type=MySQLType.DECIMAL, length=30, decimal=9)),
        ("schema", DataType(mysql_type=MySQLType.DECIMAL, length=30, decimal=9)),
    )
    fields = b'{"type":"struct","fields":[{"type":"struct","field":"after","fields":[{"type":"int32","field":"id"},'
    fields += b'{"type":"double","field":"payload"},{"type":"double","field":"schema"}]}]}'
    payload = (
        b'{"after":{"id":1,"payload":12345678901234567890.123456789,"schema":98765432109876543210.987654321},'
        b'"source":{"db":"inventory","table":"customers"},"op":"c"}'
    )
    raw = (
        b'{"schema":' + fields + b',"payload":' + payload + b"}"
        if schema_first
        else b'{"payload":' + payload + b',"schema":' + fields + b"}"
    )
    (event,) = decode(raw, schemas=[schema])
    assert str(event.after["payload"]) == "12345678901234567890.123456789"
    assert str(event.after["schema"]) == "98765432109876543210.987654321"


def test_schema_reused_across_messages_of_one_decoder() -> None:
    """The second message of a table reuses the parsed schema: values still come from its own payload."""
    one = decoder()
    first = orjson.dumps(_dbz_row("c", None, {"id": 1, "email": "a"}))
    second = orjson.dumps(_dbz_row("u", {"id": 1, "email": "a"}, {"id": 1, "email": "b"}))
    assert first.startswith(b'{"schema":')
    (a,) = one.decode(Message(value=first))
    (b,) = one.decode(Message(value=second))
    (c,) = one.decode(Message(value=first))
    assert (a.op, a.after) == (Op.INSERT, {"id": 1, "email": "a"})
    assert (b.op, b.before, b.after) == (Op.UPDATE, {"id": 1, "email": "a"}, {"id": 1, "email": "b"})
    assert c == a and c.schema is a.schema
    with pytest.raises(DecodeError, match="not valid JSON"):
        one.decode(Message(value=first[:-2] + b"}}}"))  # a broken frame around a cached schema


def test_schemaless_columns_can_be_refused() -> None:
    """``untyped-columns=reject``: a schemaless row no table-schema types is a DecodeError naming the table; a
    table the user typed still decodes."""
    raw = b'{"payload":{"after":{"id":1,"w":0.75},"source":{"db":"d","table":"t"},"op":"c"}}'
    with pytest.raises(DecodeError, match=r"table d\.t: the message has no schema") as caught:
        decode(raw, **{"untyped-columns": "reject"})
    assert caught.value.field == "payload.after"
    schema = TableSchema(
        database="d",
        table="t",
        columns=[
            Column(name="id", data_type=DataType(mysql_type=MySQLType.INT)),
            Column(name="w", data_type=DataType(mysql_type=MySQLType.DOUBLE)),
        ],
    )
    (event,) = decode(raw, schemas=[schema], **{"untyped-columns": "reject"})
    assert event.after == {"id": 1, "w": 0.75}


def test_schemaless_payload_with_a_column_named_schema() -> None:
    raw = b'{"payload":{"before":null,"after":{"id":1,"schema":"s","payload":"p"},'
    raw += b'"source":{"db":"d","table":"t"},"op":"c"}}'
    (event,) = decode(raw)
    assert event.after == {"id": "1", "schema": "s", "payload": "p"}


def test_long_number_after_a_column_named_schema_stays_exact() -> None:
    schema = customers(
        ("schema", DataType(mysql_type=MySQLType.INT)),
        ("big", DataType(mysql_type=MySQLType.DECIMAL, length=30, decimal=5)),
    )
    raw = b'{"payload":{"after":{"id":1,"schema":2,"big":1234567890123456789012345.12345},'
    raw += b'"source":{"db":"inventory","table":"customers"},"op":"c"}}'
    (event,) = decode(raw, schemas=[schema])
    assert str(event.after["big"]) == "1234567890123456789012345.12345"
