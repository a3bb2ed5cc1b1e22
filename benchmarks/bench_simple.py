"""Simple decode and encode throughput, JSON and Avro, each against its raw library on the same bytes in the same run.

The message is a realistic 20-column UPDATE (both images) of mixed types. JSON decode is compared with
``orjson.loads`` of the same bytes and JSON encode with ``orjson.dumps`` of the same document (the floor any JSON
codec pays); Avro decode with ``fastavro.schemaless_reader`` of the same datum and Avro encode with
``fastavro.schemaless_writer`` of the same datum. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
import orjson
import pytest
from workload import EVENT, ROW, rate

from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec


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
    raw = rate(orjson.loads if encoding == "json" else _avro_raw_read, value)
    codec = rate(decoder.decode, message, number=500)
    benchmark(decoder.decode, message)
    print(f"\nsimple-{encoding} decode: {codec:,.0f} msg/s, raw {raw_name} {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_encode_vs_raw(benchmark: Any, encoding: str) -> None:
    encoder, _, message = _primed(encoding)
    assert message.value is not None
    if encoding == "json":
        document = orjson.loads(message.value)
        raw_name, raw = "orjson.dumps", rate(orjson.dumps, document)
    else:
        from cdc_simple.avro import SCHEMA as AVRO

        datum = _avro_raw_read(message.value)

        def write(d: Any) -> bytes:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, AVRO, d)
            return out.getvalue()

        raw_name, raw = "fastavro.schemaless_writer", rate(write, datum)
    codec = rate(encoder.encode, EVENT, number=500)
    benchmark(encoder.encode, EVENT)
    print(f"\nsimple-{encoding} encode: {codec:,.0f} msg/s, raw {raw_name} {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
