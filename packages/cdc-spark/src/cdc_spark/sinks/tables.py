"""The sink every table format shares: target tables equal to their source tables, and the state beside them.

A batch's SCD1 tables are written together (:mod:`cdc_spark.sinks.scd1_batch`): one commit per target, and one
to the sink's key state whatever the number of tables. An SCD2 table keeps its versions in a state table of its
own and is written on its own (:class:`BatchWrite`):

1. read both tables' metadata (no Spark job): a table whose last committed batch for this app is at or past
   the batch's id already holds it; if both do, the batch is a replay and nothing runs;
2. count the batch and find its truncate (one small aggregate), create the tables or evolve their schemas;
3. resolve the batch against the state table and cache the result once;
4. MERGE into the target, marked with the batch (Delta app transaction, Iceberg snapshot property), then
   MERGE into the state table, marked the same way.

The target is written first: both MERGEs are computed from the state as it was before the batch, so a crash
between them is repaired by the replay, which skips the target (marked) and writes the state from the same,
unchanged inputs. The state never runs ahead of its target.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from cdc_core.errors import StorageError
from cdc_spark.expression_mode import expressions_for
from cdc_spark.session_conf import session_conf
from cdc_spark.sinks import BatchInfo, MergePlan
from cdc_spark.sinks.batch_write import BatchWrite, CommitWatch, TableFormat
from cdc_spark.sinks.commits import TableInfo
from cdc_spark.sinks.scd1_batch import REPLACE_FACTOR, REPLACE_ROWS, Scd1Batch
from cdc_spark.table_workers import bound_to, own_session, run_each

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@attrs.define
class TableSink:
    """Target tables equal to their source tables, with their state beside them (see the module doc)."""

    format: TableFormat
    clock: Callable[[], dt.datetime] = _utc_now  # tests pin tombstone ages with it
    # told of each commit a batch is about to make and has made (where the fault tests kill the job)
    commits: CommitWatch | None = None
    # tables whose SCD1 state from an earlier version has been looked for (cdc_spark.sinks.state_migration)
    checked: set[str] = attrs.field(factory=set)
    # when a batch replaces its tables' key state partitions instead of MERGEing (cdc_spark.sinks.scd1_batch)
    replace_rows: int = REPLACE_ROWS
    replace_factor: int = REPLACE_FACTOR

    @property
    def spark(self) -> SparkSession:
        return self.format.spark

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None:
        name = self.format.target(table)
        return spark.table(name) if self.format.describe(name, None) is not None else None

    def live(self, spark: SparkSession, table: str) -> DataFrame:
        stored = self.read_target(spark, table)
        if stored is None:
            raise StorageError(f"no target table for {table} ({self.format.target(table)})")
        return stored

    def tables(self) -> list[str]:
        return self.format.tables()

    def write_dead_letters(self, letters: DataFrame, batch: BatchInfo) -> None:
        fmt = self._on(letters.sparkSession)
        fmt.append(fmt.dead_letters(), letters, batch)

    def _on(self, session: SparkSession) -> TableFormat:
        """The format running its statements in ``session``: a ``foreachBatch`` frame has its own session,
        whose temporary views and settings the statements must see."""
        if session is self.format.spark:
            return self.format
        bound: TableFormat = attrs.evolve(self.format, spark=session)  # type: ignore[misc]
        return bound

    def _writer(self, session: SparkSession) -> BatchWrite:
        return BatchWrite(self._on(session), self.clock)

    def write(self, plan: MergePlan, batch: BatchInfo | None) -> bool:
        """Apply one batch of one table; False when it had been applied before (a replay)."""
        return self.write_batch([plan], batch)[plan.spec.table]

    def write_batch(self, plans: Sequence[MergePlan], batch: BatchInfo | None, parallelism: int = 1) -> dict[str, bool]:
        """Apply one batch of every table in ``plans``, ``parallelism`` tables at once; per table, False when the
        batch had been applied to it before (a replay). Each plan's ``summary`` is set once counted."""
        written: dict[str, bool] = {}
        scd1 = [plan for plan in plans if plan.spec.scd == 1]
        if scd1:
            session = scd1[0].changes.sparkSession
            writer = Scd1Batch(
                self._on(session),
                self._writer,
                self.clock,
                parallelism=parallelism,
                replace_rows=self.replace_rows,
                replace_factor=self.replace_factor,
                commits=self.commits,
                checked=self.checked,
            )
            written.update(writer.run(scd1, batch))
        tasks = [
            (plan.spec.table, functools.partial(self._history, plan, batch, parallelism > 1))
            for plan in plans
            if plan.spec.scd == 2
        ]
        written.update(run_each(tasks, parallelism))
        return written

    def _history(self, plan: MergePlan, batch: BatchInfo | None, parallel: bool) -> bool:
        session = own_session(plan.changes.sparkSession) if parallel else plan.changes.sparkSession
        changes = bound_to(plan.changes, session)
        if self.commits is not None:
            self.commits.before(plan.spec.table)
        with expressions_for(session, None):  # its history can be of any size
            written = self._writer(session).run(attrs.evolve(plan, changes=changes), batch, plan)
        if self.commits is not None:
            self.commits.after(plan.spec.table)
        return written


__all__ = ["BatchWrite", "CommitWatch", "TableFormat", "TableInfo", "TableSink", "session_conf"]
