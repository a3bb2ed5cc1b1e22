"""TiCDC Avro decode and encode throughput against raw fastavro on the same bytes, measured in the same run.

The message is the realistic 20-column row of the Debezium benchmark, written with the TiDB extension and
precise decimals, its schemas in a real Schema Registry (Apicurio, fixture ``schema_registry``; fetched once, then
cached: a steady stream makes no registry calls). Decode is compared with ``fastavro.schemaless_reader`` of the
same key and value datums with their parsed writer schemas (the floor any Avro consumer pays); encode with
``fastavro.schemaless_writer`` of the same two records. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
from confluent_kafka.schema_registry import SchemaRegistryClient
from workload import EVENT, ROW, rate

from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_testing.apicurio import ApicurioRegistry

Pair = tuple[Any, Any]  # (key, value)


def _setup(registry: ApicurioRegistry) -> tuple[Any, Any, Message, Pair, Pair]:
    options = {"schema-registry": registry.url, "enable-tidb-extension": "true"}
    encoder = get_codec("avro").encoder(options)
    (message,) = encoder.encode(EVENT)
    assert message.value is not None and message.key is not None
    client = SchemaRegistryClient({"url": registry.url})
    parsed = tuple(
        fastavro.parse_schema(json.loads(client.get_schema(int.from_bytes(data[1:5], "big")).schema_str or ""))
        for data in (message.key, message.value)
    )
    records = tuple(
        fastavro.schemaless_reader(io.BytesIO(data[5:]), schema, None)
        for data, schema in zip((message.key, message.value), parsed, strict=True)
    )
    decoder = get_codec("avro").decoder({"schema-registry": registry.url})
    return encoder, decoder, message, (parsed[0], parsed[1]), (records[0], records[1])


def _read(parsed: Pair, data: Pair) -> Any:
    return (
        fastavro.schemaless_reader(io.BytesIO(data[0]), parsed[0], None),
        fastavro.schemaless_reader(io.BytesIO(data[1]), parsed[1], None),
    )


def _write(parsed: Pair, records: Pair) -> tuple[bytes, bytes]:
    key, value = io.BytesIO(), io.BytesIO()
    fastavro.schemaless_writer(key, parsed[0], records[0])
    fastavro.schemaless_writer(value, parsed[1], records[1])
    return key.getvalue(), value.getvalue()


def test_decode_vs_raw_fastavro(benchmark: Any, schema_registry: ApicurioRegistry) -> None:
    _, decoder, message, parsed, _ = _setup(schema_registry)
    message = Message(value=message.value, key=message.key, topic="bench", partition=0, offset=0)
    assert decoder.decode(message)[0].after == ROW  # exact typed values; warms the schema cache
    assert message.value is not None and message.key is not None
    datum = (message.key[5:], message.value[5:])
    raw = rate(_read, parsed, datum)
    benchmark(decoder.decode, message)
    raw = max(raw, rate(_read, parsed, datum))  # the faster of before/after: load spikes on a shared box
    codec = 1 / benchmark.stats.stats.median
    print(
        f"\navro decode: {codec:,.0f} msg/s, raw fastavro.schemaless_reader {raw:,.0f} msg/s, ratio {codec / raw:.2f}"
    )


def test_encode_vs_raw_fastavro(benchmark: Any, schema_registry: ApicurioRegistry) -> None:
    encoder, _, _, parsed, record = _setup(schema_registry)
    raw = rate(_write, parsed, record)
    benchmark(encoder.encode, EVENT)
    raw = max(raw, rate(_write, parsed, record))
    codec = 1 / benchmark.stats.stats.median
    print(
        f"\navro encode: {codec:,.0f} msg/s, raw fastavro.schemaless_writer {raw:,.0f} msg/s, ratio {codec / raw:.2f}"
    )
