"""`cdc_core.serde` in confluent-kafka's own SerializingProducer and DeserializingConsumer, through the real
broker, for every protocol: one instance as key and value (de)serializer, a small changefeed out and back.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from cdc_core.codec import IgnoredOptionsWarning
from cdc_core.errors import DecodeError, EncodeError
from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import DeserializingConsumer, SerializingProducer  # noqa: E402
from confluent_kafka.error import ValueDeserializationError, ValueSerializationError  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError  # noqa: E402

from cdc_core.serde import Deserializer, Serializer  # noqa: E402

SCHEMA = TableSchema(
    database="shop",
    table="items",
    columns=[
        Column(name="id", data_type=parse_type_text("int(11)"), nullable=False),
        Column(name="name", data_type=parse_type_text("varchar(32)")),
        Column(name="qty", data_type=parse_type_text("int(11)")),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    table_id=42,
    version=compose(1_700_000_000_000),
)
PROTOCOLS = {
    "debezium": {"enable-tidb-extension": True},
    "simple": {"send-bootstrap-interval-in-sec": 0, "send-bootstrap-in-msg-count": 0},
    "canal-json": {"enable-tidb-extension": True},
    "avro": {"enable-tidb-extension": True},
}


def _changefeed() -> list[Event]:
    ts = compose(1_700_000_100_000)
    events: list[Event] = [
        DDLEvent(
            ddl_type=DDLType.CREATE,
            sql="CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(32), qty INT)",
            database="shop",
            table="items",
            commit_ts=ts,
            table_schema=SCHEMA,
        )
    ]
    for i in range(1, 6):
        ts += 1 << 18
        events.append(
            RowChange(
                op=Op.INSERT,
                database="shop",
                table="items",
                after={"id": i, "name": f"<n{i}&>", "qty": i},
                commit_ts=ts,
                schema=SCHEMA,
            )
        )
    ts += 1 << 18
    events.append(
        RowChange(
            op=Op.UPDATE,
            database="shop",
            table="items",
            before={"id": 2, "name": "<n2&>", "qty": 2},
            after={"id": 2, "name": "two", "qty": 20},
            commit_ts=ts,
            schema=SCHEMA,
        )
    )
    ts += 1 << 18
    events.append(
        RowChange(
            op=Op.DELETE,
            database="shop",
            table="items",
            before={"id": 3, "name": "<n3&>", "qty": 3},
            commit_ts=ts,
            schema=SCHEMA,
        )
    )
    return events


def _replay(events: list[Event]) -> dict[int, dict[str, Any]]:
    table: dict[int, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, RowChange):
            if event.op is Op.DELETE:
                assert event.before is not None
                table.pop(event.before["id"])
            else:
                assert event.after is not None
                table[event.after["id"]] = {k: event.after[k] for k in ("id", "name", "qty")}
    return table


def _options(protocol: str, registry: ApicurioRegistry) -> dict[str, object]:
    options = dict(PROTOCOLS[protocol])
    if protocol == "avro":
        options["schema-registry"] = registry.url
    return options


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_producer_and_consumer_carry_a_changefeed(
    protocol: str, kafka_bootstrap: str, schema_registry: ApicurioRegistry
) -> None:
    topic = kafka.unique_topic(f"serde-{protocol}")
    kafka.create_topic(kafka_bootstrap, topic)
    serializer = Serializer(protocol, _options(protocol, schema_registry))
    producer = SerializingProducer(
        kafka.producer_config(kafka_bootstrap, **{"key.serializer": serializer, "value.serializer": serializer})
    )
    events = _changefeed()
    if protocol == "avro":
        events = events[1:]  # TiCDC Avro writes no DDL messages by default
    for event in events:
        producer.produce(topic, key=event, value=event)
    assert producer.flush(30) == 0
    plain = confluent_kafka.Producer(kafka.producer_config(kafka_bootstrap))
    plain.produce(topic, value=b"not a message of this protocol")
    assert plain.flush(30) == 0

    with pytest.warns(IgnoredOptionsWarning):  # the same options: encoder-side ones are noted, not refused
        deserializer = Deserializer(protocol, _options(protocol, schema_registry))
    consumer = DeserializingConsumer(
        kafka.consumer_config(kafka_bootstrap, **{"key.deserializer": deserializer, "value.deserializer": deserializer})
    )
    consumer.subscribe([topic])
    decoded: list[Event] = []
    failure: ValueDeserializationError | None = None
    deadline = time.monotonic() + 60
    try:
        while failure is None and time.monotonic() < deadline:
            try:
                record = consumer.poll(0.5)
            except ValueDeserializationError as exc:
                failure = exc
                continue
            if record is not None:
                decoded.extend(record.value())
    finally:
        consumer.close()

    assert _replay(decoded) == {
        1: {"id": 1, "name": "<n1&>", "qty": 1},
        2: {"id": 2, "name": "two", "qty": 20},
        4: {"id": 4, "name": "<n4&>", "qty": 4},
        5: {"id": 5, "name": "<n5&>", "qty": 5},
    }
    assert [e.op for e in decoded if isinstance(e, RowChange)] == [Op.INSERT] * 5 + [Op.UPDATE, Op.DELETE]
    # the bad record: confluent's error, then ours, then the typed decode error with the record's topic
    assert failure is not None
    cause = _serialization_error(failure).__cause__
    assert isinstance(cause, DecodeError) and cause.protocol == protocol and topic in str(cause)


def _serialization_error(error: Any) -> SerializationError:
    for candidate in (getattr(error, "exception", None), error.__cause__, *(error.args or ())):
        if isinstance(candidate, SerializationError):
            return candidate
    raise AssertionError(f"no SerializationError in {error!r}")


def test_several_messages_per_event_are_refused_not_split() -> None:
    serializer = Serializer("simple")  # periodic bootstraps on: a BOOTSTRAP precedes a table's first row
    ctx = SerializationContext("t", MessageField.VALUE)
    with pytest.raises(SerializationError, match="send-bootstrap-interval-in-sec=0") as info:
        serializer(_changefeed()[1], ctx)
    assert isinstance(info.value.__cause__, EncodeError)


def test_key_then_value_of_one_produce_encode_the_event_once(schema_registry: ApicurioRegistry) -> None:
    serializer = Serializer("debezium")
    event = _changefeed()[1]
    ctx = SerializationContext("t", MessageField.KEY)
    key = serializer(event, ctx)
    ctx.field = MessageField.VALUE
    value = serializer(event, ctx)
    assert key == b'{"payload":{"id":1},"schema":' + key.split(b'"schema":', 1)[1] if key else False
    assert value is not None and b'"op":"c"' in value
    assert serializer(None, ctx) is None


def test_avro_tombstone_needs_the_key(kafka_bootstrap: str, schema_registry: ApicurioRegistry) -> None:
    options = _options("avro", schema_registry)
    delete = _changefeed()[-1]
    serializer = Serializer("avro", options)
    ctx = SerializationContext("shop_items", MessageField.KEY)
    key = serializer(delete, ctx)
    ctx.field = MessageField.VALUE
    assert serializer(delete, ctx) is None  # TiCDC's delete is a tombstone
    options = {"schema-registry": schema_registry.url}
    value_only = Deserializer("avro", options)
    with pytest.raises(SerializationError, match=r"key\.deserializer"):
        value_only(None, SerializationContext("shop_items", MessageField.VALUE))
    both = Deserializer("avro", options)
    ctx = SerializationContext("shop_items", MessageField.KEY)
    assert both(key, ctx) == key
    ctx.field = MessageField.VALUE
    (event,) = both(None, ctx)
    assert isinstance(event, RowChange) and event.op is Op.DELETE and event.before == {"id": 3}


def test_a_producer_error_keeps_the_typed_cause(kafka_bootstrap: str) -> None:
    serializer = Serializer("debezium")  # no TiDB extension: TiCDC writes no watermark
    producer = SerializingProducer(kafka.producer_config(kafka_bootstrap, **{"value.serializer": serializer}))
    from cdc_core.events import Watermark

    with pytest.raises(ValueSerializationError) as info:
        producer.produce("unused", value=Watermark(ts=1 << 18))
    assert isinstance(_serialization_error(info.value).__cause__, EncodeError)
    producer.flush(5)
