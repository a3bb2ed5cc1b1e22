"""Global-watermark gating for TiCDC protocols: apply only what every partition has resolved.

TiCDC writes a watermark (resolved ts) to every partition: all changes with ``commit_ts <= watermark`` on that
partition have been sent. A transaction's rows may be spread over partitions, so a consumer that applies what it
has read shows half-applied transactions. Like TiCDC's own Kafka consumer, :class:`WatermarkGate` applies only
changes at or below the *global* watermark (the minimum over all partitions) and holds the rest until the
watermark passes them. Held changes and per-partition watermarks live in the job's checkpoint directory, one
snapshot per batch id, so a batch replayed after a crash starts from exactly the state its first attempt saw.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.errors import StorageError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

STATE_FILE: Final = "watermarks.json"


@attrs.frozen
class Gated:
    """One batch after gating: the changes to apply now per table, and the global watermark (None: unknown)."""

    ready: dict[str, DataFrame]
    watermark: int | None
    held: dict[str, int]  # rows held back per table (for progress output)


def global_watermark(partitions: Mapping[int, int], expected: Iterable[int] | None = None) -> int | None:
    """The minimum watermark over partitions; None while any expected partition has not reported one."""
    known = dict(partitions)
    wanted = set(known) if expected is None else set(expected)
    if not wanted or any(p not in known for p in wanted):
        return None
    return min(known[p] for p in wanted)


@attrs.define
class WatermarkGate:
    """Holds changes above the global watermark across batches; state under ``state_dir``."""

    spark: SparkSession
    state_dir: str
    partitions: tuple[int, ...] | None = None  # all partitions of the topic; default: those seen so far
    _watermarks: dict[int, int] = attrs.field(factory=dict, init=False)
    _pending: dict[str, DataFrame] = attrs.field(factory=dict, init=False)

    def _batch_dir(self, batch_id: int) -> str:
        return os.path.join(self.state_dir, f"batch={batch_id}")

    def _previous(self, batch_id: int) -> str | None:
        """The newest complete snapshot of a batch before ``batch_id`` (later ones are from a crashed run)."""
        if not os.path.isdir(self.state_dir):
            return None
        ids = []
        for name in os.listdir(self.state_dir):
            if name.startswith("batch=") and os.path.exists(os.path.join(self.state_dir, name, STATE_FILE)):
                number = int(name.removeprefix("batch="))
                if number < batch_id:
                    ids.append(number)
        return self._batch_dir(max(ids)) if ids else None

    def gate(self, batch_id: int, changes: Mapping[str, DataFrame], control: DataFrame | None) -> Gated:
        """Split this batch's changes (plus those held before) into ready and held at the global watermark."""
        from pyspark.sql import functions as F

        previous = self._previous(batch_id)
        held_tables: list[str] = []
        watermarks: dict[int, int] = {}
        if previous is not None:
            with open(os.path.join(previous, STATE_FILE), encoding="utf-8") as handle:
                saved = json.load(handle)
            watermarks = {int(p): int(ts) for p, ts in saved["watermarks"].items()}
            held_tables = list(saved["held"])
        if control is not None:
            rows = (
                control.where(F.col("kind") == "watermark")
                .groupBy("partition")
                .agg(F.max("commit_ts").alias("ts"))
                .collect()
            )
            for row in rows:
                if row["partition"] is not None and row["ts"] is not None:
                    partition, ts = int(row["partition"]), int(row["ts"])
                    watermarks[partition] = max(ts, watermarks.get(partition, ts))
        watermark = global_watermark(watermarks, self.partitions)
        merged: dict[str, DataFrame] = dict(changes)
        for table in held_tables:
            stored = self.spark.read.parquet(_held_path(previous or "", table))
            merged[table] = merged[table].unionByName(stored, allowMissingColumns=True) if table in merged else stored
        ready: dict[str, DataFrame] = {}
        self._pending = {}
        counts: dict[str, int] = {}
        for table, frame in merged.items():
            if watermark is None:
                due = F.col("_cdc_commit_ts").isNull()
            else:
                due = F.col("_cdc_commit_ts").isNull() | (F.col("_cdc_commit_ts") <= F.lit(watermark))
            ready[table] = frame.where(due)
            later = frame.where(~due)
            self._pending[table] = later
        self._watermarks = watermarks
        for table, later in self._pending.items():
            counts[table] = later.count()
        return Gated(ready=ready, watermark=watermark, held=counts)

    def commit(self, batch_id: int) -> None:
        """Save the held changes and watermarks of ``batch_id`` (after its tables were written)."""
        target = self._batch_dir(batch_id)
        shutil.rmtree(target, ignore_errors=True)
        held = []
        try:
            for table, later in self._pending.items():
                if later.isEmpty():
                    continue
                later.write.mode("overwrite").parquet(os.path.join(target, "held", _safe(table)))
                held.append(table)
            os.makedirs(target, exist_ok=True)
            state = {"watermarks": {str(p): ts for p, ts in self._watermarks.items()}, "held": held}
            with open(os.path.join(target, STATE_FILE + ".tmp"), "w", encoding="utf-8") as handle:
                json.dump(state, handle)
            os.replace(os.path.join(target, STATE_FILE + ".tmp"), os.path.join(target, STATE_FILE))
        except OSError as exc:
            raise StorageError(f"cannot save watermark state for batch {batch_id} in {target}: {exc}") from exc
        for name in os.listdir(self.state_dir):  # keep this snapshot and the one before it
            if name.startswith("batch=") and int(name.removeprefix("batch=")) < batch_id - 1:
                shutil.rmtree(os.path.join(self.state_dir, name), ignore_errors=True)


def _kept(c: str) -> bool:
    """A character a held-changes directory name keeps as it is."""
    return c.isalnum() or c in "._-"


def _safe(table: str) -> str:
    """A directory name for ``table``, one per table: letters, digits, ``.``, ``_`` and ``-`` as they are, any other
    character as ``~`` and its UTF-8 bytes in hex (``db.t 1`` -> ``db.t~201``, never the same as ``db.t_1``)."""
    return "".join(c if _kept(c) else "".join(f"~{b:02X}" for b in c.encode()) for c in table)


def _held_path(snapshot: str, table: str) -> str:
    """Where a snapshot keeps ``table``'s held changes; a checkpoint written before names were made unique used
    ``_`` for every other character."""
    path = os.path.join(snapshot, "held", _safe(table))
    legacy = os.path.join(snapshot, "held", "".join(c if _kept(c) else "_" for c in table))
    return legacy if not os.path.exists(path) and os.path.exists(legacy) else path
