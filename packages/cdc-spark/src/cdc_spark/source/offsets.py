"""Offset specifications as Spark's Kafka source spells them, and the offset JSON of the streaming checkpoint.

``startingOffsets`` / ``endingOffsets``: ``earliest``, ``latest``, or JSON ``{"topic": {"0": 23, "1": -2}}`` where
-2 means earliest and -1 latest (partitions left out take the default). ``startingTimestamp`` (epoch ms) starts
every partition at the first message at or after that time. A checkpoint offset is ``{"topic": {"0": next}}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from cdc_core.errors import ConfigError

EARLIEST: Final = -2
LATEST: Final = -1

TopicPartition = tuple[str, int]
Positions = dict[TopicPartition, int]


def parse_spec(text: str | None, *, default: int, name: str) -> tuple[int, Positions]:
    """(default position, explicit positions) of an offsets option."""
    if text is None or text.strip() == "":
        return default, {}
    lowered = text.strip().lower()
    if lowered == "earliest":
        return EARLIEST, {}
    if lowered == "latest":
        return LATEST, {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"option {name}: expected earliest, latest or JSON, got {text!r}") from exc
    return default, from_json(document, name=name)


def from_json(document: object, *, name: str) -> Positions:
    if not isinstance(document, Mapping):
        raise ConfigError(f"option {name}: expected a JSON object of topics")
    positions: Positions = {}
    for topic, partitions in document.items():
        if not isinstance(partitions, Mapping):
            raise ConfigError(f"option {name}: topic {topic!r} must map partitions to offsets")
        for partition, offset in partitions.items():
            try:
                positions[(str(topic), int(partition))] = int(offset)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"option {name}: {topic}[{partition}] = {offset!r} is not an offset") from exc
    return positions


def to_json(positions: Positions) -> dict[str, dict[str, int]]:
    """The checkpoint form: topics and partitions sorted so equal offsets serialize equally."""
    document: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(positions.items()):
        document.setdefault(topic, {})[str(partition)] = offset
    return document
