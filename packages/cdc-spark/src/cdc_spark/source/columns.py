"""The row shape both sources produce: the columns of Spark's built-in Kafka source, in its order."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Final

from cdc_core.message import Message

KAFKA_COLUMNS: Final = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int,"
    " headers array<struct<key:string,value:binary>>"
)

# Kafka's timestamp types as Spark's Kafka source numbers them.
CREATE_TIME: Final = 0
LOG_APPEND_TIME: Final = 1

Row = tuple[bytes | None, bytes | None, str, int, int, dt.datetime | None, int, list[tuple[str, bytes | None]] | None]


def to_timestamp(epoch_ms: int | None) -> dt.datetime | None:
    if epoch_ms is None or epoch_ms < 0:
        return None
    return dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC)


def message_row(message: Message, *, topic: str, partition: int, offset: int) -> Row:
    headers = [(name, value) for name, value in message.headers] or None
    return (
        message.key,
        message.value,
        topic,
        partition,
        offset,
        to_timestamp(message.timestamp),
        CREATE_TIME,
        headers,
    )


def lowered(options: Mapping[str, str]) -> dict[str, str]:
    """Spark hands data sources case-insensitive options; look every name up in lower case."""
    return {name.lower(): value for name, value in options.items()}
