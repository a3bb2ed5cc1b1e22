"""Debezium decode and encode throughput against raw orjson on the same bytes, measured in the same run.

The message is a realistic 20-column update of mixed types, TiCDC flavour with the schema and the TiDB
extension on (the typed configuration: `tidb_type` in every field schema). Decode is compared with
``orjson.loads`` of the same value bytes (the floor any JSON codec pays); encode with ``orjson.dumps`` of the
same document. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

import datetime as dt
import timeit
from decimal import Decimal
from typing import Any

import orjson

from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text

COLUMNS = {
    "id": "bigint(20)",
    "name": "varchar(64)",
    "email": "varchar(128)",
    "age": "tinyint(3) unsigned",
    "balance": "decimal(12,2)",
    "score": "double",
    "ratio": "float",
    "created_at": "datetime(3)",
    "updated_at": "timestamp(6)",
    "birthday": "date",
    "active": "tinyint(1)",
    "status": "enum('new','active','closed')",
    "tags": "set('a','b','c')",
    "payload": "json",
    "avatar": "varbinary(64)",
    "note": "text",
    "counter": "int(10) unsigned",
    "big": "bigint(20) unsigned",
    "duration": "time(3)",
    "born_year": "year(4)",
}
SCHEMA = TableSchema(
    database="shop",
    table="customers",
    columns=[Column(name=n, data_type=parse_type_text(t), nullable=n != "id") for n, t in COLUMNS.items()],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
ROW: dict[str, Any] = {
    "id": 123456789,
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "age": 36,
    "balance": Decimal("10450.25"),
    "score": 98.125,
    "ratio": 0.5,
    "created_at": dt.datetime(2024, 3, 1, 12, 30, 45, 123000),
    "updated_at": dt.datetime(2024, 3, 2, 8, 0, 0, 654321, tzinfo=dt.UTC),
    "birthday": dt.date(1815, 12, 10),
    "active": 1,
    "status": "active",
    "tags": ("a", "c"),
    "payload": {"plan": "gold", "limits": [10, 20], "beta": True},
    "avatar": bytes(range(32)),
    "note": "prefers analytical engines",
    "counter": 4000000000,
    "big": 18446744073709551615,
    "duration": dt.timedelta(hours=1, minutes=2, seconds=3, milliseconds=456),
    "born_year": 2024,
}
EVENT = RowChange(
    op=Op.UPDATE,
    database="shop",
    table="customers",
    before={**ROW, "counter": 1},
    after=ROW,
    commit_ts=compose(1_709_280_000_000),
    schema=SCHEMA,
)
OPTIONS = {"enable-tidb-extension": True}


def _raw_rate(function: Any, argument: Any) -> float:
    number = 2000
    best = min(timeit.repeat(lambda: function(argument), number=number, repeat=5))
    return number / best


def test_decode_vs_raw_orjson(benchmark: Any) -> None:
    (message,) = get_codec("debezium").encoder(OPTIONS).encode(EVENT)
    assert message.value is not None
    decoder = get_codec("debezium").decoder()
    message = Message(value=message.value, key=message.key, topic="bench", partition=0, offset=0)
    assert decoder.decode(message)[0].after == ROW  # exact typed values; warms the schema cache
    raw = _raw_rate(orjson.loads, message.value)
    benchmark(decoder.decode, message)
    raw = max(raw, _raw_rate(orjson.loads, message.value))  # the faster of before/after: load spikes on a shared box
    codec = 1 / benchmark.stats.stats.median
    print(f"\ndebezium decode: {codec:,.0f} msg/s, raw orjson.loads {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_encode_vs_raw_orjson(benchmark: Any) -> None:
    encoder = get_codec("debezium").encoder(OPTIONS)
    (message,) = encoder.encode(EVENT)
    assert message.value is not None
    document = orjson.loads(message.value)
    raw = _raw_rate(orjson.dumps, document)
    benchmark(encoder.encode, EVENT)
    raw = max(raw, _raw_rate(orjson.dumps, document))
    codec = 1 / benchmark.stats.stats.median
    print(f"\ndebezium encode: {codec:,.0f} msg/s, raw orjson.dumps {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
