"""Simple (JSON and Avro) through a real Kafka-protocol broker: several tables on several partitions, a schema
change mid-stream, consumed from the middle of every partition; every row after that point comes back exactly."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

import attrs
import pytest

from cdc_core.canonical import to_canonical
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka

PARTITIONS = 3


def _col(name: str, type_text: str) -> Column:
    return Column(name=name, data_type=parse_type_text(type_text), nullable=name != "id")


def _table(name: str, version: int, *columns: Column) -> TableSchema:
    return TableSchema(
        database="shop",
        table=name,
        columns=[_col("id", "bigint(20)"), *columns],
        indexes=[Index(name="primary", columns=["id"], unique=True, primary=True)],
        table_id=hash(name) % 1000 + 100,
        version=version,
    )


ORDERS = _table("orders", compose(1_714_000_000_000), _col("sku", "varchar(32)"), _col("qty", "int(10) unsigned"))
ORDERS_V2 = attrs.evolve(ORDERS, version=compose(1_714_000_500_000), columns=[*ORDERS.columns, _col("note", "text")])
USERS = _table(
    "payments",
    compose(1_714_000_000_001),
    _col("name", "varchar(64)"),
    _col("joined", "timestamp(3)"),
    _col("tier", "enum('free','pro')"),
)
ITEMS = _table(
    "customers",
    compose(1_714_000_000_002),
    _col("price", "decimal(10,2)"),
    _col("tags", "set('a','b','c')"),
    _col("raw", "varbinary(8)"),
    _col("flags", "bit(10)"),
)


def _values(schema: TableSchema, i: int) -> dict[str, Any]:
    row: dict[str, Any] = {"id": i}
    for column in schema.columns[1:]:
        row[column.name] = {
            "sku": f"SKU-{i}<&>",
            "qty": 4_294_967_295 - i,
            "note": f"note {i}" if i % 3 else None,
            "name": f"user-{i} é",
            "joined": dt.datetime(2024, 5, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=i, milliseconds=125),
            "tier": ("free", "pro")[i % 2],
            "price": Decimal(f"{i}.{i % 100:02d}"),
            "tags": (("a",), ("b", "c"), ())[i % 3],
            "raw": bytes([i % 256, 0, 255]),
            "flags": i % 1024,
        }[column.name]
    return row


def _workload() -> list[Event]:
    events: list[Event] = []
    ts = compose(1_714_000_600_000)
    live: dict[str, dict[int, dict[str, Any]]] = {"orders": {}, "payments": {}, "customers": {}}
    schemas = {"orders": ORDERS, "payments": USERS, "customers": ITEMS}

    def row(op: Op, table: str, i: int) -> None:
        nonlocal ts
        schema = schemas[table]
        before = live[table].get(i) if op is not Op.INSERT else None
        after = {**_values(schema, i), "id": i} if op is not Op.DELETE else None
        if op is Op.UPDATE and after is not None and "name" in after:
            after = {**after, "name": f"renamed-{i}"}
        events.append(
            RowChange(
                op=op,
                database="shop",
                table=table,
                before=before,
                after=after,
                commit_ts=ts,
                table_id=schema.table_id,
                schema_version=schema.version,
                schema=schema,
            )
        )
        if after is None:
            live[table].pop(i, None)
        else:
            live[table][i] = after
        ts += 1 << 18

    for i in range(1, 61):
        for table in ("orders", "payments", "customers"):
            row(Op.INSERT, table, i)
        if i % 10 == 0:
            events.append(Watermark(ts=ts))
        if i == 30:
            schemas["orders"] = ORDERS_V2
            events.append(
                DDLEvent(
                    ddl_type=DDLType.ALTER,
                    sql="ALTER TABLE orders ADD COLUMN note TEXT",
                    database="shop",
                    table="orders",
                    commit_ts=ts,
                    table_schema=ORDERS_V2,
                    pre_table_schema=ORDERS,
                )
            )
            ts += 1 << 18
    for i in range(1, 61, 4):
        row(Op.UPDATE, "payments", i)
        row(Op.DELETE, "customers", i)
    events += [Bootstrap(table_schema=s) for s in schemas.values()]  # TiCDC's periodic bootstrap, made explicit
    events.append(Watermark(ts=ts))
    return events


def _consume_from(bootstrap: str, topic: str, starts: dict[int, int], count: int) -> list[Message]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(kafka.consumer_config(bootstrap))
    consumer.assign([TopicPartition(topic, p, offset) for p, offset in starts.items()])
    received: list[Message] = []
    deadline = time.monotonic() + 60
    try:
        while len(received) < count and time.monotonic() < deadline:
            record = consumer.poll(0.5)
            if record is None or record.error():
                continue
            received.append(
                Message(
                    value=record.value(),
                    key=record.key(),
                    topic=topic,
                    partition=record.partition(),
                    offset=record.offset(),
                )
            )
    finally:
        consumer.close()
    return received


def _utc(image: dict[str, Any] | None) -> dict[str, Any] | None:
    """TIMESTAMPs as instants: the consumer reads them in the producer's zone (Asia/Shanghai), the source has UTC."""
    if image is None:
        return None
    return {k: v.astimezone(dt.UTC) if isinstance(v, dt.datetime) and v.tzinfo else v for k, v in image.items()}


