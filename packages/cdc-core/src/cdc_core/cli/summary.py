"""The line every ``decode``, ``encode``, ``convert`` and ``tail`` run ends with, on stderr (stdout is the data):
messages read, changes by table and by insert/update/delete, other events, dead letters and where they went, and
for ``tail`` the offsets reached, or "nothing new since ..." when the run read nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import attrs

from cdc_core.events import DDLEvent, DDLType, Event, RowChange

PartitionOffsets = Mapping[tuple[str, int], int]  # (topic, partition) -> the next offset to read


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 insert``, ``2 inserts``, ``3 batches`` (``nouns``: the plural where it is not ``noun`` + s)."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def changes_text(changes: Mapping[str, Mapping[str, int]]) -> str:
    """``shop.orders (10 inserts, 2 updates, 1 delete), shop.items (1 insert)``: tables in name order, their
    operations in the order insert, update, delete, truncate."""
    order = {"insert": 0, "update": 1, "delete": 2, "truncate": 3}
    parts = []
    for table in sorted(changes):
        ops = sorted(changes[table].items(), key=lambda item: (order.get(item[0], 9), item[0]))
        parts.append(f"{table} ({', '.join(plural(n, op) for op, n in ops if n)})")
    return ", ".join(parts)


def offsets_text(offsets: PartitionOffsets) -> str:
    """``orders[0]@45, orders[1]@12``: each topic-partition's next offset."""
    return ", ".join(f"{topic}[{partition}]@{offset}" for (topic, partition), offset in sorted(offsets.items()))


@attrs.define
class RunSummary:
    """What one run did; :meth:`count` as events go by, :meth:`line` at the end."""

    noun: str = "message"  # what the run reads: messages, or events for ``encode``
    read: int = 0
    changes: dict[str, Counter[str]] = attrs.field(factory=dict)
    other: int = 0  # DDL, watermarks, bootstraps, ... (events that change no row)
    offsets: dict[tuple[str, int], int] = attrs.field(factory=dict)

    def count(self, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, RowChange):
                self.changes.setdefault(f"{event.database}.{event.table}", Counter())[event.op.value] += 1
            elif isinstance(event, DDLEvent) and event.ddl_type is DDLType.TRUNCATE and event.table:
                self.changes.setdefault(f"{event.database}.{event.table}", Counter())["truncate"] += 1
            else:
                self.other += 1

    def line(self, command: str, *, dead_letters: int = 0, where: str = "", since: str | None = None) -> str:
        """The summary line; ``since``: where the source stood, said as "nothing new since ..." for an empty run."""
        if self.read == 0:
            return f"cdc {command}: nothing new since {since}" if since else f"cdc {command}: no {self.noun}s read"
        parts = [f"{plural(self.read, self.noun)} read"]
        parts.append(f"changes: {changes_text(self.changes)}" if self.changes else "no row changes")
        if self.other:
            parts.append(plural(self.other, "other event"))
        if where == "skipped":
            parts.append(f"{plural(dead_letters, 'message')} skipped")
        else:
            parts.append(plural(dead_letters, "dead letter") + (f" {where}" if dead_letters and where else ""))
        if self.offsets:
            parts.append(f"offsets reached: {offsets_text(self.offsets)}")
        return f"cdc {command}: " + "; ".join(parts)
