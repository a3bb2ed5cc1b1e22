"""Apply change frames to tables: :func:`apply_changes` (one batch of one table), the library's entry point.

The change frame is decode's per-table output (see ``docs/spark-source-decode.md``): the table's columns plus
``_cdc_op``, ``_cdc_sequence``, ``_cdc_changed_columns`` and the other ``_cdc_*`` columns. The rules live in
:mod:`cdc_spark.merge` (net change per key, sequence order, tombstones, truncates, partial updates, SCD2
history, schema evolution); the writing in :mod:`cdc_spark.sinks` (Delta Lake or Iceberg, MERGE run by Spark).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from cdc_core.errors import ConfigError
from cdc_spark.merge import DEFAULT_TOMBSTONE_RETENTION, ApplySpec, SchemaEvolutionError, build_spec
from cdc_spark.sinks import BatchInfo, MergePlan, Sink, load_sink
from cdc_spark.source.checks import batch_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@attrs.frozen
class Applied:
    """What applying one batch of one table did."""

    written: bool  # False: the batch had been committed before (a replay), nothing ran
    changes: int  # changes in the batch (0 when skipped)
    ops: Mapping[str, int] = attrs.field(factory=dict)  # the changes by operation (insert, update, delete, truncate)


def apply_batch(changes: DataFrame, sink: Sink, spec: ApplySpec, batch: BatchInfo | None = None) -> Applied:
    """Apply one batch of a table's changes through ``sink``."""
    return apply_tables([(changes, spec)], sink, batch)[spec.table]


def apply_tables(
    tables: Sequence[tuple[DataFrame, ApplySpec]], sink: Sink, batch: BatchInfo | None = None, parallelism: int = 1
) -> dict[str, Applied]:
    """Apply one batch of every table's changes through ``sink`` at once (the job's entry point): what the tables
    share is written once, ``parallelism`` tables side by side."""
    for changes, _spec in tables:
        batch_frame(changes, "apply_tables")
    plans = [MergePlan(spec=spec, changes=changes) for changes, spec in tables]
    written = sink.write_batch(plans, batch, parallelism)
    return {
        plan.spec.table: Applied(
            written=written[plan.spec.table],
            changes=plan.summary.changes if plan.summary is not None and written[plan.spec.table] else 0,
            ops=dict(plan.summary.ops) if plan.summary is not None and written[plan.spec.table] else {},
        )
        for plan in plans
    }


def _table_of(changes: DataFrame) -> str:
    """``database.table`` of a frame holding one table's changes (``_cdc_database``/``_cdc_table``)."""
    if "_cdc_database" not in changes.columns or "_cdc_table" not in changes.columns:
        raise ConfigError("pass table='database.table': the change frame has no _cdc_database/_cdc_table")
    names = changes.select("_cdc_database", "_cdc_table").distinct().limit(2).collect()
    if len(names) != 1:
        raise ConfigError(f"pass table='database.table': the change frame holds {len(names)} tables")
    return f"{names[0][0]}.{names[0][1]}"


def apply_changes(
    changes: DataFrame,
    target: str | Sink,
    keys: Sequence[str],
    sequence_by: str = "_cdc_sequence",
    *,
    table: str | None = None,
    scd: int = 1,
    track_columns: Sequence[str] | None = None,
    include_columns: Iterable[str] | None = None,
    exclude_columns: Iterable[str] | None = None,
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION,
    metadata_columns: Sequence[str] = (),
    table_format: str = "delta",
    batch: BatchInfo | None = None,
) -> bool:
    """Apply one batch of a table's change frame to ``target``: a directory of tables, or a sink.

    ``table`` (``database.table``) names the target table; by default the frame's ``_cdc_database`` and
    ``_cdc_table``. A directory gets ``table_format`` tables (``delta``, ``iceberg``: see
    :mod:`cdc_spark.sinks`). ``metadata_columns`` are change-frame columns also written to the target
    (``_cdc_commit_ts``, ``_cdc_op``...). Returns False when ``batch`` had been committed to this table before
    (a replay: nothing is written).
    """
    batch_frame(changes, "apply_changes")
    sink: Sink = load_sink(table_format, changes.sparkSession, target) if isinstance(target, str) else target
    spec = build_spec(
        changes,
        table=table if table is not None else _table_of(changes),
        keys=keys,
        sequence_by=sequence_by,
        scd=scd,
        track_columns=track_columns,
        include_columns=include_columns,
        exclude_columns=exclude_columns,
        tombstone_retention=tombstone_retention,
        metadata=metadata_columns,
    )
    return apply_batch(changes, sink, spec, batch).written


__all__ = [
    "Applied",
    "ApplySpec",
    "BatchInfo",
    "SchemaEvolutionError",
    "apply_batch",
    "apply_changes",
    "apply_tables",
]
