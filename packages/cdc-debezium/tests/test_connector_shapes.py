"""What the Debezium PostgreSQL and MySQL/MariaDB connectors write that TiCDC never does.

Messages are built after the connectors' documentation (data type mappings, _message_ and _delete_ events,
``column.propagate.source.type``) and Kafka Connect's JsonConverter (``decimal.format`` NUMERIC and BASE64,
maps with string keys as objects); the expected values are worked out by hand from them.
"""

from __future__ import annotations

import base64
import datetime as dt
import struct
from decimal import Decimal
from typing import Any

import orjson
import pytest

from cdc_core import canonical
from cdc_core.codec import Options
from cdc_core.errors import DecodeError, EncodeError
from cdc_core.events import LogicalMessage, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.types import DataType, LogicalType, MySQLType
from cdc_core.values import Geometry
from cdc_debezium import OPTIONS, DebeziumDecoder

PG_SOURCE = {
    "version": "3.1.2.Final",
    "connector": "postgresql",
    "name": "pg",
    "ts_ms": 1559033904863,
    "snapshot": "false",
    "db": "postgres",
    "sequence": '["24023128","24023128"]',
    "schema": "public",
    "table": "things",
    "txId": 556,
    "lsn": 46523128,
    "xmin": None,
}
ID = {"type": "int32", "optional": False, "field": "id"}


def decoder(**options: object) -> DebeziumDecoder:
    return DebeziumDecoder(Options([s for s in OPTIONS if s.for_decoder], options, protocol="debezium"))


def decode(doc: Any, key: Any = None, **options: object) -> list[Any]:
    value = doc if isinstance(doc, bytes) else orjson.dumps(doc)
    raw_key = None if key is None else orjson.dumps(key)
    return decoder(**options).decode(Message(value=value, key=raw_key, topic="pg.public.things", partition=0, offset=8))


def envelope(fields: list[dict[str, Any]], payload: dict[str, Any]) -> dict[str, Any]:
    value = {"type": "struct", "optional": True, "name": "pg.public.things.Value", "fields": fields}
    return {
        "schema": {
            "type": "struct",
            "name": "pg.public.things.Envelope",
            "optional": False,
            "fields": [{**value, "field": "before"}, {**value, "field": "after"}],
        },
        "payload": payload,
    }


def insert(fields: list[dict[str, Any]], after: dict[str, Any]) -> dict[str, Any]:
    return envelope([ID, *fields], {"before": None, "after": {"id": 1, **after}, "source": PG_SOURCE, "op": "c"})


def field(kind: str, column: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": kind, "optional": True}
    if name is not None:
        entry.update(name=name, version=1)
    return {**entry, **extra, "field": column}


def one(fields: list[dict[str, Any]], after: dict[str, Any], **options: object) -> RowChange:
    (event,) = decode(insert(fields, after), **options)
    assert isinstance(event, RowChange)
    return event


# -------------------------------------------------------------------------------------- which database


def test_the_schema_that_holds_a_table_is_its_database_and_the_catalog_is_kept() -> None:
    # two tables of one name in two schemas of one PostgreSQL database are two tables, as Debezium's topics say
    events = []
    for schema in ("inventory", "public"):
        doc = insert([], {})
        doc["payload"]["source"] = {**PG_SOURCE, "schema": schema}
        events.extend(decode(doc))
    assert [(e.database, e.table) for e in events] == [("inventory", "things"), ("public", "things")]
    assert [e.meta["catalog"] for e in events] == ["postgres", "postgres"]
    assert events[0].schema is not None and events[0].schema.database == "inventory"
    doc = insert([], {})
    doc["payload"]["source"] = {**PG_SOURCE, "schema": ""}  # no schema named: db holds the table, as MySQL's
    (event,) = decode(doc)
    assert event.database == "postgres" and "catalog" not in event.meta


# ------------------------------------------------------------------------------------- decimal numbers

CONNECT_DECIMAL = "org.apache.kafka.connect.data.Decimal"


def decimal_field(column: str, precision: int, scale: int) -> dict[str, Any]:
    parameters = {"scale": str(scale), "connect.decimal.precision": str(precision)}
    return field("bytes", column, CONNECT_DECIMAL, parameters=parameters)


def test_numeric_decimal_format_keeps_every_digit() -> None:
    """JsonConverter ``decimal.format=NUMERIC``: the JSON number's text, never a float's."""
    raw = orjson.dumps(insert([decimal_field("amount", 30, 12)], {"amount": "@"}))
    raw = raw.replace(b'"@"', b"123456789012345678.123456789012")
    (event,) = decode(raw)
    assert str(event.after["amount"]) == "123456789012345678.123456789012"
    assert event.schema.column("amount").data_type == DataType(mysql_type=MySQLType.DECIMAL, length=30, decimal=12)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (b"12.34", "12.3400"),  # NUMERIC, fewer digits than the scale: padded
        (b"7", "7.0000"),  # NUMERIC integral value
        (b"0.1", "0.1000"),  # a float would be 0.1000000000000000055...
        (b"1E-4", "0.0001"),  # BigDecimal.toString exponent form
        (b'"AeII"', "12.3400"),  # BASE64: unscaled 123400 big-endian
    ],
)
def test_connect_decimal_numeric_and_base64_read_at_the_column_scale(wire: bytes, expected: str) -> None:
    raw = orjson.dumps(insert([decimal_field("price", 10, 4)], {"price": "@"})).replace(b'"@"', wire)
    (event,) = decode(raw)
    assert str(event.after["price"]) == expected


