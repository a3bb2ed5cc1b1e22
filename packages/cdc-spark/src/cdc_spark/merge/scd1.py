"""SCD type 1: the batch folded per key, then resolved against the key's state into what to write.

The target holds one row per live key and only the source's columns. The state table beside it holds, per key,
the newest applied sequence, a tombstone flag, the newest full image and, for columns set by partial updates
newer than that image, their sequences. A change writes a column only if it is newer than what last set the
column, and decides whether the row lives only if it is newer than every change applied to the key: a late
older change never overwrites a newer value, and a late older upsert never resurrects a deleted row while its
tombstone is kept. A truncate turns every key whose state is older into a tombstone.

:func:`resolve` returns one frame per batch (cached once by the sink) with, per touched key, both the target
action (``__cdc_action`` upsert/delete with ``__cdc_write__<col>`` flags) and the new state row.
"""

from __future__ import annotations

import datetime as dt
from functools import reduce
from typing import TYPE_CHECKING, Final

from cdc_spark.merge.batch import BatchSummary
from cdc_spark.merge.columns import (
    ACTION,
    COLUMN_SEQUENCES,
    DELETED,
    IMAGE_SEQUENCE,
    ORDER,
    SEQUENCE,
    UPDATED_AT,
    WRITE_PREFIX,
)
from cdc_spark.merge.spec import ApplySpec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

STATE_CHANGED: Final = "__cdc_state_changed"
_SET: Final = "__cdc_set__"  # the sequence of the batch's newest change that set a column
_STORED: Final = "__cdc_stored__"  # stored key columns, before they are coalesced with the batch's


def state_schema(spec: ApplySpec, key_types: StructType, seq_type: DataType) -> StructType:
    """The SCD1 state table: the keys, then the bookkeeping columns."""
    from pyspark.sql import types as T

    return T.StructType(
        [
            *[key_types[k] for k in spec.keys],
            T.StructField(SEQUENCE, seq_type),
            T.StructField(DELETED, T.BooleanType()),
            T.StructField(UPDATED_AT, T.TimestampType()),
            T.StructField(IMAGE_SEQUENCE, seq_type),
            T.StructField(COLUMN_SEQUENCES, T.MapType(T.StringType(), seq_type)),
        ]
    )


def fold(changes: DataFrame, spec: ApplySpec) -> DataFrame:
    """One row per key: the newest change's operation and metadata, and for every column the value and
    sequence (``__cdc_set__<col>``) of the newest change that set it (partial updates set only their columns)."""
    from pyspark.sql import functions as F

    op = F.col("_cdc_op")
    partial = (op == "update") & F.col("_cdc_changed_columns").isNotNull() if _has_changed(changes) else F.lit(False)
    order = F.col(ORDER)
    aggregates = [
        F.max(order).getField("s").alias("__cdc_n_seq"),
        F.max_by(F.struct(op.alias("op"), *[F.col(c) for c in spec.metadata]), order).alias("__cdc_newest"),
        F.max(F.when(~partial, order)).getField("s").alias("__cdc_n_image"),
    ]
    for name in spec.value_columns:
        sets = (
            ~partial | F.array_contains(F.col("_cdc_changed_columns"), name) if _has_changed(changes) else F.lit(True)
        )
        value = F.when(op != "delete", F.col(name))  # a delete leaves nothing behind
        aggregates.append(F.max_by(value, F.when(sets, order)).alias(name))
        aggregates.append(F.max(F.when(sets, order)).getField("s").alias(_SET + name))
    net = changes.groupBy(*spec.keys).agg(*aggregates)
    return net.select(
        *spec.keys,
        "__cdc_n_seq",
        "__cdc_n_image",
        F.col("__cdc_newest.op").alias("__cdc_n_op"),
        *[F.col(f"__cdc_newest.`{c}`").alias(c) for c in spec.metadata],
        *[c for name in spec.value_columns for c in (name, _SET + name)],
    )


def _has_changed(frame: DataFrame) -> bool:
    return "_cdc_changed_columns" in frame.columns


def _any(flags: list[Column]) -> Column:
    from pyspark.sql import functions as F

    return reduce(lambda a, b: a | b, flags, F.lit(False))


