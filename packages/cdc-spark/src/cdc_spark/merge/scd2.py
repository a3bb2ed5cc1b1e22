"""SCD type 2: the version history of every key a batch touches, recomputed from the stored versions plus the
batch, so changes arriving out of order across batches land in their place in the history.

The state table holds every version with its values and the sequences that order it (``__cdc_start_sequence``,
``__cdc_end_sequence``); the target holds the same versions with only the source's columns and
``__start_at``/``__end_at`` (the commit times that started and ended each version). A version that lasted no
time (two changes of a key at one commit time) stays in the state and is not shown in the target. A truncate
closes, at its commit time, every version of every key that was open at its sequence.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING

import attrs

from cdc_spark.merge.batch import BatchSummary
from cdc_spark.merge.columns import DROP, END_AT, END_SEQUENCE, ORDER, START_AT, START_SEQUENCE, TIME
from cdc_spark.merge.spec import ApplySpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

_SEQ = "__cdc_seq"
_OTHER = "__cdc_other__"


def state_schema(spec: ApplySpec, types: StructType, seq_type: DataType, time_type: DataType) -> StructType:
    """The SCD2 state table: the target's columns, the bounds and the sequences."""
    from pyspark.sql import types as T

    return T.StructType(
        [
            *[types[c] for c in spec.target_columns],
            T.StructField(START_AT, time_type),
            T.StructField(END_AT, time_type),
            T.StructField(START_SEQUENCE, seq_type),
            T.StructField(END_SEQUENCE, seq_type),
        ]
    )


def visible(versions: DataFrame) -> DataFrame:
    """The versions a target shows: those that lasted some time."""
    from pyspark.sql import functions as F

    return versions.where(F.col(END_AT).isNull() | (F.col(END_AT) != F.col(START_AT)))


def _anti(left: DataFrame, right: DataFrame, columns: tuple[str, ...]) -> DataFrame:
    """Rows of ``left`` with no row of ``right`` equal (null-safe) on ``columns``."""
    other = right.select(*[right[c].alias(_OTHER + c) for c in columns])
    on = reduce(lambda a, b: a & b, [left[c].eqNullSafe(other[_OTHER + c]) for c in columns])
    return left.join(other, on, "left_anti")


def _semi(left: DataFrame, keys: DataFrame, columns: tuple[str, ...]) -> DataFrame:
    other = keys.select(*[keys[c].alias(_OTHER + c) for c in columns])
    on = reduce(lambda a, b: a & b, [left[c].eqNullSafe(other[_OTHER + c]) for c in columns])
    return left.join(other, on, "left_semi")


@attrs.frozen
class History:
    """The recomputed versions of the touched keys and the stored versions they replace (both lazy)."""

    spec: ApplySpec
    versions: DataFrame  # target columns, bounds, start and end sequences
    stored: DataFrame  # the stored versions of the touched keys as they were before the batch

    def state_source(self) -> DataFrame:
        """Rows for the state MERGE on keys + start sequence: every version, and those that vanished flagged."""
        from pyspark.sql import functions as F

        gone = _anti(self.stored, self.versions, (*self.spec.keys, START_SEQUENCE))
        return self.versions.withColumn(DROP, F.lit(False)).unionByName(
            gone.select(*self.versions.columns).withColumn(DROP, F.lit(True))
        )

    def target_source(self) -> DataFrame:
        """Rows for the target MERGE on keys + ``__start_at``: the visible versions, vanished ones flagged."""
        from pyspark.sql import functions as F

        shown = [*self.spec.target_columns, START_AT, END_AT]
        new = visible(self.versions).select(*shown)
        old = visible(self.stored).select(*shown)
        gone = _anti(old, new, (*self.spec.keys, START_AT))
        return new.withColumn(DROP, F.lit(False)).unionByName(gone.withColumn(DROP, F.lit(True)))


def _close_at_truncate(stored: DataFrame, summary: BatchSummary) -> DataFrame:
    """Versions open at the truncate's sequence end there (at its commit time)."""
    from pyspark.sql import functions as F

    if summary.truncate is None:
        return stored
    floor = summary.truncate.column()
    crosses = (F.col(START_SEQUENCE) < floor) & (F.col(END_SEQUENCE).isNull() | (F.col(END_SEQUENCE) > floor))
    moment = summary.truncate_time.column() if summary.truncate_time is not None else F.lit(None)
    when = moment.cast(stored.schema[END_AT].dataType)
    return stored.withColumn(END_AT, F.when(crosses, when).otherwise(F.col(END_AT))).withColumn(
        END_SEQUENCE, F.when(crosses, floor).otherwise(F.col(END_SEQUENCE))
    )


