"""Malformed input gives typed, positioned errors; nothing but CdcError escapes the decoder."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from cdc_avro import CODEC, RegistryUnavailableError
from cdc_core.errors import CdcError, ConfigError, DecodeError, EncodeError
from cdc_core.events import DDLEvent, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.contract import assert_only_cdc_errors
from cdc_testing.registry_double import SchemaRegistryDouble
from cdc_testing.strategies import kitchen_sink_schema


@pytest.fixture
def encoded(schema_registry: ApicurioRegistry) -> Message:
    schema = kitchen_sink_schema()
    row = dict.fromkeys(schema.column_names) | {"id": 1, "c_decimal": Decimal("1.5000"), "c_text": "x", "c_bit_12": 9}
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": "true"})
    (message,) = encoder.encode(
        RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=row, commit_ts=1 << 40, schema=schema)
    )
    return message


def _decode(registry: ApicurioRegistry | SchemaRegistryDouble, value: bytes | None, key: bytes | None) -> DecodeError:
    decoder = CODEC.decoder({"schema-registry": registry.url, "schema-registry-retry-backoff-ms": "1"})
    with pytest.raises(DecodeError) as caught:
        decoder.decode(Message(value=value, key=key, topic="t", partition=2, offset=41))
    assert (caught.value.topic, caught.value.partition, caught.value.offset) == ("t", 2, 41)
    return caught.value


def test_wrong_magic_byte(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None
    error = _decode(schema_registry, b"\x05" + encoded.value[1:], encoded.key)
    assert error.field == "value.header" and "magic byte 0x05" in str(error)


def test_unknown_schema_id(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None
    unknown = 2**31 - 1  # never assigned in a test session
    error = _decode(schema_registry, encoded.value[:1] + struct.pack(">I", unknown) + encoded.value[5:], encoded.key)
    assert error.field == "value.schema_id" and f"schema id {unknown} is unknown" in str(error)


def test_truncated_datum(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None
    error = _decode(schema_registry, encoded.value[:-7], encoded.key)
    assert error.field == "value" and "does not match its writer schema" in str(error)


def test_truncated_header_and_trailing_bytes(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    assert encoded.value is not None and encoded.key is not None
    assert _decode(schema_registry, encoded.value[:3], encoded.key).field == "value.header"
    assert "trailing bytes" in str(_decode(schema_registry, encoded.value + b"\x00\x00", encoded.key))
    assert _decode(schema_registry, encoded.value, encoded.key[:5]).field == "key"


def test_a_registry_that_keeps_failing_is_a_service_fault_not_bad_data(
    registry_double: SchemaRegistryDouble, encoded: Message
) -> None:
    registry_double.fail_next(20, status=503)
    decoder = CODEC.decoder({"schema-registry": registry_double.url, "schema-registry-retry-backoff-ms": "1"})
    with pytest.raises(RegistryUnavailableError, match="after 4 attempt"):
        decoder.decode(Message(value=encoded.value, key=encoded.key, topic="t", partition=2, offset=41))


def test_schema_not_written_by_ticdc(schema_registry: ApicurioRegistry) -> None:
    plain = '{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}'
    schema_id = SchemaRegistryClient({"url": schema_registry.url}).register_schema("plain-value", Schema(plain, "AVRO"))
    error = _decode(schema_registry, b"\x00" + struct.pack(">I", schema_id) + b"\x02", None)
    assert error.field == "value.schema" and "connect.parameters" in str(error)


def test_bad_testing_switch_messages(schema_registry: ApicurioRegistry) -> None:
    assert _decode(schema_registry, b"\x01{not json", None).field == "value"
    assert _decode(schema_registry, b'\x01{"type":"x"}', None).field == "value.type"
    assert _decode(schema_registry, b"\x02\x00\x01", None).field == "value"


def test_ddl_and_watermark_messages_of_the_testing_switch(schema_registry: ApicurioRegistry) -> None:
    options = {
        "schema-registry": schema_registry.url,
        "enable-tidb-extension": "true",
        "avro-enable-watermark": "true",
        "partition-num": "2",
    }
    encoder = CODEC.encoder(options)
    ddl = DDLEvent(ddl_type="TRUNCATE", sql="TRUNCATE TABLE t", database="test", table="t", commit_ts=77)
    messages = encoder.encode(ddl)
    assert [m.partition for m in messages] == [0, 1] and all(m.key is None for m in messages)
    assert messages[0].value == b'\x01{"query":"TRUNCATE TABLE t","type":11,"schema":"test","table":"t","commitTs":77}'
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    (decoded,) = decoder.decode(messages[0])
    assert decoded == ddl
    assert encoder.encode(Watermark(ts=5)) == []  # no topic written yet
    schema = kitchen_sink_schema()
    encoder.encode(RowChange(op=Op.DELETE, database="test", table="kitchen_sink", before={"id": 1}, schema=schema))
    (mark, _) = encoder.encode(Watermark(ts=2**63 + 5))
    assert mark.value == b"\x02" + (2**63 + 5).to_bytes(8, "big")
    assert decoder.decode(mark) == [Watermark(ts=2**63 + 5)]
    plain = CODEC.encoder({"schema-registry": schema_registry.url})
    assert plain.encode(ddl) == [] and plain.encode(Watermark(ts=1)) == []


def test_encode_errors_are_typed(schema_registry: ApicurioRegistry) -> None:
    # the same table is registered nullable and not (on Apicurio only the global level lifts the check)
    SchemaRegistryClient({"url": schema_registry.url}).set_compatibility(level="NONE")
    schema = kitchen_sink_schema(nullable=False)
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    with pytest.raises(EncodeError, match="no table schema"):
        encoder.encode(RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after={"id": 1}))
    with pytest.raises(EncodeError, match="NOT NULL") as caught:
        encoder.encode(RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after={"id": 1}, schema=schema))
    assert caught.value.table == "kitchen_sink"
    nullable = kitchen_sink_schema()
    bad = dict.fromkeys(nullable.column_names) | {"id": 1, "c_enum": "purple"}
    with pytest.raises(EncodeError, match="not a member") as caught:
        encoder.encode(RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=bad, schema=nullable))
    assert caught.value.field == "c_enum"


def test_option_errors() -> None:
    with pytest.raises(ConfigError, match="schema-registry is required"):
        CODEC.encoder({})
    with pytest.raises(ConfigError, match="schema-registry is required"):
        CODEC.decoder({})
    with pytest.raises(ConfigError, match="enable-row-checksum"):
        CODEC.encoder({"schema-registry": "http://localhost:1", "enable-row-checksum": "true"})
    with pytest.raises(ConfigError, match="must contain"):
        CODEC.encoder({"schema-registry": "http://localhost:1", "topic": "fixed"})
    with pytest.raises(ConfigError, match="http"):
        CODEC.encoder({"schema-registry": "ftp://localhost:1"})


def test_mutated_messages_raise_only_cdc_errors(schema_registry: ApicurioRegistry, encoded: Message) -> None:
    seeds = [encoded, Message(value=None, key=encoded.key), Message(value=b"\x02" + bytes(8))]
    decoder_options = {"schema-registry": schema_registry.url, "schema-registry-max-retries": "0"}
    shared = CODEC.decoder(decoder_options)  # one decoder: schemas are fetched once, mutations stay fast
    tried = assert_only_cdc_errors(lambda: shared, seeds, max_examples=300)
    assert tried >= 300
    assert issubclass(DecodeError, CdcError)


def test_columns_colliding_after_sanitizing_are_refused_before_registration(
    schema_registry: ApicurioRegistry,
) -> None:
    from cdc_core.schema import Column, TableSchema
    from cdc_core.types import DataType, MySQLType

    text = DataType(mysql_type=MySQLType.VARCHAR, length=4)
    table = TableSchema(
        database="d", table="t", columns=[Column(name="名字", data_type=text), Column(name="__", data_type=text)]
    )
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    with pytest.raises(EncodeError, match="collide after name sanitizing: __"):
        encoder.encode(RowChange(op=Op.INSERT, database="d", table="t", after={"名字": "a", "__": "b"}, schema=table))
    assert schema_registry.requests() == []