def resolve(
    changes: DataFrame,
    spec: ApplySpec,
    stored: DataFrame,
    summary: BatchSummary,
    now: dt.datetime,
) -> DataFrame:
    """The batch's net changes resolved against the state table ``stored``: one row per key whose target row or
    state changes, with the target action and write flags and the new state columns."""
    from pyspark.sql import functions as F

    net = fold(changes, spec)
    seq_type = stored.schema[SEQUENCE].dataType
    old = stored.select(
        *[F.col(k).alias(_STORED + k) for k in spec.keys],
        F.col(SEQUENCE).alias("__cdc_e_seq"),
        F.col(DELETED).alias("__cdc_e_deleted"),
        F.coalesce(F.col(IMAGE_SEQUENCE), F.col(SEQUENCE)).alias("__cdc_e_image"),
        F.col(COLUMN_SEQUENCES).alias("__cdc_e_map"),
    )
    on = reduce(lambda a, b: a & b, [net[k].eqNullSafe(old[_STORED + k]) for k in spec.keys])
    e_seq, e_deleted = F.col("__cdc_e_seq"), F.col("__cdc_e_deleted")
    was_live = e_seq.isNotNull() & ~e_deleted
    if summary.truncate is None:
        joined = net.join(old, on, "left")
        reset = F.lit(False)
    else:  # keys older than the truncate become tombstones, touched by the batch or not
        floor = summary.truncate.column()
        joined = net.join(old, on, "full_outer").where(
            F.col("__cdc_n_seq").isNotNull() | ((e_seq < floor) & ~e_deleted)
        )
        joined = joined.select(
            *[F.coalesce(F.col(k), F.col(_STORED + k)).alias(k) for k in spec.keys],
            *[c for c in joined.columns if c not in spec.keys],
        )
        reset = F.coalesce(e_seq < floor, F.lit(False))
        joined = joined.select(
            *[c for c in joined.columns if c not in ("__cdc_e_seq", "__cdc_e_deleted", "__cdc_e_image", "__cdc_e_map")],
            was_live.alias("__cdc_was_live"),
            F.when(reset, floor).otherwise(e_seq).alias("__cdc_e_seq"),
            (reset | e_deleted).alias("__cdc_e_deleted"),
            F.when(reset, floor).otherwise(F.col("__cdc_e_image")).alias("__cdc_e_image"),
            F.when(~reset, F.col("__cdc_e_map")).alias("__cdc_e_map"),
            reset.alias("__cdc_reset"),
        )
        was_live = F.col("__cdc_was_live")
        reset = F.col("__cdc_reset")
    e_seq, e_deleted, e_image = F.col("__cdc_e_seq"), F.col("__cdc_e_deleted"), F.col("__cdc_e_image")
    n_seq = F.col("__cdc_n_seq")

    newer = F.coalesce(e_seq.isNull() | (n_seq > e_seq), F.lit(False)) & n_seq.isNotNull()
    new_seq = F.when(newer, n_seq).otherwise(e_seq)
    new_deleted = F.when(newer, F.col("__cdc_n_op") == "delete").otherwise(e_deleted)
    live_before = e_seq.isNotNull() & ~e_deleted
    revive = ~new_deleted & ~live_before  # a new or re-inserted row: every column is written
    new_image = F.greatest(F.col("__cdc_n_image"), e_image)
    writes: dict[str, Column] = {}
    sets: dict[str, Column] = {}
    for name in spec.value_columns:
        stored_set = F.coalesce(F.element_at(F.col("__cdc_e_map"), F.lit(name)), e_image)
        set_at = F.col(_SET + name)
        writes[name] = revive | (set_at.isNotNull() & (stored_set.isNull() | (set_at > stored_set)))
        sets[name] = F.when(writes[name], F.coalesce(set_at, new_seq)).otherwise(stored_set)
    for name in spec.metadata:
        writes[name] = newer
    touched = _any(list(writes.values()))
    action = F.when(~new_deleted & (revive | touched), F.lit("upsert")).when(was_live & new_deleted, F.lit("delete"))
    partial = _column_sequences(sets, new_image, seq_type)
    resolved = joined.select(
        *spec.keys,
        *[F.when(writes[c], F.col(c)).alias(c) for c in (*spec.value_columns, *spec.metadata)],
        *[writes[c].alias(WRITE_PREFIX + c) for c in (*spec.value_columns, *spec.metadata)],
        action.alias(ACTION),
        new_seq.alias(SEQUENCE),
        new_deleted.alias(DELETED),
        F.lit(now).cast("timestamp").alias(UPDATED_AT),
        F.when(new_image != new_seq, new_image).alias(IMAGE_SEQUENCE),
        partial.alias(COLUMN_SEQUENCES),
        (newer | touched | reset).alias(STATE_CHANGED),
    )
    return resolved.where(F.col(STATE_CHANGED))


def _column_sequences(sets: dict[str, Column], image: Column, seq_type: DataType) -> Column:
    """``{column: sequence}`` for the columns set by a partial update newer than the image; null if none."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    empty = F.lit(None).cast(T.MapType(T.StringType(), seq_type))
    if not sets:
        return empty
    entries = F.array(*[F.struct(F.lit(name).alias("key"), value.alias("value")) for name, value in sets.items()])
    newer = F.filter(entries, lambda entry: entry.getField("value") > image)
    return F.when(F.size(newer) > 0, F.map_from_entries(newer)).otherwise(empty)


__all__ = ["STATE_CHANGED", "fold", "resolve", "state_schema"]
