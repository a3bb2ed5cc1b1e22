"""cdc_core.serde with the Debezium codec, and the registry entry."""

from __future__ import annotations

import orjson
from confluent_kafka.serialization import MessageField, SerializationContext

from cdc_core.events import Op, RowChange
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.serde import Deserializer, Serializer
from cdc_core.types import DataType, MySQLType

SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.BIGINT, unsigned=True), nullable=False),
        Column(name="note", data_type=DataType(mysql_type=MySQLType.VARCHAR, length=20)),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
EVENT = RowChange(
    op=Op.INSERT,
    database="shop",
    table="orders",
    after={"id": 2**64 - 1, "note": "ü"},
    commit_ts=5 << 18,
    schema=SCHEMA,
)


def test_registered_as_debezium() -> None:
    codec = get_codec("debezium")
    assert codec.package == "cdc-debezium" and codec.name == "debezium"


def test_serializers_round_trip_through_the_deserializer() -> None:
    options = {"enable-tidb-extension": True}
    ctx = SerializationContext("orders", MessageField.VALUE)
    key = Serializer("debezium", options)(EVENT, SerializationContext("orders", MessageField.KEY))
    value = Serializer("debezium", options)(EVENT, ctx)
    assert key is not None and orjson.loads(key)["payload"] == {"id": -1}
    assert value is not None and orjson.loads(value)["payload"]["after"] == {"id": -1, "note": "ü"}
    (event,) = Deserializer("debezium")(value, ctx)
    assert event == RowChange(
        op=Op.INSERT, database="shop", table="orders", after={"id": 2**64 - 1, "note": "ü"}, commit_ts=5 << 18
    )
    assert Deserializer("debezium")(None, ctx) == []  # a tombstone carries nothing
    assert Serializer("debezium", options)(None, ctx) is None