@pytest.mark.parametrize(
    ("kind", "mode", "wire", "expected"),
    [
        ("double", "double", 12.34, "12.3400"),  # decimal.handling.mode=double
        ("double", "double", 0.30000000000000004, "0.3000"),  # a double only approximates the column's value
        ("string", "string", "12.34", "12.3400"),  # decimal.handling.mode=string
        ("string", "string", "-5", "-5.0000"),
    ],
)
def test_decimal_modes_are_brought_to_the_declared_scale(kind: str, mode: str, wire: Any, expected: str) -> None:
    """The declared scale comes from column.propagate.source.type; the digits from the wire."""
    parameters = {
        "__debezium.source.column.type": "DECIMAL",
        "__debezium.source.column.length": "10",
        "__debezium.source.column.scale": "4",
        "__debezium.source.column.name": "price",
    }
    event = one([field(kind, "price", parameters=parameters)], {"price": wire}, **{"decimal.handling.mode": mode})
    assert str(event.after["price"]) == expected
    assert event.schema.column("price").data_type == DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4)


def test_variable_scale_decimal_keeps_each_values_scale() -> None:
    vsd = field("struct", "n", "io.debezium.data.VariableScaleDecimal")
    value = {"scale": 3, "value": base64.b64encode((-123456).to_bytes(3, "big", signed=True)).decode()}
    event = one([vsd], {"n": value})
    assert str(event.after["n"]) == "-123.456"
    assert event.schema.column("n").data_type.mysql_type is MySQLType.DECIMAL


# ------------------------------------------------------------------------------------- source types


def test_propagated_source_types_keep_unsigned_and_lengths() -> None:
    def src(type_name: str, **more: str) -> dict[str, Any]:
        return {"parameters": {"__debezium.source.column.type": type_name, **more}}

    fields = [
        field("int64", "big", **src("BIGINT UNSIGNED", **{"__debezium.source.column.length": "20"})),
        field("string", "code", **src("VARCHAR", **{"__debezium.source.column.length": "16"})),
        field("int64", "at", "io.debezium.time.MicroTimestamp", **src("DATETIME", **{"__debezium.source.column.length": "6"})),  # noqa: E501
        field("string", "ip", **src("INET")),  # a PostgreSQL type this library does not know: the wire decides
    ]  # fmt: skip
    event = one(fields, {"big": -1, "code": "abc", "at": 1_000_001, "ip": "10.0.0.1/32"})
    assert event.after["big"] == 18446744073709551615
    schema = event.schema
    assert schema.column("big").data_type == DataType(mysql_type=MySQLType.BIGINT, length=20, unsigned=True)
    assert schema.column("code").data_type == DataType(mysql_type=MySQLType.VARCHAR, length=16)
    assert schema.column("at").data_type == DataType(mysql_type=MySQLType.DATETIME, decimal=6)
    assert schema.column("ip").data_type == DataType(mysql_type=MySQLType.VARCHAR)
    assert event.after["ip"] == "10.0.0.1/32"


