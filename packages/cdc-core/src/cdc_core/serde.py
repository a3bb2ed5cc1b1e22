"""confluent-kafka serializers for every installed protocol: the codecs in ``SerializingProducer`` and
``DeserializingConsumer`` (needs the ``kafka`` extra).

Register ONE instance as both key and value (de)serializer. confluent-kafka calls the key (de)serializer
first and then the value one with the same context object, so the instance sees the whole record:

- `Serializer` takes an event (``produce(topic, key=event, value=event)``) and returns the key, then the value,
  of the message the protocol writes for it (Simple and Canal-JSON have no key: None). An Avro delete is a
  tombstone (value None). An event written to every partition (DDL, watermarks) gives the same bytes for each
  copy: it is produced once, where the producer's partitioner puts it (TiCDC's partition choice is not applied;
  ``cdc encode`` applies it). An event the protocol writes as nothing (Debezium without the TiDB extension and a
  watermark, any BOOTSTRAP but Simple's) or as several different messages (Simple's BOOTSTRAP before a
  table's first row) is a `SerializationError` naming the way out, never a record silently left out.
- `Deserializer` returns, for the value, the list of events of the record (empty for a Debezium tombstone);
  the key is returned unchanged (bytes), but an Avro tombstone's delete is decoded from it.

Failures are confluent-kafka's `SerializationError` (which the producer and consumer wrap once more) with the
project's typed error (`cdc_core.errors.DecodeError`, `EncodeError`, ...) as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_core.codec import Codec, Decoder, Encoder
from cdc_core.errors import CdcError, EncodeError
from cdc_core.events import Bootstrap, DDLEvent, Event, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec

try:
    from confluent_kafka.serialization import Deserializer as _Deserializer
    from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
    from confluent_kafka.serialization import Serializer as _Serializer
except ImportError as exc:  # pragma: no cover - the kafka extra is installed wherever this module is used
    raise ImportError("cdc_core.serde needs confluent-kafka: pip install 'cdc-core[kafka]'") from exc


def _is_key(ctx: SerializationContext | None) -> bool:
    return ctx is not None and ctx.field == MessageField.KEY


class Serializer(_Serializer):
    """Events to the key and value bytes ``protocol`` writes for them; ``options`` as the codec's encoder takes."""

    def __init__(self, protocol: str, options: Mapping[str, object] | None = None) -> None:
        self.codec: Codec = get_codec(protocol)
        self._encoder: Encoder = self.codec.encoder(options)
        self._last: tuple[Event, Message] | None = None

    def __call__(self, obj: Event | None, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if not isinstance(obj, RowChange | DDLEvent | Watermark | Bootstrap):
            raise SerializationError(f"{self.codec.name}: expected a cdc_core event, got {type(obj).__name__}")
        try:
            message = self._message(obj)
        except CdcError as exc:
            raise SerializationError(str(exc)) from exc
        return message.key if _is_key(ctx) else message.value

    def _message(self, event: Event) -> Message:
        # The key call encodes; the value call of the same produce() reuses it (encoders keep state).
        if self._last is not None and self._last[0] is event:
            return self._last[1]
        messages = self._encoder.encode(event)
        kind = type(event).__name__
        if not messages:
            raise EncodeError(self.codec.name, f"the protocol writes no message for this {kind}: do not produce it")
        contents = {(m.key, m.value) for m in messages}
        if len(contents) > 1:
            raise EncodeError(
                self.codec.name,
                f"the protocol writes {len(messages)} different messages for this {kind} and one produce() "
                "sends one record: use the codec's encoder with a plain Producer (cdc encode), or options that "
                "write one message per event (simple: send-bootstrap-interval-in-sec=0 and "
                "send-bootstrap-in-msg-count=0, then produce a Bootstrap or DDL event before a table's rows)",
            )
        self._last = (event, messages[0])
        return messages[0]


class Deserializer(_Deserializer):
    """The events of one record as ``protocol`` decodes them; ``options`` as the codec's decoder takes.

    The decoder is stateful (Simple caches schemas and may hold rows until one arrives): use one instance per
    consumer, and expect a held row in the list of a later record.
    """

    def __init__(self, protocol: str, options: Mapping[str, object] | None = None) -> None:
        self.codec: Codec = get_codec(protocol)
        self._decoder: Decoder = self.codec.decoder(options)
        self._key: tuple[SerializationContext, bytes | None] | None = None

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if _is_key(ctx):
            assert ctx is not None
            self._key = (ctx, data)  # the value call of the same record follows with this context
            return data
        key = self._key[1] if self._key is not None and self._key[0] is ctx else None
        self._key = None
        if not data and not key and self.codec.keyed_deletes and ctx is not None:
            raise SerializationError(
                f"{self.codec.name}: topic {ctx.topic}: a tombstone's delete is in its key, which this "
                "Deserializer did not see: register the same instance as key.deserializer too"
            )
        topic = ctx.topic if ctx is not None else None
        headers = ctx.headers if ctx is not None else None
        try:
            events: list[Event] = self._decoder.decode(Message(value=data, key=key, topic=topic, headers=headers))
        except CdcError as exc:
            raise SerializationError(str(exc)) from exc
        return events