def _plain(event: Event) -> dict[str, Any]:
    if isinstance(event, RowChange):
        event = attrs.evolve(event, before=_utc(event.before), after=_utc(event.after))
    doc = to_canonical(event, include_schema=False)
    doc.pop("meta", None)
    doc.pop("source", None)
    return doc


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_consumer_from_the_middle_gets_every_later_row_exactly(kafka_bootstrap: str, encoding: str) -> None:
    topic = kafka.unique_topic(f"simple-{encoding}")
    kafka.create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    codec = get_codec("simple")
    encoder = codec.encoder(
        {
            "encoding-format": encoding,
            "partition-num": PARTITIONS,
            "send-bootstrap-in-msg-count": 25,
            "time-zone": "Asia/Shanghai",
            "large-message-handle-compression": "lz4",
        }
    )
    produced: list[tuple[Event | None, Message]] = []
    for event in _workload():
        messages = encoder.encode(event)
        # A row's messages are its bootstraps (if due) and then the row itself.
        produced += [(event if i == len(messages) - 1 else None, m) for i, m in enumerate(messages)]
    assert kafka.produce(kafka_bootstrap, topic, [m for _, m in produced]) == len(produced)

    # Offsets in a fresh topic follow the produce order within each partition.
    offsets: dict[int, int] = {}
    located: list[tuple[Event | None, int, int]] = []
    for maybe_row, message in produced:
        assert message.partition is not None
        offset = offsets.get(message.partition, 0)
        offsets[message.partition] = offset + 1
        located.append((maybe_row, message.partition, offset))
    used = {p for p, n in offsets.items() if n}
    assert len({p for e, p, _ in located if isinstance(e, RowChange)}) == PARTITIONS  # tables spread over all
    middle = {p: offsets[p] // 2 for p in used}
    expected_rows = [_plain(e) for e, p, o in located if isinstance(e, RowChange) and o >= middle[p]]
    assert len(expected_rows) > 60

    received = _consume_from(kafka_bootstrap, topic, middle, sum(offsets[p] - middle[p] for p in used))
    decoders = {
        p: codec.decoder({"encoding-format": encoding, "large-message-handle-compression": "lz4"}) for p in used
    }
    decoded: list[Event] = []
    for message in sorted(received, key=lambda m: (m.partition or 0, m.offset or 0)):
        decoded += decoders[message.partition or 0].decode(message)
    rows = [e for e in decoded if isinstance(e, RowChange)]
    assert all(d.held_summary().rows == 0 for d in decoders.values())  # type: ignore[attr-defined]

    def by_partition_order(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(docs, key=lambda d: (d["table"], d["commit_ts"]))

    assert by_partition_order([_plain(r) for r in rows]) == by_partition_order(expected_rows)
    joined = [r.after["joined"] for r in rows if r.table == "payments" and r.after is not None]
    assert joined and all(t.utcoffset() == dt.timedelta(hours=8) for t in joined)  # read in its location zone
    versions = {(r.table, r.schema_version) for r in rows}
    assert ("orders", ORDERS_V2.version) in versions
    assert any(isinstance(e, Bootstrap) for e in decoded)
