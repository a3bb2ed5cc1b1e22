"""Commit timestamps for changes whose message carries none: TiCDC Avro's tombstone deletes.

A tombstone holds only the deleted row's key, so its change has no commit ts and would sort before every
change of its key: the delete would lose to the insert it follows. TiCDC writes each partition in commit order,
so a change without a timestamp happened no earlier than the newest one before it in its partition; its
sequence takes that timestamp (ties are then broken by offset, which puts it after them). The clock is carried
across micro-batches by the job (:meth:`PartitionClock.snapshot`), so a tombstone that opens a batch is ordered
too. The reported ``_cdc_commit_ts`` stays null: only the ordering is inferred.

After a restart TiCDC sends a partition's tail again, from its last checkpoint: the commit ts go back, and the
newest one before a tombstone there is the end of the first sending, newer than the changes of its key that follow
it (a row deleted and inserted again would stay deleted). So the order ts is no later than the next commit ts
after the tombstone in its partition, where the batch has one (:class:`NextTimed`): in commit order that is never
less than the newest before, and the rule is the first one. A watermark is no such bound: TiCDC broadcasts the
changefeed's resolved ts, which may lag the changes a partition already carries (it bounds what comes after it).
"""

from __future__ import annotations

import bisect
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from cdc_core.errors import StorageError
from cdc_core.events import DDLEvent, Event, RowChange, Watermark

PartitionKey = tuple[str | None, int | None]
CLOCK_FILE: Final = "partition-clock.json"


class PartitionClock:
    """The newest commit ts seen per topic-partition, read in offset order."""

    def __init__(self, seed: Mapping[PartitionKey, int] | None = None) -> None:
        self._newest: dict[PartitionKey, int] = dict(seed or {})

    def see(self, where: PartitionKey, events: Iterable[Event]) -> None:
        """Advance with the timestamps ``events`` (one message's) carry: changes, DDL and watermarks."""
        for ts in commit_times(events):
            if ts > self._newest.get(where, -1):
                self._newest[where] = ts

    def newest(self, where: PartitionKey) -> int | None:
        return self._newest.get(where)

    def order_ts(self, where: PartitionKey, commit_ts: int | None, next_ts: int | None = None) -> int | None:
        """The commit ts to order a change by: its own, else the newest seen before it in its partition, but no
        later than ``next_ts`` (the next commit ts after it there, :class:`NextTimed`). With nothing seen before, it
        stays unordered."""
        if commit_ts is not None:
            return commit_ts
        newest = self._newest.get(where)
        return newest if newest is None or next_ts is None else min(newest, next_ts)

    def snapshot(self) -> dict[PartitionKey, int]:
        return dict(self._newest)


def commit_times(events: Iterable[Event], watermarks: bool = True) -> list[int]:
    """The commit ts ``events`` (one message's) carry: changes', DDL's and (with ``watermarks``) watermarks'."""
    found: list[int] = []
    for event in events:
        if isinstance(event, Watermark):
            if watermarks:
                found.append(event.ts)
        elif isinstance(event, (RowChange, DDLEvent)) and event.commit_ts is not None:
            found.append(event.commit_ts)
    return found


Run = tuple[PartitionKey, int, int, int]  # topic-partition, first and last offset, the next commit ts after them


class NextTimed:
    """The runs of messages with changes without a commit ts whose next timed message in their partition is older
    than the clock before them (a tail sent again): each run's offsets and that next ts. Read in offset order with
    the batch's seeded clock; a run is only a few numbers, however many tombstones it spans."""

    def __init__(self, seed: Mapping[PartitionKey, int] | None = None) -> None:
        self._clock = PartitionClock(seed)
        self._waiting: dict[PartitionKey, tuple[int, int]] = {}
        self.runs: list[Run] = []

    def see(self, where: PartitionKey, offset: int, events: Sequence[Event]) -> None:
        """One message's ``events``, in its partition's offset order."""
        times = commit_times(events, watermarks=False)
        if times:
            waiting = self._waiting.pop(where, None)
            newest = self._clock.newest(where)
            if waiting is not None and newest is not None and min(times) < newest:
                self.runs.append((where, waiting[0], waiting[1], min(times)))
        untimed = any(isinstance(e, RowChange) and e.commit_ts is None for e in events)
        if untimed and self._clock.newest(where) is not None:
            first = self._waiting.get(where, (offset, offset))[0]
            self._waiting[where] = (first, offset)
        self._clock.see(where, events)


def next_times(runs: Iterable[Run]) -> Callable[[PartitionKey, int | None], int | None]:
    """The next commit ts of a message in one of ``runs`` (:class:`NextTimed`), by its partition and offset."""
    by_partition: dict[PartitionKey, list[tuple[int, int, int]]] = {}
    for where, first, last, ts in runs:
        by_partition.setdefault(where, []).append((first, last, ts))
    for found in by_partition.values():
        found.sort()

    def after(where: PartitionKey, offset: int | None) -> int | None:
        found = by_partition.get(where)
        if not found or offset is None:
            return None
        at = bisect.bisect_right(found, (offset, _LAST, _LAST)) - 1
        return found[at][2] if at >= 0 and found[at][0] <= offset <= found[at][1] else None

    return after


_LAST: Final = 2**63


def merge_clocks(*clocks: Mapping[PartitionKey, int]) -> dict[PartitionKey, int]:
    merged: dict[PartitionKey, int] = {}
    for clock in clocks:
        for where, ts in clock.items():
            merged[where] = max(ts, merged.get(where, ts))
    return merged


def load_clock(checkpoint: str) -> dict[PartitionKey, int]:
    """The clock the job saved in its checkpoint directory (empty on a first run)."""
    path = os.path.join(checkpoint, CLOCK_FILE)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            saved: dict[str, dict[str, int]] = json.load(handle)
        return {
            (topic, int(partition)): int(ts)
            for topic, partitions in saved.items()
            for partition, ts in partitions.items()
        }
    except (ValueError, TypeError, AttributeError) as exc:  # JSONDecodeError is a ValueError
        raise StorageError(f"checkpoint file {path}: not a partition clock ({exc})") from exc


def save_clock(checkpoint: str, clock: Mapping[PartitionKey, int]) -> None:
    """Replace the saved clock atomically (a crash leaves the old one, which a replayed batch advances again)."""
    saved: dict[str, dict[str, int]] = {}
    for (topic, partition), ts in clock.items():
        saved.setdefault(topic or "", {})[str(partition or 0)] = ts
    os.makedirs(checkpoint, exist_ok=True)
    path = os.path.join(checkpoint, CLOCK_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(saved, handle, sort_keys=True)
    os.replace(path + ".tmp", path)
