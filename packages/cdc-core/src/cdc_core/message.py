"""The Kafka-shaped record every codec reads and writes."""

from __future__ import annotations

from typing import Any

import attrs


def _headers(value: object) -> tuple[tuple[str, bytes | None], ...]:
    if value is None:
        return ()
    items = value.items() if isinstance(value, dict) else value
    return tuple((str(k), v) for k, v in items)  # type: ignore[attr-defined]


@attrs.frozen(kw_only=True)
class Message:
    """One Kafka record. Coordinates are None when unknown (e.g. a message an encoder has just built).

    ``timestamp`` is the record timestamp in epoch milliseconds. Empty and null keys mean the same to
    decoders (TiCDC's default producer turns a missing key into an empty one).
    """

    value: bytes | None
    key: bytes | None = None
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp: int | None = None
    headers: tuple[tuple[str, bytes | None], ...] = attrs.field(default=(), converter=_headers)

    @classmethod
    def from_kafka(cls, record: Any) -> Message:
        """The `Message` of a confluent-kafka ``Message`` (as ``Consumer.poll`` returns it)."""
        return cls(
            value=record.value(),
            key=record.key(),
            topic=record.topic(),
            partition=record.partition(),
            offset=record.offset(),
            timestamp=record.timestamp()[1],
            headers=tuple(record.headers() or ()),
        )

    @property
    def is_tombstone(self) -> bool:
        return self.value is None or len(self.value) == 0

    @property
    def coordinates(self) -> str:
        partition = "?" if self.partition is None else self.partition
        offset = "?" if self.offset is None else self.offset
        return f"{self.topic or '?'}[{partition}]@{offset}"
