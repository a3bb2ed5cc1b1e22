"""Sending a :class:`~cdc_core.message.Message` with a confluent-kafka ``Producer`` (``cdc produce``, the tests'
broker helpers): its key, value, headers, and its partition and timestamp when it has them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdc_core.message import Message


def send(producer: Any, topic: str, message: Message, on_delivery: Callable[[Any, Any], None]) -> None:
    """Queue ``message`` for ``topic``, waiting for room while the producer's queue is full; what librdkafka
    refuses at once (an unknown partition of a known topic, a message too large) raises as it does."""
    extra: dict[str, Any] = {}
    if message.partition is not None:
        extra["partition"] = message.partition
    if message.timestamp is not None:
        extra["timestamp"] = message.timestamp
    while True:
        try:
            producer.produce(
                topic,
                value=message.value,
                key=message.key,
                headers=list(message.headers) or None,
                on_delivery=on_delivery,
                **extra,
            )
            break
        except BufferError:  # the local queue is full: let deliveries drain it
            producer.poll(0.1)
    producer.poll(0)


__all__ = ["send"]
