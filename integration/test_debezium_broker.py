"""Debezium through a real Apache Kafka broker with confluent-kafka's SerializingProducer and
DeserializingConsumer and this package's serializers: produce a changefeed (tombstones after deletes, as real
Debezium does), consume, decode, replay into a table keyed by the primary key, compare with the source state."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka

confluent_kafka = pytest.importorskip("confluent_kafka")

PARTITIONS = 3


def _col(name: str, type_text: str) -> Column:
    return Column(name=name, data_type=parse_type_text(type_text), nullable=name != "id")


SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=[
        _col("id", "bigint(20) unsigned"),
        _col("sku", "varchar(32)"),
        _col("qty", "int(10) unsigned"),
        _col("price", "decimal(10,2)"),
        _col("placed", "timestamp(3)"),
        _col("state", "enum('new','paid','shipped')"),
        _col("tags", "set('gift','rush')"),
        _col("blob", "varbinary(16)"),
        _col("wait", "time(6)"),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)


def _row(i: int, qty: int, state: str) -> dict[str, Any]:
    return {
        "id": 2**63 + i,  # BIGINT UNSIGNED above the signed range: two's complement on the wire
        "sku": f"SKU-{i:04d}<&>ü",
        "qty": qty,
        "price": Decimal(f"{i}.{i % 100:02d}"),
        "placed": dt.datetime(2024, 5, 1, 8, 0, 0, 125000, tzinfo=dt.UTC) + dt.timedelta(minutes=i),
        "state": state,
        "tags": ("gift",) if i % 2 else ("gift", "rush"),
        "blob": bytes([i % 256, 0, 255]),
        "wait": dt.timedelta(hours=-i, microseconds=i),
    }


def _source_stream() -> tuple[list[Any], dict[int, dict[str, Any]]]:
    ts = compose(1_714_550_000_000)
    events: list[Any] = [
        DDLEvent(
            ddl_type=DDLType.CREATE, sql="create table orders (...)", database="shop", table="orders", commit_ts=ts
        ),
    ]
    state: dict[int, dict[str, Any]] = {}
    for i in range(1, 31):
        ts += 1 << 18
        state[i] = _row(i, i * 3, "new")
        events.append(
            RowChange(op=Op.INSERT, database="shop", table="orders", after=state[i], commit_ts=ts, schema=SCHEMA)
        )
    events.append(Watermark(ts=ts))
    for i in range(1, 31, 3):
        ts += 1 << 18
        after = {**state[i], "state": "paid", "qty": 4294967295}
        events.append(
            RowChange(
                op=Op.UPDATE, database="shop", table="orders", before=state[i], after=after, commit_ts=ts, schema=SCHEMA
            )
        )
        state[i] = after
    for i in range(2, 31, 5):
        ts += 1 << 18
        events.append(
            RowChange(op=Op.DELETE, database="shop", table="orders", before=state.pop(i), commit_ts=ts, schema=SCHEMA)
        )
    return events, state


def test_serializers_through_the_broker_rebuild_the_table(kafka_bootstrap: str) -> None:
    from confluent_kafka import DeserializingConsumer, SerializingProducer, TopicPartition

    from cdc_core.serde import Deserializer, Serializer

    broker = kafka_bootstrap
    topic = kafka.unique_topic("dbz-orders")
    kafka.create_topic(broker, topic, PARTITIONS)

    options = {"enable-tidb-extension": True}
    producer = SerializingProducer(
        {
            "bootstrap.servers": broker,
            "key.serializer": Serializer("debezium", options),
            "value.serializer": Serializer("debezium", options),
        }
    )
    events, expected_state = _source_stream()
    sent = 0
    for event in events:
        if isinstance(event, RowChange):
            producer.produce(topic, key=event, value=event)  # default partitioner: by key bytes
            sent += 1
            if event.op is Op.DELETE:
                producer.produce(topic, key=event, value=None)  # Debezium's tombstone
                sent += 1
        else:
            for partition in range(PARTITIONS):  # DDL and watermarks go to every partition
                producer.produce(topic, key=event, value=event, partition=partition)
                sent += 1
    assert producer.flush(20) == 0

    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": broker,
            "group.id": f"dbz-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "value.deserializer": Deserializer("debezium"),
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    records: list[tuple[int, int, list[Any]]] = []
    deadline = time.monotonic() + 60
    while len(records) < sent and time.monotonic() < deadline:
        record = consumer.poll(0.5)
        if record is None or record.error() is not None:
            continue
        records.append((record.partition(), record.offset(), record.value()))
    consumer.close()
    assert len(records) == sent

    decoded = [e for _, _, events_ in sorted(records, key=lambda r: (r[0], r[1])) for e in events_]
    assert sum(1 for _, _, events_ in records if events_ == []) == 6  # the six tombstones decode to nothing
    assert [e.ddl_type for e in decoded if isinstance(e, DDLEvent)] == [DDLType.CREATE] * PARTITIONS
    assert sorted(e.ts for e in decoded if isinstance(e, Watermark)) == [events[31].ts] * PARTITIONS

    table: dict[int, dict[str, Any]] = {}
    for row in sorted((e for e in decoded if isinstance(e, RowChange)), key=lambda r: r.commit_ts or 0):
        if row.before is not None:
            del table[row.before["id"]]
        if row.after is not None:
            table[row.after["id"]] = row.after
    expected = {r["id"]: {**r, "price": Decimal(repr(float(r["price"])))} for r in expected_state.values()}
    assert table == expected
