"""The message each event of a codec came in: its coordinates, its payload and its place among that message's rows.

A stateful codec can give an event out with a later message than its own. Simple holds a row whose schema version
has not arrived yet and gives it out with the BOOTSTRAP or DDL that brings the schema, the event's ``source``
still naming the row's own message. The contract's coordinates (``_cdc_topic``, ``_cdc_partition``,
``_cdc_offset``, ``_cdc_sequence``) and a dead letter's key and value are the row's own message's, as the JVM
plan, which reads every message where it is, gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from cdc_core.events import Event
from cdc_core.message import Message

Coordinates = tuple[str | None, int | None, int | None]  # topic, partition, offset


def _coordinates(message: Message) -> Coordinates:
    return (message.topic, message.partition, message.offset)


@attrs.define
class Origins:
    """One task's messages that gave no event when read from a decoder that holds rows back, until a later message
    gives their events out. Only such a decoder's are kept: another's message without events (a Debezium
    tombstone after its delete, a Canal statement) is never given out later, and keeping each to the task's end
    would hold them all in memory."""

    _waiting: dict[Coordinates, Message] = attrs.field(factory=dict)

    def placed(self, message: Message, events: Sequence[Event], *, holding: bool) -> list[tuple[Message, int]]:
        """Each of ``events`` (what the codec gave for ``message``) with the message it came in and its place among
        that message's events. ``holding``: whether ``message``'s decoder holds rows back
        (:class:`~cdc_core.codec.SchemaHoldingDecoder`)."""
        if not holding:
            return [(message, place) for place in range(len(events))]
        if not events:
            self._waiting[_coordinates(message)] = message
            return []
        here = _coordinates(message)
        places: dict[Coordinates, int] = {}
        found: list[tuple[Message, int]] = []
        for event in events:
            source = getattr(event, "source", None)
            where = here if source is None else (source.topic, source.partition, source.offset)
            origin = message if where == here else self._waiting.get(where, message)
            key = _coordinates(origin)
            places[key] = places.get(key, -1) + 1
            found.append((origin, places[key]))
        for key in places:
            if key != here:
                self._waiting.pop(key, None)
        return found


__all__ = ["Coordinates", "Origins"]
