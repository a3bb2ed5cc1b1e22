"""Simple decode and encode throughput, JSON and Avro, each against its raw library on the same bytes in the same run.

The message is a realistic 20-column UPDATE (both images) of mixed types. JSON decode is compared with
``orjson.loads`` of the same bytes and JSON encode with ``orjson.dumps`` of the same document (the floor any JSON
codec pays); Avro decode with ``fastavro.schemaless_reader`` of the same datum and Avro encode with
``fastavro.schemaless_writer`` of the same datum. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

import datetime as dt
import io
import timeit
from decimal import Decimal
from typing import Any

import fastavro
import orjson
import pytest

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
    table_id=88,
    version=compose(1_709_000_000_000),
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
    table_id=88,
    schema_version=SCHEMA.version,
    schema=SCHEMA,
)


def _rate(function: Any, argument: Any, number: int = 2000) -> float:
    """Calls per second, best of 5 repeats: the same statistic for codec and baseline."""
    best = min(timeit.repeat(lambda: function(argument), number=number, repeat=5))
    return number / best


def _primed(encoding: str) -> tuple[Any, Any, Message]:
    options = {"encoding-format": encoding}
    encoder = get_codec("simple").encoder({**options, "send-bootstrap-in-msg-count": 10**9})
    bootstrap, message = encoder.encode(EVENT)
    decoder = get_codec("simple").decoder(options)
    decoder.decode(bootstrap)
    located = Message(value=message.value, topic="bench", partition=0, offset=0)
    (row,) = decoder.decode(located)
    assert isinstance(row, RowChange) and row.after == ROW  # warms caches and proves the bytes decode to the source row
    return encoder, decoder, located


def _avro_raw_read(value: bytes) -> Any:
    from cdc_simple.avro import SCHEMA as AVRO

    return fastavro.schemaless_reader(io.BytesIO(value), AVRO, None, return_record_name=True)


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_decode_vs_raw(benchmark: Any, encoding: str) -> None:
    _, decoder, message = _primed(encoding)
    value = message.value
    assert value is not None
    raw_name = "orjson.loads" if encoding == "json" else "fastavro.schemaless_reader"
    raw = _rate(orjson.loads if encoding == "json" else _avro_raw_read, value)
    codec = _rate(decoder.decode, message, 500)
    benchmark(decoder.decode, message)
    print(f"\nsimple-{encoding} decode: {codec:,.0f} msg/s, raw {raw_name} {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_encode_vs_raw(benchmark: Any, encoding: str) -> None:
    encoder, _, message = _primed(encoding)
    assert message.value is not None
    if encoding == "json":
        document = orjson.loads(message.value)
        raw_name, raw = "orjson.dumps", _rate(orjson.dumps, document)
    else:
        from cdc_simple.avro import SCHEMA as AVRO

        datum = _avro_raw_read(message.value)

        def write(d: Any) -> bytes:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, AVRO, d)
            return out.getvalue()

        raw_name, raw = "fastavro.schemaless_writer", _rate(write, datum)
    codec = _rate(encoder.encode, EVENT, 500)
    benchmark(encoder.encode, EVENT)
    print(f"\nsimple-{encoding} encode: {codec:,.0f} msg/s, raw {raw_name} {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
