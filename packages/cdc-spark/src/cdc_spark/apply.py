"""Apply a change frame to a target table: net changes, sequence order, tombstones, SCD1/SCD2, partial updates.

The change frame is decode's per-table output (see ``docs/spark.md``): the table's columns at top level plus
``_cdc_op``, ``_cdc_sequence`` and ``_cdc_changed_columns``. This module turns one micro-batch of it into a
*merge source*, computed entirely in Spark, that a sink (:mod:`cdc_spark.sinks`) writes with one atomic MERGE.

Target layout (hidden columns start with ``__cdc_``):

* SCD type 1: one row per key with ``__cdc_sequence`` (the sequence of the change that wrote it, as a
  sortable string), ``__cdc_deleted`` (a tombstone: the key was deleted; hidden from :func:`live_view`) and
  ``__cdc_updated_at`` (when the row was written; tombstones older than the retention are purged). A change is
  applied only if its sequence is greater than the stored one, so a late older change never overwrites a newer
  one and a late older upsert never resurrects a deleted row while its tombstone is kept.
* SCD type 2: one row per version with ``__start_at``/``__end_at`` (the commit timestamp, or the sequence value
  itself when it is a scalar) and ``__cdc_start_sequence``/``__cdc_end_sequence`` (sortable strings). The history
  of every key a batch touches is recomputed from the stored versions plus the new changes, so changes arriving
  out of order across batches land in their place in the history.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final, Literal, Protocol

import attrs

from cdc_core.errors import ConfigError, SchemaError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType

    from cdc_spark.sinks import BatchInfo, Sink

SEQUENCE: Final = "__cdc_sequence"
DELETED: Final = "__cdc_deleted"
UPDATED_AT: Final = "__cdc_updated_at"
CHANGED_PREFIX: Final = "__cdc_changed__"
START_AT: Final = "__start_at"
END_AT: Final = "__end_at"
START_SEQUENCE: Final = "__cdc_start_sequence"
END_SEQUENCE: Final = "__cdc_end_sequence"
HIDDEN_PREFIX: Final = "__cdc_"
DROP: Final = "__cdc_drop"

CHANGE_OPS: Final = frozenset({"insert", "update", "delete", "truncate"})
DEFAULT_TOMBSTONE_RETENTION: Final = dt.timedelta(days=7)

# 2**63 + 1: shifts any long (and the -1 standing for null) into 0..2**64, printed as 20 digits.
_BIAS: Final = 9223372036854775809


class SchemaEvolutionError(SchemaError):
    """A column of a batch changed type in a way the target cannot absorb (not a widening)."""

    def __init__(self, table: str, column: str, old_type: str, new_type: str) -> None:
        self.table = table
        self.column = column
        self.old_type = old_type
        self.new_type = new_type
        super().__init__(
            f"table {table}: column {column!r} changed type incompatibly from {old_type} to {new_type};"
            " only added columns and widened types are applied"
        )


@attrs.frozen(kw_only=True)
class ApplySpec:
    """What to apply and how; built by :func:`apply_changes` from its arguments."""

    table: str
    keys: tuple[str, ...]
    columns: tuple[str, ...]  # data columns written to the target, keys first
    scd: Literal[1, 2] = 1
    track_columns: tuple[str, ...] | None = None  # SCD2: changes to other columns update the version in place
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION
    sequence_by: str = "_cdc_sequence"

    @property
    def value_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.keys)


@attrs.frozen(kw_only=True)
class MergePlan:
    """One batch's merge source for one table, and everything a sink needs to write it atomically.

    ``source`` holds, for SCD1, one row per key (net change) with ``__cdc_changed__<col>``: the sequence of the
    newest change of the batch that set the column, null if none did. A sink writes the column only where that
    is newer than the stored row's sequence, so partial updates keep the other columns, and an older change
    replayed into a later batch cannot overwrite a column a newer change already set. For SCD2, the recomputed
    versions of every touched key plus rows flagged ``__cdc_drop`` for stored versions that no longer exist.
    ``truncate_sequence`` is the sortable sequence of the batch's latest truncate, if any.
    """

    spec: ApplySpec
    source: DataFrame
    truncate_sequence: str | None = None
    truncate_time: int | None = None  # the latest truncate's commit time, closing SCD2 versions


class TargetReader(Protocol):
    """Reads a target's stored rows back into Spark (SCD2 recomputes the history of touched keys)."""

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None: ...