def _versions_as_events(stored: DataFrame, spec: ApplySpec) -> DataFrame:
    """Stored versions back as change events: an upsert at each start, a delete at each unfollowed end."""
    from pyspark.sql import functions as F

    upserts = stored.select(
        *spec.target_columns,
        F.col(START_SEQUENCE).alias(_SEQ),
        F.col(START_AT).alias(TIME),
        F.lit("update").alias("_cdc_op"),
    )
    starts = stored.select(*spec.keys, F.col(START_SEQUENCE).alias(_SEQ))
    ends = stored.where(F.col(END_SEQUENCE).isNotNull()).select(
        *spec.keys, F.col(END_SEQUENCE).alias(_SEQ), F.col(END_AT).alias(TIME)
    )
    unfollowed = _anti(ends, starts, (*spec.keys, _SEQ))
    deletes = unfollowed.select(
        *spec.keys,
        *[F.lit(None).cast(stored.schema[c].dataType).alias(c) for c in spec.target_columns if c not in spec.keys],
        _SEQ,
        TIME,
        F.lit("delete").alias("_cdc_op"),
    )
    return upserts.unionByName(deletes)


def history(changes: DataFrame, spec: ApplySpec, stored: DataFrame, summary: BatchSummary) -> History:
    """Recompute the versions of every key in ``changes`` (and, on a truncate, of every key open at it)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    has_changed = "_cdc_changed_columns" in changes.columns
    events = changes.select(
        *spec.target_columns,
        F.col(ORDER).getField("s").alias(_SEQ),
        TIME,
        "_cdc_op",
        *(["_cdc_changed_columns"] if has_changed else []),
    )
    touched = events.select(*spec.keys)
    if summary.truncate is not None:
        floor = summary.truncate.column()
        open_at = stored.where(
            (F.col(START_SEQUENCE) < floor) & (F.col(END_SEQUENCE).isNull() | (F.col(END_SEQUENCE) > floor))
        )
        touched = touched.unionByName(open_at.select(*spec.keys))
    touched = touched.distinct()
    before = _semi(stored, touched, spec.keys)
    old = _versions_as_events(_close_at_truncate(before, summary), spec)
    if has_changed:
        old = old.withColumn("_cdc_changed_columns", F.lit(None).cast("array<string>"))
    frame = events.unionByName(old.select(*events.columns))

    rank = F.when(F.col("_cdc_op") == "delete", 1).otherwise(0)
    content = F.xxhash64(F.col("_cdc_op"), *[F.col(c) for c in spec.columns])
    frame = frame.withColumn(ORDER, F.struct(F.col(_SEQ).alias("s"), rank.alias("r"), content.alias("h")))
    # One event per (key, sequence): replays and the stored copy of an already applied change collapse.
    same = Window.partitionBy(*spec.keys, _SEQ).orderBy(F.col(ORDER).desc())
    frame = frame.withColumn("__cdc_rank", F.row_number().over(same)).where(F.col("__cdc_rank") == 1)
    frame = _fill_partial(frame, spec, has_changed)

    tracked = spec.track_columns if spec.track_columns is not None else spec.value_columns
    order = Window.partitionBy(*spec.keys).orderBy(_SEQ)
    is_delete = F.col("_cdc_op") == "delete"
    previous_delete = F.lag(is_delete).over(order)
    tracked_now = F.struct(*[F.col(c) for c in tracked]) if tracked else F.lit(0)
    starts_version = (
        is_delete
        | previous_delete.isNull()
        | previous_delete
        | ~F.equal_null(tracked_now, F.lag(tracked_now).over(order))  # null-safe: an unchanged null is no change
    )
    frame = frame.withColumn("__cdc_group", F.sum(F.when(starts_version, 1).otherwise(0)).over(order))
    group = Window.partitionBy(*spec.keys, "__cdc_group")
    last_in_group = Window.partitionBy(*spec.keys, "__cdc_group").orderBy(F.col(_SEQ).desc())
    grouped = (
        frame.withColumn("__cdc_first_seq", F.min(_SEQ).over(group))
        .withColumn("__cdc_first_time", F.min_by(TIME, F.col(_SEQ)).over(group))
        .withColumn("__cdc_rank", F.row_number().over(last_in_group))
        .where(F.col("__cdc_rank") == 1)
    )
    by_group = Window.partitionBy(*spec.keys).orderBy("__cdc_group")
    time_type = stored.schema[START_AT].dataType
    versions = (
        grouped.withColumn(END_SEQUENCE, F.lead("__cdc_first_seq").over(by_group))
        .withColumn(END_AT, F.lead("__cdc_first_time").over(by_group))
        .where(~is_delete)
        .select(
            *spec.target_columns,
            F.col("__cdc_first_time").cast(time_type).alias(START_AT),
            F.col(END_AT).cast(time_type).alias(END_AT),
            F.col("__cdc_first_seq").alias(START_SEQUENCE),
            F.col(END_SEQUENCE),
        )
    )
    return History(spec=spec, versions=versions, stored=before)


def _fill_partial(frame: DataFrame, spec: ApplySpec, has_changed: bool) -> DataFrame:
    """Per key in order, a column a partial update did not set keeps the value the previous event left."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not has_changed:
        return frame
    window = (
        Window.partitionBy(*spec.keys).orderBy(F.col(ORDER)).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    partial = (F.col("_cdc_op") == "update") & F.col("_cdc_changed_columns").isNotNull()
    for name in spec.value_columns:
        sets = ~partial | F.array_contains(F.col("_cdc_changed_columns"), name)
        carried = F.last(F.when(sets, F.struct(F.col(name).alias("v"))), ignorenulls=True).over(window)
        frame = frame.withColumn(name, carried.getField("v"))
    return frame


__all__ = ["History", "history", "state_schema", "visible"]
