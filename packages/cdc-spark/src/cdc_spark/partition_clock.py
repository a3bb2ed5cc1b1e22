"""Commit timestamps for changes whose message carries none: TiCDC Avro's tombstone deletes.

A tombstone holds only the deleted row's key, so its change has no commit ts and would sort before every
change of its key: the delete would lose to the insert it follows. TiCDC writes each partition in commit order,
so a change without a timestamp happened no earlier than the newest one before it in its partition; its
sequence takes that timestamp (ties are then broken by offset, which puts it after them). The clock is carried
across micro-batches by the job (:meth:`PartitionClock.snapshot`), so a tombstone that opens a batch is ordered
too. The reported ``_cdc_commit_ts`` stays null: only the ordering is inferred.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
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
        for event in events:
            if isinstance(event, Watermark):
                ts: int | None = event.ts
            elif isinstance(event, (RowChange, DDLEvent)):
                ts = event.commit_ts
            else:
                continue
            if ts is not None and ts > self._newest.get(where, -1):
                self._newest[where] = ts

    def order_ts(self, where: PartitionKey, commit_ts: int | None) -> int | None:
        """The commit ts to order a change by: its own, else the newest seen before it in its partition."""
        return commit_ts if commit_ts is not None else self._newest.get(where)

    def snapshot(self) -> dict[PartitionKey, int]:
        return dict(self._newest)


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