def test_bigint_unsigned_precise_mode_is_an_integer() -> None:
    parameters = {"scale": "0", "connect.decimal.precision": "20", "__debezium.source.column.type": "BIGINT UNSIGNED"}
    event = one([field("bytes", "big", CONNECT_DECIMAL, parameters=parameters)], {"big": "AP//////////"})
    assert event.after["big"] == 18446744073709551615 and type(event.after["big"]) is int


def test_source_column_name_names_the_column() -> None:
    """``field.name.adjustment.mode=avro`` rewrote ``order-no`` to ``order_no``; the source name is kept."""
    parameters = {"__debezium.source.column.type": "INT", "__debezium.source.column.name": "order-no"}
    event = one([field("int32", "order_no", parameters=parameters)], {"order_no": 5})
    assert event.after == {"id": 1, "order-no": 5}
    assert [c.name for c in event.schema.columns] == ["id", "order-no"]


# ------------------------------------------------------------------------------------- logical types


@pytest.mark.parametrize(
    ("kind", "name", "wire", "expected", "mysql_type"),
    [
        ("string", "io.debezium.time.ZonedTime", "12:34:56.789Z", dt.timedelta(hours=12, minutes=34, seconds=56, microseconds=789000), MySQLType.TIME),  # noqa: E501
        ("string", "io.debezium.time.ZonedTime", "01:00:00+02:00", dt.timedelta(hours=23), MySQLType.TIME),
        ("string", "io.debezium.time.IsoDate", "2017-09-15Z", dt.date(2017, 9, 15), MySQLType.DATE),
        ("string", "io.debezium.time.IsoTime", "04:05:11.789Z", dt.timedelta(hours=4, minutes=5, seconds=11, microseconds=789000), MySQLType.TIME),  # noqa: E501
        ("string", "io.debezium.time.IsoTimestamp", "2019-07-09T02:28:57.123456Z", dt.datetime(2019, 7, 9, 2, 28, 57, 123456), MySQLType.DATETIME),  # noqa: E501
        ("int64", "io.debezium.time.MicroDuration", 93_784_000_005, dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=5), MySQLType.TIME),  # noqa: E501
        ("string", "io.debezium.time.Interval", "P1Y2M3DT4H5M6.78S", "P1Y2M3DT4H5M6.78S", MySQLType.VARCHAR),
        ("int64", "io.debezium.time.NanoTime", 3_723_000_000_999, dt.timedelta(hours=1, minutes=2, seconds=3), MySQLType.TIME),  # noqa: E501
        ("int64", "io.debezium.time.NanoTimestamp", 1_500_000_999, dt.datetime(1970, 1, 1, 0, 0, 1, 500000), MySQLType.DATETIME),  # noqa: E501
        ("int64", "io.debezium.time.MicroTime", 1_000_001, dt.timedelta(seconds=1, microseconds=1), MySQLType.TIME),
        ("int64", "io.debezium.time.MicroTimestamp", -1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999), MySQLType.DATETIME),  # noqa: E501
        ("string", "io.debezium.data.Uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", MySQLType.CHAR),  # noqa: E501
        ("string", "io.debezium.data.Xml", "<a>b</a>", "<a>b</a>", MySQLType.LONGTEXT),
        ("string", "io.debezium.data.Ltree", "Top.Science.Astronomy", "Top.Science.Astronomy", MySQLType.TEXT),
        ("string", "io.debezium.data.Json", '{"k": [1, null]}', {"k": [1, None]}, MySQLType.JSON),
        ("string", "io.debezium.data.Enum", "sad", "sad", MySQLType.ENUM),
        ("bytes", "io.debezium.data.Bits", "BQ==", 5, MySQLType.BIT),
        ("string", None, "08:00:2b:01:02:03", "08:00:2b:01:02:03", MySQLType.VARCHAR),  # macaddr
    ],
)  # fmt: skip
def test_logical_types(kind: str, name: str | None, wire: Any, expected: Any, mysql_type: MySQLType) -> None:
    parameters = {"length": "3"} if name == "io.debezium.data.Bits" else {"allowed": "sad,ok,happy"}
    event = one([field(kind, "v", name, parameters=parameters)], {"v": wire})
    assert event.after["v"] == expected and type(event.after["v"]) is type(expected)
    assert event.schema.column("v").data_type.mysql_type is mysql_type


