"""Debezium decode and encode throughput against raw orjson on the same bytes, measured in the same run.

The message is a realistic 20-column update of mixed types, TiCDC flavour with the schema and the TiDB
extension on (the typed configuration: `tidb_type` in every field schema). Decode is compared with
``orjson.loads`` of the same value bytes (the floor any JSON codec pays); encode with ``orjson.dumps`` of the
same document. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

from typing import Any

import orjson
from workload import EVENT, ROW, rate

from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec

OPTIONS = {"enable-tidb-extension": True}


def test_decode_vs_raw_orjson(benchmark: Any) -> None:
    (message,) = get_codec("debezium").encoder(OPTIONS).encode(EVENT)
    assert message.value is not None
    decoder = get_codec("debezium").decoder()
    message = Message(value=message.value, key=message.key, topic="bench", partition=0, offset=0)
    event = decoder.decode(message)[0]
    assert isinstance(event, RowChange) and event.after == ROW  # exact typed values; warms the schema cache
    raw = rate(orjson.loads, message.value)
    benchmark(decoder.decode, message)
    raw = max(raw, rate(orjson.loads, message.value))  # the faster of before/after: load spikes on a shared box
    codec = 1 / benchmark.stats.stats.median
    print(f"\ndebezium decode: {codec:,.0f} msg/s, raw orjson.loads {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_encode_vs_raw_orjson(benchmark: Any) -> None:
    encoder = get_codec("debezium").encoder(OPTIONS)
    (message,) = encoder.encode(EVENT)
    assert message.value is not None
    document = orjson.loads(message.value)
    raw = rate(orjson.dumps, document)
    benchmark(encoder.encode, EVENT)
    raw = max(raw, rate(orjson.dumps, document))
    codec = 1 / benchmark.stats.stats.median
    print(f"\ndebezium encode: {codec:,.0f} msg/s, raw orjson.dumps {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
