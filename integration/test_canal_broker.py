"""Canal-JSON through a real Apache Kafka broker (the shared cdc-testing fixture): encode, produce to
TiCDC's partitions, consume, decode, replay into a table keyed by pkNames and compare with the source state."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka

PARTITIONS = 3


def _col(name: str, type_text: str) -> Column:
    return Column(name=name, data_type=parse_type_text(type_text), nullable=name != "id")


SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=[
        _col("id", "bigint(20)"),
        _col("sku", "varchar(32)"),
        _col("qty", "int(10) unsigned"),
        _col("price", "decimal(10,2)"),
        _col("placed", "timestamp(3)"),
        _col("state", "enum('new','paid','shipped')"),
        _col("blob", "varbinary(16)"),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)


def _row(i: int, qty: int, state: str) -> dict[str, Any]:
    return {
        "id": i,
        "sku": f"SKU-{i:04d}<&>",
        "qty": qty,
        "price": Decimal(f"{i}.{i % 100:02d}"),
        "placed": dt.datetime(2024, 5, 1, 8, 0, 0, 125000, tzinfo=dt.UTC) + dt.timedelta(minutes=i),
        "state": state,
        "blob": bytes([i % 256, 0, 255]),
    }


def _source_stream() -> tuple[list[Any], dict[int, dict[str, Any]]]:
    events: list[Any] = [
        DDLEvent(
            ddl_type=DDLType.CREATE,
            sql="create table orders (...)",
            database="shop",
            table="orders",
            commit_ts=compose(1_714_550_000_000),
        ),
    ]
    state: dict[int, dict[str, Any]] = {}
    ts = compose(1_714_550_000_001)
    for i in range(1, 41):
        row = _row(i, i * 3, "new")
        state[i] = row
        events.append(RowChange(op=Op.INSERT, database="shop", table="orders", after=row, commit_ts=ts, schema=SCHEMA))
        ts += 1 << 18
    events.append(Watermark(ts=ts))
    for i in range(1, 41, 3):
        after = {**state[i], "state": "paid", "qty": 4294967295}
        events.append(
            RowChange(
                op=Op.UPDATE, database="shop", table="orders", before=state[i], after=after, commit_ts=ts, schema=SCHEMA
            )
        )
        state[i] = after
        ts += 1 << 18
    for i in range(2, 41, 5):
        events.append(
            RowChange(op=Op.DELETE, database="shop", table="orders", before=state.pop(i), commit_ts=ts, schema=SCHEMA)
        )
        ts += 1 << 18
    events.append(Watermark(ts=ts))
    return events, state


@pytest.mark.parametrize(
    "options", [{"enable-tidb-extension": True}, {"content-compatible": True, "enable-tidb-extension": True}]
)
def test_stream_through_broker_rebuilds_the_table(kafka_bootstrap: str, options: dict[str, Any]) -> None:
    topic = kafka.unique_topic("canal")
    kafka.create_topic(kafka_bootstrap, topic, partitions=PARTITIONS)
    events, expected_state = _source_stream()
    encoder = get_codec("canal-json").encoder({**options, "partition-num": PARTITIONS, "time-zone": "Asia/Tokyo"})
    sent = kafka.produce(kafka_bootstrap, topic, [m for e in events for m in encoder.encode(e)])
    received = kafka.consume(kafka_bootstrap, topic, sent)
    assert len(received) == sent

    decoder = get_codec("canal-json").decoder({"time-zone": "Asia/Tokyo"})
    decoded = [(m, e) for m in sorted(received, key=lambda m: (m.partition, m.offset)) for e in decoder.decode(m)]
    rows = [e for _, e in decoded if isinstance(e, RowChange)]
    ddls = [(m.partition, e) for m, e in decoded if isinstance(e, DDLEvent)]
    watermarks = sorted((m.partition, e.ts) for m, e in decoded if isinstance(e, Watermark))
    assert [p for p, _ in ddls] == [0] and ddls[0][1].ddl_type is DDLType.CREATE
    assert len({(m.partition) for m, e in decoded if isinstance(e, RowChange)}) == 1  # one table, one partition
    assert len(watermarks) == 2 * PARTITIONS
    assert all(r.source is not None and r.source.topic == topic for r in rows)

    table: dict[int, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (r.commit_ts, r.source.offset)):
        if row.before is not None:
            del table[row.before["id"]]
        if row.after is not None:
            table[row.after["id"]] = row.after
    names_known = options.get("content-compatible", False)
    expected = {
        i: {**r, "state": r["state"] if names_known else _enum_index(r["state"])} for i, r in expected_state.items()
    }
    assert table == expected


def _enum_index(name: str) -> Any:
    from cdc_core.values import EnumIndex

    return EnumIndex(("new", "paid", "shipped").index(name) + 1)