POINT_WKB = b"\x01" + struct.pack("<Idd", 1, 1.5, -2.0)
POINT = "io.debezium.data.geometry.Point"
GEOMETRY = "io.debezium.data.geometry.Geometry"
GEOGRAPHY = "io.debezium.data.geometry.Geography"
GEOMETRY_FIELDS = [{"type": "bytes", "optional": False, "field": "wkb"}, {"type": "int32", "optional": True, "field": "srid"}]  # fmt: skip  # noqa: E501


def test_spatial_structs() -> None:
    wkb = base64.b64encode(POINT_WKB).decode()
    fields = [
        field("struct", "p", POINT, fields=[{"type": "double", "field": "x"}, {"type": "double", "field": "y"},
                                           *GEOMETRY_FIELDS]),
        field("struct", "p_no_wkb", POINT, fields=[{"type": "double", "field": "x"}, {"type": "double", "field": "y"}]),
        field("struct", "g", GEOMETRY, fields=GEOMETRY_FIELDS),
        field("struct", "geo", GEOGRAPHY, fields=GEOMETRY_FIELDS),
    ]  # fmt: skip
    after = {
        "p": {"x": 1.5, "y": -2.0, "wkb": wkb, "srid": None},
        "p_no_wkb": {"x": 1.5, "y": -2.0},
        "g": {"wkb": wkb, "srid": 3187},
        "geo": {"wkb": wkb, "srid": 4326},
    }
    event = one(fields, after)
    assert event.after["p"] == event.after["p_no_wkb"] == Geometry(wkb=POINT_WKB, srid=None)
    assert event.after["g"] == Geometry(wkb=POINT_WKB, srid=3187)
    assert event.after["geo"] == Geometry(wkb=POINT_WKB, srid=4326)
    assert event.schema.column("p").data_type.mysql_type is MySQLType.POINT
    assert event.schema.column("g").data_type.logical is LogicalType.GEOMETRY
    assert canonical.loads(canonical.dumps(event)) == event


def test_arrays_convert_each_element() -> None:
    fields = [
        field("array", "ints", items={"type": "int32", "optional": True}),
        field("array", "days", items={"type": "int32", "optional": True, "name": "io.debezium.time.Date", "version": 1}),  # noqa: E501
        field("array", "prices", items={"type": "bytes", "optional": True, "name": CONNECT_DECIMAL,
                                        "parameters": {"scale": "2"}}),
        field("array", "tags", items={"type": "string", "optional": True}),
        field("array", "vec", "io.debezium.data.DoubleVector", items={"type": "double", "optional": False}),
        field("array", "half", "io.debezium.data.FloatVector", items={"type": "float", "optional": False}),
    ]  # fmt: skip
    event = one(
        fields,
        {
            "ints": [1, None, -3],
            "days": [0, 1],
            "prices": ["AQ==", "/w=="],
            "tags": [],
            "vec": [0.5, 2.0],
            "half": [9.9],
        },
    )
    assert event.after["ints"] == [1, None, -3]
    assert event.after["days"] == [dt.date(1970, 1, 1), dt.date(1970, 1, 2)]
    assert event.after["prices"] == [Decimal("0.01"), Decimal("-0.01")]
    assert event.after["tags"] == [] and event.after["vec"] == [0.5, 2.0] and event.after["half"] == [9.9]
    days = event.schema.column("days").data_type
    assert days == DataType(mysql_type=MySQLType.ARRAY, item=DataType(mysql_type=MySQLType.DATE))
    assert days.type_text() == "array<date>"
    assert canonical.loads(canonical.dumps(event)) == event


def test_hstore_both_modes_and_unknown_structs_are_documents() -> None:
    fields = [
        field("map", "h_map", keys={"type": "string", "optional": False}, values={"type": "string", "optional": True}),
        field("string", "h_json", "io.debezium.data.Json"),
        field("struct", "circle", "io.debezium.data.geometry.Circle",
              fields=[{"type": "struct", "field": "center"}, {"type": "double", "field": "radius"}]),
    ]  # fmt: skip
    after = {
        "h_map": {"a": "1", "b": None},
        "h_json": '{"a":"1","b":null}',
        "circle": {"center": {"x": 0.0, "y": 1.0}, "radius": 2.5},
    }
    event = one(fields, after)
    assert event.after["h_map"] == event.after["h_json"] == {"a": "1", "b": None}
    assert event.after["circle"] == {"center": {"x": 0.0, "y": 1.0}, "radius": 2.5}
    assert {event.schema.column(c).data_type.mysql_type for c in ("h_map", "h_json", "circle")} == {MySQLType.JSON}


