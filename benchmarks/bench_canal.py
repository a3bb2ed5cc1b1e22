"""Canal-JSON decode and encode throughput against raw orjson on the same bytes, measured in the same run.

The message is a realistic 20-column row of mixed types (TiCDC flavour, enable-tidb-extension). Decode is
compared with ``orjson.loads`` of the same bytes (the floor any JSON codec pays); encode with
``orjson.dumps`` of the same document. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

from typing import Any

import orjson
from workload import EVENT, rate

from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.values import EnumIndex

OPTIONS = {"enable-tidb-extension": True}


def test_decode_vs_raw_orjson(benchmark: Any) -> None:
    (message,) = get_codec("canal-json").encoder(OPTIONS).encode(EVENT)
    value = message.value
    assert value is not None
    decoder = get_codec("canal-json").decoder()
    message = Message(value=value, topic="bench", partition=0, offset=0)
    event = decoder.decode(message)[0]
    assert isinstance(event, RowChange) and event.after is not None
    assert event.after["status"] == EnumIndex(2)  # plain mysqlType: index kept; warms caches
    raw = rate(orjson.loads, value)
    codec = rate(decoder.decode, message, number=500)
    benchmark(decoder.decode, message)
    print(f"\ncanal-json decode: {codec:,.0f} msg/s, raw orjson.loads {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_encode_vs_raw_orjson(benchmark: Any) -> None:
    encoder = get_codec("canal-json").encoder(OPTIONS)
    (message,) = encoder.encode(EVENT)
    assert message.value is not None
    document = orjson.loads(message.value)
    raw = rate(orjson.dumps, document)
    codec = rate(encoder.encode, EVENT, number=500)
    benchmark(encoder.encode, EVENT)
    print(f"\ncanal-json encode: {codec:,.0f} msg/s, raw orjson.dumps {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
