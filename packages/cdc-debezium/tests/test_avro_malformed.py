"""debezium-avro: malformed input gives typed errors naming the message and the field; a registry that is down
is an infrastructure fault (RegistryUnavailableError, retried first), never bad data."""

from __future__ import annotations

import json
import struct

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from cdc_core.errors import ConfigError, DecodeError
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema_registry import RegistryUnavailableError, confluent_frame
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.registry_double import SchemaRegistryDouble
from cdc_testing.seeds import edge_row
from cdc_testing.strategies import kitchen_sink_schema

CODEC = get_codec("debezium-avro")
SCHEMA = kitchen_sink_schema()


@pytest.fixture
def encoded(schema_registry: ApicurioRegistry) -> Message:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": True})
    event = RowChange(
        op=Op.INSERT, database="test", table="kitchen_sink", after=edge_row(), commit_ts=1 << 40, schema=SCHEMA
    )
    (message,) = encoder.encode(event)
    return message


def _error(registry_url: str, value: bytes | None, key: bytes | None) -> DecodeError:
    decoder = CODEC.decoder({"schema-registry": registry_url})
    with pytest.raises(DecodeError) as caught:
        decoder.decode(Message(value=value, key=key, topic="t", partition=2, offset=41))
    assert (caught.value.protocol, caught.value.topic, caught.value.offset) == ("debezium-avro", "t", 41)
    return caught.value


def test_a_registry_is_required() -> None:
    with pytest.raises(ConfigError, match="schema-registry is required"):
        CODEC.decoder({})
    with pytest.raises(ConfigError, match="schema-registry is required"):
        CODEC.encoder({})


def test_framing(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None and encoded.key is not None
    error = _error(schema_registry.url, b"\x05" + encoded.value[1:], encoded.key)
    assert error.field == "value.header" and "magic byte 0x05" in str(error)
    assert _error(schema_registry.url, encoded.value[:3], encoded.key).field == "value.header"
    assert _error(schema_registry.url, encoded.value, b"{}").field == "key.header"  # a JSON key


def test_unknown_schema_id(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None
    unknown = 2**31 - 1  # never assigned in a test session
    error = _error(schema_registry.url, encoded.value[:1] + struct.pack(">I", unknown) + encoded.value[5:], None)
    assert error.field == "value.schema_id" and f"schema id {unknown} is unknown" in str(error)


def test_corrupt_datum(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None
    error = _error(schema_registry.url, encoded.value[:-9], encoded.key)
    assert error.field == "value" and "does not match writer schema" in str(error)
    error = _error(schema_registry.url, encoded.value + b"\x00\x00", encoded.key)
    assert error.field == "value" and "2 trailing bytes" in str(error)


def test_a_value_that_is_not_a_change(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    """The key record given as the value: no op, named as a key document; a bad column value names the column."""
    assert encoded.key is not None
    error = _error(schema_registry.url, encoded.key, None)
    assert error.field == "value.op" and "key document" in str(error)


def test_a_value_that_does_not_fit_its_column(schema_registry: ApicurioRegistry) -> None:
    """A Bits value longer than BIT(12) allows: the column is named in the error."""
    schema = {
        "type": "record",
        "name": "Envelope",
        "namespace": "p.db.t",
        "fields": [
            {"name": "before", "type": ["null", {"type": "record", "name": "Value", "fields": [_bits_field()]}]},
            {"name": "after", "type": ["null", "Value"]},
            {"name": "source", "type": {"type": "record", "name": "Source", "fields": _source_fields()}},
            {"name": "op", "type": "string"},
        ],
    }
    client = SchemaRegistryClient({"url": schema_registry.url})
    schema_id = client.register_schema("p.db.t-value", Schema(json.dumps(schema), "AVRO"))
    # before null (branch 0); after the record (branch 1, zigzag 2) whose b is bytes (branch 1) of length 3
    # (zigzag 6); source: db "db", table "t" (branch 1); op "c"
    datum = b"\x00" + b"\x02" + b"\x02\x06\xff\xff\xff" + b"\x04db" + b"\x02\x02t" + b"\x02c"
    error = _error(schema_registry.url, confluent_frame(schema_id, datum), None)
    assert error.field == "value.after.b" and "out of range" in str(error)


def _bits_field() -> dict[str, object]:
    bits = {"type": "bytes", "connect.name": "io.debezium.data.Bits", "connect.parameters": {"length": "12"}}
    return {"name": "b", "type": ["null", bits], "default": None}


def _source_fields() -> list[dict[str, object]]:
    return [{"name": "db", "type": "string"}, {"name": "table", "type": ["null", "string"], "default": None}]


def test_registry_down_is_unavailable_not_bad_data(registry_double: SchemaRegistryDouble) -> None:
    registry_double.fail_next(10)
    options = {"schema-registry": registry_double.url, "schema-registry-retry-backoff-ms": 1}
    decoder = CODEC.decoder({**options, "schema-registry-max-retries": 2})
    with pytest.raises(RegistryUnavailableError, match="after 3 attempt"):
        decoder.decode(Message(value=confluent_frame(7, b"\x00"), topic="t", partition=0, offset=1))