def sequence_sort_key(column: Column, data_type: DataType) -> Column:
    """A string column whose byte order is the order of ``column`` (struct fields compared in order).

    Integral fields become 20-digit numbers (null first), timestamps their microseconds, strings themselves,
    so one string comparison in a MERGE predicate orders any sequence the way Spark would order the value.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        parts = [sequence_sort_key(column.getField(f.name), f.dataType) for f in data_type.fields]
        return F.concat_ws(".", *parts)
    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        shifted = F.coalesce(column.cast("decimal(20,0)"), F.lit(-1).cast("decimal(20,0)")) + F.lit(str(_BIAS)).cast(
            "decimal(20,0)"
        )
        return F.lpad(shifted.cast("decimal(20,0)").cast("string"), 20, "0")
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
        return sequence_sort_key(F.unix_micros(column.cast("timestamp")), T.LongType())
    if isinstance(data_type, (T.DateType,)):
        return sequence_sort_key(F.unix_date(column), T.LongType())
    if isinstance(data_type, T.StringType):
        return F.coalesce(column, F.lit(""))
    raise ConfigError(f"sequence_by column of type {data_type.simpleString()} cannot order changes")


def _sequence_time(column: Column, data_type: DataType) -> Column:
    """``__start_at``/``__end_at`` value: the commit ts field of a sequence struct, else the scalar itself."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        names = [f.name for f in data_type.fields]
        return column.getField("commit_ts" if "commit_ts" in names else names[0])
    return column


