"""debezium-avro: encode -> registry (Apicurio) -> decode gives the event back, and the same events as the JSON
form of the same change.

What the protocol cannot carry is normalized on the expected side exactly as for Debezium JSON (DECIMAL travels
as a float64; no table ID or schema version). Column types come from ``tidb_type`` in ``connect.parameters``
(the TiDB extension) or from the user's table schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core import canonical
from cdc_core.events import DDLEvent, DDLType, Event, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.expectations import same_change
from cdc_testing.expectations import through_debezium as expected
from cdc_testing.strategies import kitchen_sink_schema, row_changes, table_schemas

KITCHEN_SINK = kitchen_sink_schema()
CODEC = get_codec("debezium-avro")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _events(strategy: st.SearchStrategy[Any], count: int = 40) -> list[Any]:
    drawn: list[Any] = []

    @settings(max_examples=count, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


def _received(message: Message, offset: int) -> Message:
    return Message(key=message.key, value=message.value, topic=message.topic, partition=0, offset=offset)


def _decode_all(decoder: Any, messages: list[Message]) -> list[Event]:
    return [e for offset, m in enumerate(messages) for e in decoder.decode(_received(m, offset))]


def test_every_column_type_round_trips_with_the_tidb_extension(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": True})
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    events = _events(row_changes(KITCHEN_SINK))
    messages = [m for e in events for m in encoder.encode(e)]
    decoded = _decode_all(decoder, messages)
    assert [attrs.evolve(d, source=None) for d in decoded] == [expected(e) for e in events]
    assert all(m.topic == "default.test.kitchen_sink" for m in messages)
    # one key and one value schema, registered once however many rows went through
    posts = [path for method, path in schema_registry.requests() if method == "POST"]
    assert posts == [
        "/subjects/default.test.kitchen_sink-key/versions",
        "/subjects/default.test.kitchen_sink-value/versions",
    ]


def test_plain_schemas_with_a_user_table_schema(schema_registry: ApicurioRegistry, tmp_path: Path) -> None:
    """Without the extension the Avro schema says what Debezium's does (INT UNSIGNED is an int64, DECIMAL a
    double...); option table-schema gives the columns their types back."""
    path = tmp_path / "schemas.json"
    path.write_text(json.dumps(canonical.schema_to_json(KITCHEN_SINK)), encoding="utf-8")
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    decoder = CODEC.decoder({"schema-registry": schema_registry.url, "table-schema": str(path)})
    events = _events(row_changes(KITCHEN_SINK), 20)
    decoded = _decode_all(decoder, [m for e in events for m in encoder.encode(e)])
    assert [attrs.evolve(d, source=None) for d in decoded] == [expected(e) for e in events]


def test_old_value_off_leaves_updates_without_before(schema_registry: ApicurioRegistry) -> None:
    options = {"schema-registry": schema_registry.url, "enable-tidb-extension": True, "output-old-value": False}
    encoder = CODEC.encoder(options)
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    events = _events(row_changes(KITCHEN_SINK), 15)
    decoded = _decode_all(decoder, [m for e in events for m in encoder.encode(e)])
    assert [attrs.evolve(d, source=None) for d in decoded] == [expected(e, old_value=False) for e in events]


def test_random_tables(schema_registry: ApicurioRegistry) -> None:
    """Random table schemas, each under its own topic prefix: the registry refuses an incompatible next version of
    one subject (BACKWARD), as it would for a connector."""
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    for offset, event in enumerate(_events(table_schemas().flatmap(row_changes), 25)):
        options = {"schema-registry": schema_registry.url, "enable-tidb-extension": True, "topic.prefix": f"p{offset}"}
        (message,) = CODEC.encoder(options).encode(event)
        (decoded,) = decoder.decode(_received(message, offset))
        assert attrs.evolve(decoded, source=None) == expected(event)


def test_the_same_events_as_the_json_form(schema_registry: ApicurioRegistry) -> None:
    """Rows, a DDL and a watermark: the Avro form and the JSON form decode to the same canonical events."""
    events: list[Event] = [*_events(row_changes(KITCHEN_SINK), 20)]
    events.append(
        DDLEvent(
            ddl_type=DDLType.CREATE,
            sql="CREATE TABLE kitchen_sink (id INT PRIMARY KEY)",
            database=KITCHEN_SINK.database,
            table=KITCHEN_SINK.table,
            commit_ts=7 << 18,
            table_schema=KITCHEN_SINK,
        )
    )
    events.append(Watermark(ts=9 << 18))
    registry = {"schema-registry": schema_registry.url}
    json_codec = get_codec("debezium")
    json_encoder = json_codec.encoder({"enable-tidb-extension": True})
    avro_encoder = CODEC.encoder({**registry, "enable-tidb-extension": True})
    json_events = _decode_all(json_codec.decoder({}), [m for e in events for m in json_encoder.encode(e)])
    avro_events = _decode_all(CODEC.decoder(registry), [m for e in events for m in avro_encoder.encode(e)])
    assert len(avro_events) == len(events)
    assert [same_change(e) for e in avro_events] == [same_change(e) for e in json_events]
    assert isinstance(avro_events[-2], DDLEvent) and avro_events[-2].table_schema is not None
    assert avro_events[-1] == Watermark(ts=9 << 18, source=avro_events[-1].source)


def test_confluent_kafka_serde(schema_registry: ApicurioRegistry) -> None:
    """cdc_core.serde with debezium-avro: one Serializer instance as key and value serializer, the Deserializer
    gives the event back."""
    from confluent_kafka.serialization import MessageField, SerializationContext

    from cdc_core.serde import Deserializer, Serializer

    options = {"schema-registry": schema_registry.url, "enable-tidb-extension": True}
    (event,) = _events(row_changes(KITCHEN_SINK), 1)
    serializer = Serializer("debezium-avro", options)
    key = serializer(event, SerializationContext("orders", MessageField.KEY))
    value = serializer(event, SerializationContext("orders", MessageField.VALUE))
    assert key is not None and value is not None and key[0] == value[0] == 0  # Confluent's magic byte
    deserializer = Deserializer("debezium-avro", {"schema-registry": schema_registry.url})
    assert deserializer(key, SerializationContext("orders", MessageField.KEY)) == key
    (decoded,) = deserializer(value, SerializationContext("orders", MessageField.VALUE))
    assert attrs.evolve(decoded, source=None) == expected(event)
    assert deserializer(None, SerializationContext("orders", MessageField.VALUE)) == []  # a tombstone
