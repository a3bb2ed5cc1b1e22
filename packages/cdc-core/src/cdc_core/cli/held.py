"""Messages a decoder holds back until their table's schema arrives (TiCDC Simple), followed from where they were
read to the end of the run: each one still held then is a dead letter, its schema never came. ``tail`` also asks
which partitions hold one, so that it commits no offset past a message it has neither printed nor dead-lettered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import attrs

from cdc_core.cli.failed_messages import FailedMessages
from cdc_core.codec import Decoder, SchemaHoldingDecoder
from cdc_core.errors import SchemaError
from cdc_core.events import Bootstrap, DDLEvent, Event
from cdc_core.message import Message
from cdc_core.messagelines import format_line

Partition = tuple[str, int]


@attrs.frozen
class _Origin:
    message: Message  # kept alive, so its id is not reused while it is followed
    number: int | None  # its input line, where it came from a file
    line: str | None  # the input line as read (None: the message as a message line)


@attrs.define
class HeldMessages:
    """Follows the messages ``decoder`` may hold: call :meth:`note` after every decode, :meth:`drain` at the end."""

    decoder: Decoder
    # the decoder where it may hold rows, decided once: a runtime-checked protocol's isinstance costs about 10 us,
    # a fifth of a message's decode
    _holder: SchemaHoldingDecoder | None = attrs.field(init=False)
    _origins: dict[int, _Origin] = attrs.field(factory=dict, init=False)  # id(message) -> where it came from
    _partitions: Counter[Partition] = attrs.field(factory=Counter, init=False)

    @_holder.default
    def _holding_decoder(self) -> SchemaHoldingDecoder | None:
        return self.decoder if isinstance(self.decoder, SchemaHoldingDecoder) else None

    def note(self, message: Message, events: Sequence[Event], *, number: int | None = None, line: bytes = b"") -> None:
        """After ``message`` decoded to ``events``: follow it if it may be held, forget those a schema released."""
        holder = self._holder
        if holder is None:
            return
        if not events and not message.is_tombstone:
            # the line is kept as text only for a message that may be held, not for every one read
            self._origins[id(message)] = _Origin(message, number, line.decode("utf-8", errors="replace") or None)
            self._partitions[partition_of(message)] += 1
        # a schema arrives with a Bootstrap or DDL event, and only then are held rows released: asking the decoder
        # what it still holds after every message would cost the whole hold each time
        elif self._origins and any(isinstance(event, (Bootstrap, DDLEvent)) for event in events):
            self._keep({id(held) for held, _ in holder.unreleased()})

    def holds(self, topic: str, partition: int) -> bool:
        """Whether a message of this topic-partition is (or may be) held."""
        return self._partitions[(topic, partition)] > 0

    def drain(self, failures: FailedMessages, *, source: str = "", when: str = "by the end of the input") -> None:
        """Each message still held fails as a dead letter (skipped, written, or the run stops, by the policy); once,
        at the end of the run (the decoder keeps holding them)."""
        if self._holder is None:
            return
        for message, reason in self._holder.unreleased():
            origin = self._origins.get(id(message))
            number = origin.number if origin is not None else None
            where = f"{source}:{number}" if source and number is not None else message.coordinates
            line = origin.line if origin is not None and origin.line is not None else format_line(message)
            failures.failed(where, SchemaError(f"{reason} {when}"), line)
        # every message is handled now: those just failed, and any followed that the decoder did not hold after all
        # (a message of no event that a schema never had to release): tail may commit past all of them
        self._keep(set())

    def _keep(self, ids: set[int]) -> None:
        for key in [key for key in self._origins if key not in ids]:
            self._forget(key)

    def _forget(self, key: int) -> None:
        origin = self._origins.pop(key, None)
        if origin is not None:
            where = partition_of(origin.message)
            self._partitions[where] -= 1
            if not self._partitions[where]:
                del self._partitions[where]


def partition_of(message: Message) -> Partition:
    """The topic-partition a message was read from (a message line without one: ``("", 0)``)."""
    return (message.topic or "", message.partition or 0)
