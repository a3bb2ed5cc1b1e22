"""TiCDC Avro through a real Apache Kafka broker and a real Schema Registry (Apicurio, Confluent-compatible API).

A changefeed of inserts, updates and deletes (tombstones), with an ADD COLUMN in the middle, is produced with
confluent-kafka's SerializingProducer and cdc_core.serde's serializers to three partitions (index-value
dispatch, a topic with dots), consumed back, decoded with nothing but the registry URL, and replayed into a
table keyed by the primary key, which must equal the source state.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import attrs
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from cdc_avro import CODEC
from cdc_core.events import Op, RowChange
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.serde import Serializer
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry

confluent_kafka = pytest.importorskip("confluent_kafka")

PARTITIONS = 3


def _col(name: str, type_text: str) -> Column:
    return Column(name=name, data_type=parse_type_text(type_text), nullable=name != "id")


V1 = TableSchema(
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
        _col("flags", "bit(10)"),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    version=1,
)
V2 = attrs.evolve(V1, columns=[*V1.columns, _col("note", "text")], version=2)
ZONE = dt.timezone(dt.timedelta(hours=8))


def _row(i: int, qty: int, state: str, schema: TableSchema) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": 2**63 + i,  # BIGINT UNSIGNED above the signed range: two's complement on the wire
        "sku": f"SKU-{i:04d}<&>ü",
        "qty": qty,
        "price": Decimal(qty * 3 + i) / 100,
        "placed": dt.datetime(2024, 5, 1, 12, 0, 0, (i % 1000) * 1000, tzinfo=ZONE),
        "state": state,
        "tags": ("gift",) if i % 2 else ("gift", "rush"),
        "blob": bytes([i % 256, 0, 255]),
        "wait": dt.timedelta(hours=-i, microseconds=i),
        "flags": i % 1024,
    }
    if "note" in schema.column_names:
        row["note"] = None if i % 3 else f"note {i}"
    return row


def _changefeed() -> tuple[list[RowChange], dict[int, dict[str, Any]]]:
    rng = random.Random(5)
    state: dict[int, dict[str, Any]] = {}
    events: list[RowChange] = []
    ts = compose(1_714_560_000_000)
    for step in range(120):
        schema = V1 if step < 60 else V2  # ALTER TABLE ADD COLUMN note in the middle of the stream
        ts += 1 << 18
        i = rng.randrange(40)
        key = 2**63 + i
        if key in state and rng.random() < 0.3:
            events.append(
                RowChange(
                    op=Op.DELETE, database="shop", table="orders", before=state.pop(key), commit_ts=ts, schema=schema
                )
            )
            continue
        op = Op.UPDATE if key in state else Op.INSERT
        row = _row(i, rng.randrange(1, 500), rng.choice(["new", "paid", "shipped"]), schema)
        state[key] = row
        events.append(RowChange(op=op, database="shop", table="orders", after=row, commit_ts=ts, schema=schema))
    return events, state


def test_changefeed_through_broker_and_registry(kafka_bootstrap: str, schema_registry: ApicurioRegistry) -> None:
    prefix = kafka.unique_topic("avro")
    topic = f"{prefix}.shop.orders"
    kafka.create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    options = {
        "schema-registry": schema_registry.url,
        "enable-tidb-extension": "true",
        "time-zone": "+08:00",
        "topic": prefix + ".{schema}.{table}",
        "partition-num": str(PARTITIONS),
        "partition": "index-value",
    }
    encoder = CODEC.encoder(options)
    producer = confluent_kafka.SerializingProducer(
        kafka.producer_config(
            kafka_bootstrap,
            **{"key.serializer": Serializer("avro", options), "value.serializer": Serializer("avro", options)},
        )
    )
    events, state = _changefeed()
    for event in events:
        (placed,) = encoder.encode(event)  # the partition TiCDC would choose
        assert placed.topic == topic
        producer.produce(topic, key=event, value=event, partition=placed.partition)
    assert producer.flush(30) == 0
    subject = prefix.replace(".", "_") + "_shop_orders"
    client = SchemaRegistryClient({"url": schema_registry.url})
    assert sorted(client.get_subjects()) == [f"{subject}-key", f"{subject}-value"]
    assert client.get_versions(f"{subject}-value") == [1, 2]  # re-registered after the ADD COLUMN
    assert client.get_versions(f"{subject}-key") == [1]

    received = kafka.consume(kafka_bootstrap, topic, len(events))
    assert len(received) == len(events)
    assert {m.partition for m in received} == set(range(PARTITIONS))
    decoder = CODEC.decoder({"schema-registry": schema_registry.url, "time-zone": "+08:00"})
    table: dict[int, dict[str, Any]] = {}
    ordered = sorted(received, key=lambda m: (m.partition, m.offset))
    by_partition: dict[int, list[RowChange]] = {}
    for message in ordered:
        for decoded in decoder.decode(message):
            assert isinstance(decoded, RowChange)
            by_partition.setdefault(message.partition or 0, []).append(decoded)
    # one key's changes all land in one partition, in order: replay each partition
    for changes in by_partition.values():
        for change in changes:
            if change.op is Op.DELETE:
                assert change.before is not None and change.commit_ts is None
                table.pop(change.before["id"])
            else:
                assert change.after is not None and change.commit_ts is not None
                table[change.after["id"]] = change.after
    assert table == state
