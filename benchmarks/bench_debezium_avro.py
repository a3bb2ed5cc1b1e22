"""Debezium Avro (protocol ``debezium-avro``) decode and encode throughput against raw fastavro on the same bytes,
measured in the same run.

Two messages: what the real Debezium MariaDB connector wrote through Kafka Connect's Avro converter for the
57-column ``types`` row of the captured corpus (schemas from the capture), and the realistic 20-column row of the
Debezium benchmark written by the encoder with the TiDB extension, its schemas in a real Schema Registry (Apicurio,
fixture ``schema_registry``; fetched once, then cached). Decode is compared with ``fastavro.schemaless_reader`` of
the same key and value datums with their parsed writer schemas (the floor any Avro consumer pays); encode with
``fastavro.schemaless_writer`` of the same two records. Each ratio is codec messages/s divided by raw messages/s.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
from workload import EVENT, ROW, rate

from cdc_core.codec import Options
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.messagelines import read_lines
from cdc_core.registry import get_codec
from cdc_debezium.avro.codec import OPTIONS
from cdc_debezium.avro.decoder import DebeziumAvroDecoder
from cdc_testing.apicurio import ApicurioRegistry

CAPTURE = Path(__file__).parents[1] / "packages" / "cdc-debezium" / "tests" / "captures" / "avro"
Pair = tuple[Any, Any]  # (key, value)


class _Schemas:
    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts

    def schema(self, schema_id: int) -> str:
        return self.texts[schema_id]


def _parsed(message: Message, texts: dict[int, str]) -> Pair:
    assert message.key is not None and message.value is not None
    return (
        fastavro.parse_schema(json.loads(texts[int.from_bytes(message.key[1:5], "big")])),
        fastavro.parse_schema(json.loads(texts[int.from_bytes(message.value[1:5], "big")])),
    )


def _read(parsed: Pair, data: Pair) -> Any:
    return (
        fastavro.schemaless_reader(io.BytesIO(data[0]), parsed[0], None),
        fastavro.schemaless_reader(io.BytesIO(data[1]), parsed[1], None),
    )


def _compare(benchmark: Any, label: str, decoder: Any, message: Message, parsed: Pair) -> None:
    assert message.key is not None and message.value is not None
    datums = (message.key[5:], message.value[5:])
    raw = rate(_read, parsed, datums)
    benchmark(decoder.decode, message)
    raw = max(raw, rate(_read, parsed, datums))  # the faster of before/after: load spikes on a shared box
    codec = 1 / benchmark.stats.stats.median
    print(f"\n{label}: {codec:,.0f} msg/s, raw fastavro.schemaless_reader {raw:,.0f} msg/s, ratio {codec / raw:.2f}")


def test_decode_real_connector_message_vs_raw_fastavro(benchmark: Any) -> None:
    texts = {int(k): v for k, v in json.loads((CAPTURE / "mdb-avro.schemas.json").read_text()).items()}
    with (CAPTURE / "mdb-avro.jsonl").open("rb") as stream:
        messages = [m for _, m in read_lines(stream, source="mdb-avro")]
    options = Options([s for s in OPTIONS if s.for_decoder], {"schema-registry": "http://unused"}, protocol="bench")
    decoder = DebeziumAvroDecoder(options, schemas=_Schemas(texts))
    # the first update of row 2 of `types`: 57 columns, before and after
    message = next(m for m in messages if m.topic == "mdb-avro.inventory.types" and m.value and b"updated" in m.value)
    (event,) = decoder.decode(message)
    assert isinstance(event, RowChange) and event.after is not None and event.after["t_varchar"] == "updated"
    _compare(benchmark, "debezium-avro decode (real connector, 57 columns)", decoder, message, _parsed(message, texts))


def test_decode_vs_raw_fastavro(benchmark: Any, schema_registry: ApicurioRegistry) -> None:
    options = {"schema-registry": schema_registry.url, "enable-tidb-extension": True}
    (message,) = get_codec("debezium-avro").encoder(options).encode(EVENT)
    key, value = message.key, message.value
    assert key is not None and value is not None
    decoder = get_codec("debezium-avro").decoder({"schema-registry": schema_registry.url})
    message = Message(value=value, key=key, topic="bench", partition=0, offset=0)
    event = decoder.decode(message)[0]
    assert isinstance(event, RowChange) and event.after == ROW  # exact typed values; warms the schema cache
    registry = decoder.source  # type: ignore[attr-defined]
    texts = {i: registry.schema(i) for i in (int.from_bytes(d[1:5], "big") for d in (key, value))}
    _compare(benchmark, "debezium-avro decode (encoder, 20 columns)", decoder, message, _parsed(message, texts))


def test_encode_vs_raw_fastavro(benchmark: Any, schema_registry: ApicurioRegistry) -> None:
    encoder = get_codec("debezium-avro").encoder(
        {"schema-registry": schema_registry.url, "enable-tidb-extension": True}
    )
    (message,) = encoder.encode(EVENT)
    assert message.key is not None and message.value is not None
    registry = encoder.registry  # type: ignore[attr-defined]
    texts = {i: registry.schema(i) for i in (int.from_bytes(d[1:5], "big") for d in (message.key, message.value))}
    parsed = _parsed(message, texts)
    records = _read(parsed, (message.key[5:], message.value[5:]))

    def write() -> tuple[bytes, bytes]:
        key, value = io.BytesIO(), io.BytesIO()
        fastavro.schemaless_writer(key, parsed[0], records[0])
        fastavro.schemaless_writer(value, parsed[1], records[1])
        return key.getvalue(), value.getvalue()

    raw = rate(write)
    benchmark(encoder.encode, EVENT)
    raw = max(raw, rate(write))
    codec = 1 / benchmark.stats.stats.median
    label = "debezium-avro encode"
    print(f"\n{label}: {codec:,.0f} msg/s, raw fastavro.schemaless_writer {raw:,.0f} msg/s, ratio {codec / raw:.2f}")