def data_columns(
    changes: DataFrame,
    keys: Sequence[str],
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> tuple[str, ...]:
    """The table columns of a change frame to write: keys first, ``_cdc_*`` columns never."""
    names = [c for c in changes.columns if not c.startswith("_cdc_") and not c.startswith(HIDDEN_PREFIX)]
    missing = [k for k in keys if k not in names]
    if missing:
        raise ConfigError(f"key columns {missing} are not columns of the change frame {names}")
    chosen = [c for c in names if c not in keys]
    if include is not None:
        wanted = list(include)
        unknown = [c for c in wanted if c not in names]
        if unknown:
            raise ConfigError(f"include_columns names unknown columns {unknown}")
        chosen = [c for c in chosen if c in wanted]
    if exclude is not None:
        dropped = set(exclude)
        chosen = [c for c in chosen if c not in dropped]
    return (*keys, *chosen)


def _ordered(changes: DataFrame, spec: ApplySpec) -> tuple[DataFrame, str | None, int | None]:
    """Changes with a sortable ``__cdc_sequence``, truncates removed, and the latest truncate's sequence."""
    from pyspark.sql import functions as F

    seq_type = changes.schema[spec.sequence_by].dataType
    frame = changes.withColumn(SEQUENCE, sequence_sort_key(F.col(spec.sequence_by), seq_type)).withColumn(
        "__cdc_time", _sequence_time(F.col(spec.sequence_by), seq_type)
    )
    unknown = frame.where(~F.col("_cdc_op").isin(*CHANGE_OPS)).select("_cdc_op").limit(1).collect()
    if unknown:
        raise ConfigError(
            f"table {spec.table}: unknown _cdc_op {unknown[0][0]!r}; expected one of {sorted(CHANGE_OPS)}"
        )
    latest = (
        frame.where(F.col("_cdc_op") == "truncate")
        .agg(F.max(SEQUENCE), F.max_by(F.col("__cdc_time"), F.col(SEQUENCE)))
        .collect()[0]
    )
    truncate, when = latest[0], latest[1]
    frame = frame.where(F.col("_cdc_op") != "truncate")
    if truncate is not None:
        frame = frame.where(F.col(SEQUENCE) > F.lit(truncate))
    return frame, truncate, when if isinstance(when, int) else None


def _with_change_flags(frame: DataFrame, spec: ApplySpec) -> DataFrame:
    """Add ``__cdc_changed__<col>``: true where the change sets the column (null changed list: all columns)."""
    from pyspark.sql import functions as F

    has_list = "_cdc_changed_columns" in frame.columns
    for name in spec.value_columns:
        if has_list:
            flag = (
                F.col("_cdc_changed_columns").isNull()
                | (F.col("_cdc_op") != "update")
                | F.array_contains(F.col("_cdc_changed_columns"), name)
            )
        else:
            flag = F.lit(True)
        frame = frame.withColumn(CHANGED_PREFIX + name, flag)
    return frame


def _fill_partial(frame: DataFrame, spec: ApplySpec) -> DataFrame:
    """Per key in sequence order, carry each column's last set value forward; its ``__cdc_changed__`` column
    becomes the sequence of the newest change so far that set it (null: none did)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    window = (
        Window.partitionBy(*spec.keys)
        .orderBy(SEQUENCE, "__cdc_tiebreak")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    for name in spec.value_columns:
        flag = CHANGED_PREFIX + name
        carried = F.last(F.when(F.col(flag), F.struct(F.col(name).alias("v"))), ignorenulls=True).over(window)
        set_at = F.max(F.when(F.col(flag), F.col(SEQUENCE))).over(window)
        frame = frame.withColumn(name, carried.getField("v")).withColumn(flag, set_at)
    return frame


def _tiebreak(frame: DataFrame, spec: ApplySpec) -> DataFrame:
    """A deterministic order among changes with equal sequence: deletes last, then by content hash."""
    from pyspark.sql import functions as F

    rank = F.when(F.col("_cdc_op") == "delete", 1).otherwise(0)
    content = F.xxhash64(F.col("_cdc_op"), *[F.col(c) for c in spec.columns])
    return frame.withColumn("__cdc_tiebreak", F.struct(rank.alias("r"), content.alias("h")))


def scd1_source(changes: DataFrame, spec: ApplySpec) -> MergePlan:
    """The net change per key: the latest by sequence, partial updates folded over the batch."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame, truncate, when = _ordered(changes, spec)
    frame = _tiebreak(_with_change_flags(frame, spec), spec)
    frame = _fill_partial(frame, spec)
    latest = Window.partitionBy(*spec.keys).orderBy(F.col(SEQUENCE).desc(), F.col("__cdc_tiebreak").desc())
    net = (
        frame.withColumn("__cdc_rank", F.row_number().over(latest))
        .where(F.col("__cdc_rank") == 1)
        .withColumn(DELETED, F.col("_cdc_op") == "delete")
    )
    set_at = [CHANGED_PREFIX + c for c in spec.value_columns]  # the net row is the key's last: its fill saw all
    source = net.select(*spec.columns, SEQUENCE, DELETED, *set_at)
    return MergePlan(spec=spec, source=source, truncate_sequence=truncate, truncate_time=when)


def _versions_as_events(stored: DataFrame, spec: ApplySpec) -> DataFrame:
    """Stored SCD2 versions back as change events: an upsert at each start, a delete at each unfollowed end."""
    from pyspark.sql import functions as F

    upserts = stored.select(
        *spec.columns,
        F.col(START_SEQUENCE).alias(SEQUENCE),
        F.col(START_AT).alias("__cdc_time"),
        F.lit("update").alias("_cdc_op"),
    )
    starts = stored.select(*spec.keys, F.col(START_SEQUENCE).alias("__next"))
    ends = stored.where(F.col(END_SEQUENCE).isNotNull()).select(
        *spec.keys, F.col(END_SEQUENCE).alias(SEQUENCE), F.col(END_AT).alias("__cdc_time")
    )
    unfollowed = ends.join(starts.withColumnRenamed("__next", SEQUENCE), on=[*spec.keys, SEQUENCE], how="left_anti")
    deletes = unfollowed.select(
        *spec.keys,
        *[F.lit(None).cast(stored.schema[c].dataType).alias(c) for c in spec.value_columns],
        SEQUENCE,
        "__cdc_time",
        F.lit("delete").alias("_cdc_op"),
    ).select(*spec.columns, SEQUENCE, "__cdc_time", "_cdc_op")
    return upserts.unionByName(deletes)


def scd2_source(changes: DataFrame, spec: ApplySpec, stored: DataFrame | None) -> MergePlan:
    """Recompute the version history of every key in ``changes`` from ``stored`` versions plus the changes."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame, truncate, when = _ordered(changes, spec)
    frame = frame.select(*spec.columns, SEQUENCE, "__cdc_time", "_cdc_op", *_changed_list(frame))
    touched = frame.select(*spec.keys).distinct()
    stored_touched = None
    if stored is not None:
        stored_touched = stored.join(touched, on=list(spec.keys), how="left_semi")
        old = _versions_as_events(stored_touched, spec)
        if "_cdc_changed_columns" in frame.columns:
            old = old.withColumn("_cdc_changed_columns", F.lit(None).cast("array<string>"))
        frame = frame.unionByName(old.select(*frame.columns))
    frame = _tiebreak(_with_change_flags(frame, spec), spec)
    # One event per (key, sequence): replays and the stored copy of an already applied change collapse.
    same = Window.partitionBy(*spec.keys, SEQUENCE).orderBy(F.col("__cdc_tiebreak").desc())
    frame = frame.withColumn("__cdc_rank", F.row_number().over(same)).where(F.col("__cdc_rank") == 1)
    frame = _fill_partial(frame, spec)

    tracked = spec.track_columns if spec.track_columns is not None else spec.value_columns
    order = Window.partitionBy(*spec.keys).orderBy(SEQUENCE)
    is_delete = F.col("_cdc_op") == "delete"
    previous_delete = F.lag(is_delete).over(order)
    tracked_now = F.struct(*[F.col(c) for c in tracked]) if tracked else F.lit(0)
    tracked_before = F.lag(tracked_now).over(order)
    starts_version = (
        is_delete
        | previous_delete.isNull()
        | previous_delete
        | ~F.equal_null(tracked_now, tracked_before)  # null-safe: an unchanged null is no change
    )
    frame = frame.withColumn("__cdc_group", F.sum(F.when(starts_version, 1).otherwise(0)).over(order))
    group_window = Window.partitionBy(*spec.keys, "__cdc_group")
    last_in_group = Window.partitionBy(*spec.keys, "__cdc_group").orderBy(F.col(SEQUENCE).desc())
    grouped = (
        frame.withColumn("__cdc_first_seq", F.min(SEQUENCE).over(group_window))
        .withColumn("__cdc_first_time", F.min_by("__cdc_time", F.col(SEQUENCE)).over(group_window))
        .withColumn("__cdc_rank", F.row_number().over(last_in_group))
        .where(F.col("__cdc_rank") == 1)
    )
    by_group = Window.partitionBy(*spec.keys).orderBy("__cdc_group")
    versions = (
        grouped.withColumn(END_SEQUENCE, F.lead("__cdc_first_seq").over(by_group))
        .withColumn(END_AT, F.lead("__cdc_first_time").over(by_group))
        .where(F.col("_cdc_op") != "delete")
        .select(
            *spec.columns,
            F.col("__cdc_first_time").alias(START_AT),
            F.col(END_AT),
            F.col("__cdc_first_seq").alias(START_SEQUENCE),
            F.col(END_SEQUENCE),
            F.lit(False).alias(DROP),
        )
    )
    if stored_touched is not None:
        gone = stored_touched.join(
            versions.select(*spec.keys, START_SEQUENCE), on=[*spec.keys, START_SEQUENCE], how="left_anti"
        ).select(*versions.columns[:-1], F.lit(True).alias(DROP))
        versions = versions.unionByName(gone)
    return MergePlan(spec=spec, source=versions, truncate_sequence=truncate, truncate_time=when)


def _changed_list(frame: DataFrame) -> list[str]:
    return ["_cdc_changed_columns"] if "_cdc_changed_columns" in frame.columns else []


def build_spec(
    changes: DataFrame,
    *,
    table: str,
    keys: Sequence[str],
    sequence_by: str = "_cdc_sequence",
    scd: int = 1,
    track_columns: Sequence[str] | None = None,
    include_columns: Iterable[str] | None = None,
    exclude_columns: Iterable[str] | None = None,
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION,
) -> ApplySpec:
    if scd not in (1, 2):
        raise ConfigError(f"scd must be 1 or 2, not {scd!r}")
    if not keys:
        raise ConfigError(f"table {table}: no key columns; pass keys (the table has no primary or unique key)")
    if sequence_by not in changes.columns:
        raise ConfigError(f"table {table}: sequence_by column {sequence_by!r} is not in the change frame")
    if "_cdc_op" not in changes.columns:
        raise ConfigError(f"table {table}: the change frame has no _cdc_op column")
    columns = data_columns(changes, keys, include_columns, exclude_columns)
    if track_columns is not None:
        unknown = [c for c in track_columns if c not in columns]
        if unknown:
            raise ConfigError(f"table {table}: track_columns names columns not written {unknown}")
    return ApplySpec(
        table=table,
        keys=tuple(keys),
        columns=columns,
        scd=1 if scd == 1 else 2,
        track_columns=None if track_columns is None else tuple(c for c in track_columns if c not in keys),
        tombstone_retention=tombstone_retention,
        sequence_by=sequence_by,
    )


def plan_batch(changes: DataFrame, spec: ApplySpec, reader: TargetReader | None = None) -> MergePlan:
    """The merge plan of one batch: SCD1 net changes, or SCD2 recomputed history (reads stored versions)."""
    if spec.scd == 1:
        return scd1_source(changes, spec)
    stored = reader.read_target(changes.sparkSession, spec.table) if reader is not None else None
    return scd2_source(changes, spec, stored)


def live_columns(names: Iterable[str]) -> list[str]:
    """The user-visible columns of a target (hidden bookkeeping columns removed; SCD2 bounds kept)."""
    return [n for n in names if not n.startswith(HIDDEN_PREFIX)]


def live_filter(scd: int) -> Callable[[DataFrame], DataFrame]:
    """The filter from stored rows to what users see: tombstones hidden (SCD1); every version (SCD2)."""
    from pyspark.sql import functions as F

    def apply(frame: DataFrame) -> DataFrame:
        if scd == 1 and DELETED in frame.columns:
            frame = frame.where(~F.col(DELETED))
        return frame.select(*live_columns(frame.columns))

    return apply


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
    batch: BatchInfo | None = None,
) -> bool:
    """Apply one batch of a table's change frame to ``target`` (a Delta table path, or a sink).

    Returns False when ``batch`` had been committed to this table before (a replay: nothing is written).
    ``table`` names the target within a multi-table sink (default: the frame's ``_cdc_database.table``
    is not consulted; pass it, or use a path).
    """
    from cdc_spark.sinks.delta import DeltaSink

    sink: Sink = DeltaSink.for_path(target) if isinstance(target, str) else target
    name = table if table is not None else (target if isinstance(target, str) else "table")
    spec = build_spec(
        changes,
        table=name,
        keys=keys,
        sequence_by=sequence_by,
        scd=scd,
        track_columns=track_columns,
        include_columns=include_columns,
        exclude_columns=exclude_columns,
        tombstone_retention=tombstone_retention,
    )
    if batch is not None and sink.committed(spec.table, batch):
        return False
    written: bool = sink.write(plan_batch(changes, spec, sink), batch)
    return written
