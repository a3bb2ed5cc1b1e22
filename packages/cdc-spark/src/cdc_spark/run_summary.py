"""The line a ``cdc apply`` run ends with, made from its batch reports (:class:`cdc_spark.job.BatchReport`, the one
source of every report of a run): messages read, changes by table and operation, dead letters and where they went,
offsets reached; "nothing new since ..." with where the checkpoint stands when no batch ran."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from cdc_core.cli.summary import changes_text, offsets_text, plural

if TYPE_CHECKING:
    from cdc_spark.job import BatchReport


def _flat(offsets: Mapping[str, Mapping[str, int]]) -> dict[tuple[str, int], int]:
    return {(topic, int(partition)): offset for topic, spans in offsets.items() for partition, offset in spans.items()}


def summary_line(reports: Sequence[BatchReport], since: str) -> str:
    """One line for the whole run; ``since``: where the checkpoint stood, for a run that found nothing new."""
    if not any(report.messages for report in reports):
        return f"cdc apply: nothing new since {since}"
    changes: dict[str, Counter[str]] = {}
    offsets: dict[tuple[str, int], int] = {}
    dead = 0
    places: list[str] = []
    ddl: list[str] = []  # what the DDL policy did, in batch order
    for report in reports:
        for table, ops in report.changes.items():
            changes.setdefault(table, Counter()).update(ops)
        for table, count in report.applied.items():  # a sink that did not count operations: the changes alone
            if table not in report.changes:
                changes.setdefault(table, Counter())["change"] += count
        offsets.update(_flat(report.offsets))
        ddl += report.ddl
        dead += report.dead_letters
        if report.dead_letter_table and report.dead_letter_table not in places:
            places.append(report.dead_letter_table)
    messages = sum(report.messages for report in reports)
    parts = [f"{plural(len(reports), 'batch', 'batches')}, {plural(messages, 'message')} read"]
    parts.append(f"changes: {changes_text(changes)}" if changes else "no table changes")
    parts.append(plural(dead, "dead letter") + (f" in {', '.join(places)}" if dead and places else ""))
    if ddl:
        parts.append(f"ddl: {'; '.join(ddl)}")
    if offsets:
        parts.append(f"offsets reached: {offsets_text(offsets)}")
    return "cdc apply: " + "; ".join(parts)


def _numbered(folder: str) -> list[int]:
    try:
        return sorted(int(name) for name in os.listdir(folder) if name.isdigit())
    except OSError:
        return []


def _kafka_offsets(lines: Iterable[str]) -> dict[tuple[str, int], int]:
    """A committed batch's Kafka offsets (a file source's offsets count files: they say nothing here)."""
    found: dict[tuple[str, int], int] = {}
    for line in lines:
        try:
            offsets = json.loads(line)
        except ValueError:
            continue
        if isinstance(offsets, dict) and offsets and all(isinstance(v, dict) for v in offsets.values()):
            found.update(_flat(offsets))
    return found


@attrs.frozen
class Commit:
    """The last micro-batch a checkpoint committed: its id, when, and the Kafka offsets it reached."""

    batch_id: int
    at: dt.datetime
    offsets: Mapping[tuple[str, int], int]


def last_commit(checkpoint: str) -> Commit | None:
    """The checkpoint's last committed batch (None before the first)."""
    stream = os.path.join(checkpoint, "stream")
    committed = _numbered(os.path.join(stream, "commits"))
    if not committed:
        return None
    last = committed[-1]
    at = dt.datetime.fromtimestamp(os.path.getmtime(os.path.join(stream, "commits", str(last))), tz=dt.UTC)
    try:
        with open(os.path.join(stream, "offsets", str(last)), encoding="utf-8") as log:
            lines = log.read().splitlines()[2:]  # a version line, the batch's metadata, then one line per source
    except OSError:
        lines = []
    return Commit(batch_id=last, at=at, offsets=_kafka_offsets(lines))


def checkpoint_position(checkpoint: str) -> str:
    """Where a checkpoint stands, in words: its last committed batch, when, and its Kafka offsets."""
    commit = last_commit(checkpoint)
    if commit is None:
        return "the start (no batch committed in the checkpoint yet)"
    offsets = f" (offsets {offsets_text(commit.offsets)})" if commit.offsets else ""
    return f"batch {commit.batch_id} of {commit.at:%Y-%m-%d %H:%M:%S} UTC{offsets}"


__all__ = ["Commit", "checkpoint_position", "last_commit", "summary_line"]