def test_struct_field_with_a_bad_value_names_the_column_only() -> None:
    doc = insert([field("struct", "g", GEOMETRY, fields=GEOMETRY_FIELDS)], {"g": {"wkb": "!!", "srid": 1}})
    with pytest.raises(DecodeError) as info:
        decode(doc)
    assert info.value.field == "payload.after.g"


# ------------------------------------------------------------------------------------ logical messages

MESSAGE_PAYLOAD = {
    "source": {**PG_SOURCE, "schema": "", "table": ""},
    "op": "m",
    "ts_ms": 1559033904961,
    "message": {"prefix": "foo", "content": "Zm9vIGJhcg=="},
}


def test_logical_decoding_message_is_not_a_watermark() -> None:
    (event,) = decode({"payload": MESSAGE_PAYLOAD}, {"payload": {"prefix": "foo"}})
    assert isinstance(event, LogicalMessage) and not isinstance(event, Watermark)
    assert event == LogicalMessage(prefix="foo", content=b"foo bar", database="postgres", transactional=True)
    assert event.meta["lsn"] == 46523128 and event.meta["txId"] == 556
    line = canonical.dumps(event)
    assert '"kind":"message"' in line and '"content":{"$bytes":"Zm9vIGJhcg=="}' in line
    assert canonical.loads(line) == event


def test_non_transactional_message_and_hex_content() -> None:
    source = {k: v for k, v in MESSAGE_PAYLOAD["source"].items() if k != "txId"}  # type: ignore[union-attr]
    payload = {**MESSAGE_PAYLOAD, "source": source, "message": {"prefix": "p", "content": "62610a"}}
    (event,) = decode({"payload": payload}, **{"binary.handling.mode": "hex"})
    assert (event.content, event.transactional) == (b"ba\n", False)


def test_message_content_typed_bytes_by_the_schema() -> None:
    block = {"type": "struct", "field": "message", "name": "io.debezium.connector.postgresql.Message",
             "fields": [{"type": "string", "field": "prefix"}, {"type": "bytes", "field": "content"}]}  # fmt: skip
    schema = {"type": "struct", "name": "io.debezium.connector.postgresql.MessageValue", "fields": [block]}
    (event,) = decode({"schema": schema, "payload": MESSAGE_PAYLOAD}, **{"binary.handling.mode": "hex"})
    assert event.content == b"foo bar"


def test_a_ticdc_watermark_is_still_a_watermark() -> None:
    (event,) = decode({"payload": {"op": "m", "source": {"commit_ts": 42}}})
    assert event == Watermark(ts=42)


def test_logical_messages_have_no_form_in_ticdc_protocols() -> None:
    (event,) = decode({"payload": MESSAGE_PAYLOAD})
    for protocol in ("debezium", "canal-json", "simple"):
        with pytest.raises(EncodeError, match="logical-decoding message"):
            get_codec(protocol).encoder().encode(event)


# ------------------------------------------------------------------------------------- deletes by key

KEY = {
    "schema": {"type": "struct", "name": "pg.public.things.Key", "fields": [ID]},
    "payload": {"id": 7},
}


def test_delete_without_before_is_built_from_the_key() -> None:
    fields = [field("string", "name")]
    doc = envelope([ID, *fields], {"before": None, "after": None, "source": PG_SOURCE, "op": "d"})
    (event,) = decode(doc, KEY)
    assert event.op is Op.DELETE and event.before == {"id": 7} and event.handle_key_only
    assert event.schema.primary_key == ("id",)


def test_delete_without_before_or_key_is_a_typed_error() -> None:
    doc = envelope([ID], {"before": None, "after": None, "source": PG_SOURCE, "op": "d"})
    with pytest.raises(DecodeError) as info:
        decode(doc)
    assert info.value.field == "payload.before" and "no key" in info.value.reason
