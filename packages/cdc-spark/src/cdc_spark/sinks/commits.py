"""The exactly-once bookkeeping: which batches a table already holds, what a batch still has to write, when
tombstones are due for a purge. Decisions only; the reads and writes are the table formats' (no Spark here).

Every write of a batch is marked with the job's app id and the batch id (a Delta app transaction, Iceberg
snapshot summary properties). Spark runs a micro-batch again with the same id after a crash; a table whose last
batch for the app is at or past that id holds it already. A batch writes its target first and its state second,
so a crash between the two leaves a replay with only the state to write (see :mod:`cdc_spark.sinks.tables`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from cdc_spark.merge.columns import PURGED_AT

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from cdc_spark.sinks import BatchInfo


@attrs.frozen(kw_only=True)
class TableInfo:
    """A stored table's metadata, read without a Spark job."""

    schema: StructType
    properties: Mapping[str, str]
    last_batch: int | None  # the newest batch id committed by the app asked about
    created: dt.datetime | None = None
    # the format's handle on the version read (a Delta snapshot, an Iceberg table): later metadata reads of the
    # same version use it instead of loading the table again
    loaded: Any = attrs.field(default=None, eq=False, repr=False)


def batch_committed(info: TableInfo | None, batch: BatchInfo | None) -> bool:
    """Whether a table holds ``batch``: its last batch for the app is at or past it. An unmarked write
    (``batch`` None, a library call outside a streaming job) is never a replay."""
    return batch is not None and info is not None and info.last_batch is not None and info.last_batch >= batch.batch_id


@attrs.frozen
class Pending:
    """Which of a table's two tables a batch still has to write."""

    target: bool
    state: bool

    def __bool__(self) -> bool:
        return self.target or self.state


def pending(target: TableInfo | None, state: TableInfo | None, batch: BatchInfo | None) -> Pending:
    """What ``batch`` still writes; nothing when both tables hold it (a replay)."""
    return Pending(target=not batch_committed(target, batch), state=not batch_committed(state, batch))


def last_marked_batch(summaries: Iterable[Mapping[str, str]], app_id: str | None, app: str, batch: str) -> int | None:
    """The batch id of the newest commit ``app_id`` marked, from commit summaries given newest first, whose marks
    are under the keys ``app`` and ``batch``; None for no app (nothing is read) or when it marked none."""
    if app_id is None:
        return None
    for summary in summaries:
        marked = summary.get(batch)
        if summary.get(app) == app_id and marked is not None:
            return int(marked)
    return None


def purge_due(retention: dt.timedelta | None, info: TableInfo | None, now: dt.datetime) -> bool:
    """Whether a state table's expired tombstones are deleted now: at most ten times per retention period,
    counted from the last purge (else from the table's creation; always when neither is known)."""
    if retention is None or info is None:
        return False
    last = info.properties.get(PURGED_AT)
    since = dt.datetime.fromisoformat(last) if last is not None else info.created
    return since is None or now - since >= retention / 10


__all__ = ["Pending", "TableInfo", "batch_committed", "last_marked_batch", "pending", "purge_due"]
