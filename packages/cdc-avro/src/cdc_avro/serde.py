"""confluent-kafka Serializer/Deserializer classes, so the codec drops into ``SerializingProducer`` and
``DeserializingConsumer``.

Produce with ``key=event, value=event``: the key serializer writes the Confluent-framed handle-key record,
the value serializer the value record (None for deletes: a tombstone). Consuming, `AvroDeserializer` returns
the events of one value (empty for a tombstone, which only the key identifies) and `AvroKeyDeserializer` the
handle-key columns of one key; `decode_record` combines both as the codec's decoder does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka.serialization import Deserializer, SerializationContext, Serializer

from cdc_avro.codec import CODEC
from cdc_core.events import Event, RowChange
from cdc_core.message import Message
from cdc_core.values import RowImage


class _EventSerializer(Serializer):
    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        self._encoder = CODEC.encoder(options)

    def _messages(self, event: Event | None) -> list[Message]:
        return [] if event is None else self._encoder.encode(event)


class AvroKeySerializer(_EventSerializer):
    """Event -> Confluent-framed key bytes (None for events without a key)."""

    def __call__(self, obj: Event | None, ctx: SerializationContext | None = None) -> bytes | None:
        messages = self._messages(obj)
        return messages[0].key if messages else None


class AvroSerializer(_EventSerializer):
    """Event -> Confluent-framed value bytes (None for a delete: TiCDC writes a tombstone)."""

    def __call__(self, obj: Event | None, ctx: SerializationContext | None = None) -> bytes | None:
        messages = self._messages(obj)
        return messages[0].value if messages else None


class _EventDeserializer(Deserializer):
    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        self._decoder = CODEC.decoder(options)


class AvroDeserializer(_EventDeserializer):
    """Value bytes -> the events they carry (a tombstone carries none without its key)."""

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> list[Event]:
        topic: Any = getattr(ctx, "topic", None)
        return self._decoder.decode(Message(value=value, topic=topic)) if value else []


class AvroKeyDeserializer(_EventDeserializer):
    """Key bytes -> the handle-key columns (decoded as the image of a delete)."""

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> RowImage | None:
        if not value:
            return None
        topic: Any = getattr(ctx, "topic", None)
        (event,) = self._decoder.decode(Message(value=None, key=value, topic=topic))
        return event.before if isinstance(event, RowChange) else None
