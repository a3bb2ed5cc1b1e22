"""The codec as confluent-kafka Serializer/Deserializer classes."""

from __future__ import annotations

from confluent_kafka.serialization import MessageField, SerializationContext

from cdc_avro.serde import AvroDeserializer, AvroKeyDeserializer, AvroKeySerializer, AvroSerializer
from cdc_core.events import Op, RowChange
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.strategies import kitchen_sink_schema


def test_serializers_round_trip_through_the_registry(schema_registry: ApicurioRegistry) -> None:
    schema = kitchen_sink_schema()
    row = dict.fromkeys(schema.column_names) | {"id": 7, "c_varchar": "hello", "c_set": ("x", "z")}
    event = RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=row, commit_ts=1 << 30, schema=schema)
    options = {"schema-registry": schema_registry.url, "enable-tidb-extension": "true"}
    ctx = SerializationContext("tidb_test_kitchen_sink", MessageField.VALUE)
    key = AvroKeySerializer(options)(event, ctx)
    value = AvroSerializer(options)(event, ctx)
    assert key is not None and value is not None and key[0] == 0 and value[0] == 0
    decode_options = {"schema-registry": schema_registry.url}
    (decoded,) = AvroDeserializer(decode_options)(value, ctx)
    assert isinstance(decoded, RowChange)
    assert (decoded.op, decoded.after, decoded.commit_ts) == (Op.INSERT, row, 1 << 30)
    assert AvroKeyDeserializer(decode_options)(key, ctx) == {"id": 7}
    delete = RowChange(op=Op.DELETE, database="test", table="kitchen_sink", before=row, schema=schema)
    assert AvroSerializer(options)(delete, ctx) is None  # a tombstone
    assert AvroDeserializer(decode_options)(None, ctx) == []
    assert AvroKeySerializer(options)(None, ctx) is None
