"""Canal-JSON decode and encode throughput against raw orjson on the same bytes, measured in the same run.

The message is a realistic 20-column row of mixed types (TiCDC flavour, enable-tidb-extension). Decode is
compared with ``orjson.loads`` of the same bytes (the floor any JSON codec pays); encode with
``orjson.dumps`` of the same document. Each ratio is codec messages/s divided by raw messages/s.
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
from cdc_core.values import EnumIndex

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


def _rate(function: Any, argument: Any, number: int = 2000) -> float:
    """Calls per second, best of 5 repeats: the same statistic for codec and baseline, interleaved in time."""
    best = min(timeit.repeat(lambda: function(argument), number=number, repeat=5))
    return number / best


def test_decode_vs_raw_orjson(benchmark: Any) -> None:
    (message,) = get_codec("canal-json").encoder(OPTIONS).encode(EVENT)
    value = message.value
    assert value is not None
    decoder = get_codec("canal-json").decoder()
    message = Message(value=value, topic="bench", partition=0, offset=0)
    assert decoder.decode(message)[0].after["status"] == EnumIndex(2)  # plain mysqlType: index kept; warms caches
    raw = _rate(orjson.loads, value)
    codec = _rate(decoder.decode, message, 500)
    benchmark(decoder.decode, message)
    print(f"\ncanal-json decode: {codec:,.0f} msg/s, raw orjson.loads {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_encode_vs_raw_orjson(benchmark: Any) -> None:
    encoder = get_codec("canal-json").encoder(OPTIONS)
    (message,) = encoder.encode(EVENT)
    assert message.value is not None
    document = orjson.loads(message.value)
    raw = _rate(orjson.dumps, document)
    codec = _rate(encoder.encode, EVENT, 500)
    benchmark(encoder.encode, EVENT)
    print(f"\ncanal-json encode: {codec:,.0f} msg/s, raw orjson.dumps {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_memory_stays_flat_over_a_long_stream(benchmark: Any) -> None:
    """Peak RSS while decoding a long stream over 50 tables (CDC_BENCH_MESSAGES, default 10^5; 10^6 for the note)."""
    import os
    import resource

    import attrs

    count = int(os.environ.get("CDC_BENCH_MESSAGES", "100000"))
    encoder = get_codec("canal-json").encoder(OPTIONS)
    values = [
        encoder.encode(attrs.evolve(EVENT, table=f"customers_{t}", after={**ROW, "id": t}))[0].value for t in range(50)
    ]
    decoder = get_codec("canal-json").decoder()
    marks: list[int] = []

    def stream() -> None:
        for i in range(count):
            decoder.decode(Message(value=values[i % 50], topic="bench", partition=0, offset=i))
            if i % (count // 5) == 0:
                marks.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)

    benchmark.pedantic(stream, rounds=1, iterations=1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"\ncanal-json decode of {count:,} messages: peak RSS MiB at 0/20/40/60/80 %: {marks}, end {peak}")
    assert peak - marks[0] < 16, "the decoder's caches must stay bounded"
