"""confluent-kafka Serializer/Deserializer classes, so the codec drops into ``SerializingProducer`` and
``DeserializingConsumer`` (needs the ``kafka`` extra: confluent-kafka).

Produce with ``key=event, value=event``: the key serializer writes the Debezium key document, the value
serializer the value. Consuming, the value deserializer returns the list of events of one record (empty for
tombstones, heartbeats and transaction markers); it sees no key, so rows come back without key columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka.serialization import Deserializer, SerializationContext, Serializer

from cdc_core.events import Event
from cdc_core.message import Message
from cdc_debezium.codec import CODEC


class _EventSerializer(Serializer):
    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        self._encoder = CODEC.encoder(options)

    def _messages(self, event: Event | None) -> list[Message]:
        return [] if event is None else self._encoder.encode(event)


class DebeziumKeySerializer(_EventSerializer):
    """Event -> Debezium key bytes (the key of the event's first message)."""

    def __call__(self, obj: Event | None, ctx: SerializationContext | None = None) -> bytes | None:
        messages = self._messages(obj)
        return messages[0].key if messages else None


class DebeziumSerializer(_EventSerializer):
    """Event -> Debezium value bytes (the value of the event's first message)."""

    def __call__(self, obj: Event | None, ctx: SerializationContext | None = None) -> bytes | None:
        messages = self._messages(obj)
        return messages[0].value if messages else None


class DebeziumDeserializer(Deserializer):
    """Debezium value bytes -> the events they carry."""

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        self._decoder = CODEC.decoder(options)

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> list[Event]:
        topic: Any = getattr(ctx, "topic", None)
        return self._decoder.decode(Message(value=value, topic=topic))
