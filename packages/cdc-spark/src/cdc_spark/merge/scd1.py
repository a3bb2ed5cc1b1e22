"""SCD type 1: the batch folded per key, then resolved against the key's state into what to write.

The target holds one row per live key and only the source's columns. The key state holds, per key, the newest
applied sequence, since when the key is deleted (a tombstone), the newest full image and, for columns set by partial
updates newer than that image, their sequences. One key state serves every table of a sink (:func:`state_schema`:
rows by table and key text, :mod:`cdc_spark.merge.keys`), so a batch writes it once whatever its tables. A change
writes a column only if it is newer than what last set the column, and decides whether the row lives only if it is
newer than every change applied to the key: a late older change never overwrites a newer value, and a late older
upsert never resurrects a deleted row while its tombstone is kept. A truncate turns every key whose state is older
into a tombstone.

:func:`resolve` returns one frame per batch (computed once by the sink) with, per key whose target row or state
changes, both the target action (``__cdc_action`` upsert/delete with ``__cdc_write__<col>`` flags) and the new
state row. It is built in layers, each naming what the next uses, so Spark computes every decision once per row.
"""

from __future__ import annotations

import datetime as dt
from functools import reduce
from typing import TYPE_CHECKING, Final

from cdc_spark.merge.batch import BatchSummary, Sequence
from cdc_spark.merge.columns import (
    ACTION,
    COLUMN_SEQUENCES,
    DELETED_AT,
    FLOOR_KEY,
    IMAGE_SEQUENCE,
    KEY,
    ORDER,
    SEQUENCE,
    TABLE,
    WRITE_PREFIX,
)
from cdc_spark.merge.keys import key_text, key_values
from cdc_spark.merge.spec import ApplySpec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

_SET: Final = "__cdc_set__"  # the sequence of the batch's newest change that set a column
_STORED_SET: Final = "__cdc_stored_set__"  # the sequence of what set a column before the batch
_NEW_SET: Final = "__cdc_new_set__"  # ... and after it
_STORED_KEY: Final = "__cdc_stored_key"  # the stored key's text, before it is coalesced with the batch's


def state_schema(seq_type: DataType) -> StructType:
    """The SCD1 key state every table of a sink shares: the table, the key's text, then the bookkeeping."""
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField(TABLE, T.StringType(), False),
            T.StructField(KEY, T.StringType(), False),
            T.StructField(SEQUENCE, seq_type),
            T.StructField(DELETED_AT, T.TimestampType()),
            T.StructField(IMAGE_SEQUENCE, seq_type),
            T.StructField(COLUMN_SEQUENCES, T.MapType(T.StringType(), seq_type)),
        ]
    )


def table_state(state: DataFrame, table: str) -> DataFrame:
    """One table's keys in the shared key state (its truncate floor, kept under the empty key, left out)."""
    from pyspark.sql import functions as F

    return state.where((F.col(TABLE) == table) & (F.col(KEY) != FLOOR_KEY))


def floors(state: DataFrame, tables: list[str]) -> DataFrame:
    """The stored truncate floors of ``tables`` (columns ``table``, ``floor``)."""
    from pyspark.sql import functions as F

    kept = state.where((F.col(KEY) == FLOOR_KEY) & F.col(TABLE).isin(*tables))
    return kept.select(F.col(TABLE).alias("table"), F.col(SEQUENCE).alias("floor"))


def state_rows(resolved: DataFrame, table: str) -> DataFrame:
    """The new key state rows of one table's resolved batch, in :func:`state_schema`'s columns."""
    from pyspark.sql import functions as F

    return resolved.select(F.lit(table).alias(TABLE), KEY, SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES)


def floor_row(spark: SparkSession, table: str, floor: Sequence, seq_type: DataType) -> DataFrame:
    """The state row that keeps a table's truncate floor: changes at or before it are ignored from now on."""
    from pyspark.sql import functions as F

    empty_map = F.lit(None).cast(state_schema(seq_type)[COLUMN_SEQUENCES].dataType)
    return spark.range(1).select(
        F.lit(table).alias(TABLE),
        F.lit(FLOOR_KEY).alias(KEY),
        floor.column().alias(SEQUENCE),
        F.lit(None).cast("timestamp").alias(DELETED_AT),
        F.lit(None).cast(seq_type).alias(IMAGE_SEQUENCE),
        empty_map.alias(COLUMN_SEQUENCES),
    )


def fold(changes: DataFrame, spec: ApplySpec, partial_updates: bool = True) -> DataFrame:
    """One row per key: the newest change's operation and metadata, and for every column the value and
    sequence (``__cdc_set__<col>``) of the newest change that set it (partial updates set only their columns).

    One window per key ordered newest first (a single shuffle and sort, which the join with the state then
    reuses): its first row is the newest change. Without partial updates in the batch every change sets every
    column, so that row gives them all; otherwise each column's newest setting change is taken over the window.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    op = F.col("_cdc_op")
    order = F.col(ORDER)
    newest_first = Window.partitionBy(*spec.keys).orderBy(order.desc())
    whole = newest_first.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    partial = partial_updates and "_cdc_changed_columns" in changes.columns
    kept = op != "delete"  # a delete leaves nothing behind
    columns: list[Column] = [
        *[F.col(c) for c in spec.keys],
        order.getField("s").alias("__cdc_n_seq"),
        op.alias("__cdc_n_op"),
        *[F.col(c) for c in spec.metadata],
        F.row_number().over(newest_first).alias("__cdc_rank"),
    ]
    if not partial:
        columns.append(order.getField("s").alias("__cdc_n_image"))
        for name in spec.value_columns:
            columns += [F.when(kept, F.col(name)).alias(name), order.getField("s").alias(_SET + name)]
        ranked = changes.select(*columns)
    else:
        is_partial = (op == "update") & F.col("_cdc_changed_columns").isNotNull()
        columns.append(F.max(F.when(~is_partial, order)).over(whole).getField("s").alias("__cdc_n_image"))
        for name in spec.value_columns:
            sets = ~is_partial | F.array_contains(F.col("_cdc_changed_columns"), name)
            # the newest change that set the column, with its value: one struct, ordered by the change's order
            newest = F.max(F.when(sets, F.struct(order.alias("o"), F.when(kept, F.col(name)).alias("v"))))
            columns.append(newest.over(whole).alias(_SET + name))
        ranked = changes.select(*columns)
        ranked = ranked.select(
            *[c for c in ranked.columns if not c.startswith(_SET)],
            *[
                c
                for name in spec.value_columns
                for c in (
                    F.col(_SET + name).getField("v").alias(name),
                    F.col(_SET + name).getField("o").getField("s").alias(_SET + name),
                )
            ],
        )
    return ranked.where(F.col("__cdc_rank") == 1).drop("__cdc_rank")


def _any(flags: list[Column]) -> Column:
    from pyspark.sql import functions as F

    return reduce(lambda a, b: a | b, flags, F.lit(False))


def _joined(net: DataFrame, stored: DataFrame, spec: ApplySpec, summary: BatchSummary) -> DataFrame:
    """The net changes next to the keys' stored state (``__cdc_e_*``), matched by the keys' text. On a truncate,
    every key stored before it is joined too (its typed key read back from the text), and its state is reset to a
    tombstone at the truncate (``__cdc_was_live`` keeps whether the target still holds its row)."""
    from pyspark.sql import functions as F

    fields = [net.schema[k] for k in spec.keys]
    net = net.withColumn(KEY, key_text(fields))
    old = stored.select(
        F.col(KEY).alias(_STORED_KEY),
        F.col(SEQUENCE).alias("__cdc_e_seq"),
        F.col(DELETED_AT).alias("__cdc_e_deleted_at"),
        F.coalesce(F.col(IMAGE_SEQUENCE), F.col(SEQUENCE)).alias("__cdc_e_image"),
        F.col(COLUMN_SEQUENCES).alias("__cdc_e_map"),
    )
    on = net[KEY] == old[_STORED_KEY]
    e_seq, e_deleted_at = F.col("__cdc_e_seq"), F.col("__cdc_e_deleted_at")
    was_live = e_seq.isNotNull() & e_deleted_at.isNull()
    if summary.truncate is None:
        joined = net.join(old, on, "left").drop(_STORED_KEY)
        return joined.select("*", was_live.alias("__cdc_was_live"), F.lit(False).alias("__cdc_reset"))
    floor = summary.truncate.column()
    joined = net.join(old, on, "full_outer").where(F.col("__cdc_n_seq").isNotNull() | ((e_seq < floor) & was_live))
    reset = F.coalesce(e_seq < floor, F.lit(False))
    replaced = ("__cdc_e_seq", "__cdc_e_deleted_at", "__cdc_e_image", "__cdc_e_map", _STORED_KEY, KEY, *spec.keys)
    stored_keys = key_values(F.col(_STORED_KEY), fields)
    return joined.select(
        *[F.coalesce(F.col(k), typed).alias(k) for k, typed in zip(spec.keys, stored_keys, strict=True)],
        F.coalesce(F.col(KEY), F.col(_STORED_KEY)).alias(KEY),
        *[c for c in joined.columns if c not in replaced],
        was_live.alias("__cdc_was_live"),
        F.when(reset, floor).otherwise(e_seq).alias("__cdc_e_seq"),
        e_deleted_at.alias("__cdc_e_deleted_at"),  # a reset live key has none yet: resolve stamps the delete
        (reset | e_deleted_at.isNotNull()).alias("__cdc_e_tombstone"),
        F.when(reset, floor).otherwise(F.col("__cdc_e_image")).alias("__cdc_e_image"),
        F.when(~reset, F.col("__cdc_e_map")).alias("__cdc_e_map"),
        reset.alias("__cdc_reset"),
    )


def resolve(
    changes: DataFrame,
    spec: ApplySpec,
    stored: DataFrame,
    summary: BatchSummary,
    now: dt.datetime,
) -> DataFrame:
    """The batch's net changes resolved against the table's key state ``stored`` (:func:`table_state`): one row per
    key whose target row or state changes, with the target action and write flags and the new state columns."""
    from pyspark.sql import functions as F

    seq_type = stored.schema[SEQUENCE].dataType
    joined = _joined(fold(changes, spec, summary.partial_updates > 0), stored, spec, summary)
    if "__cdc_e_tombstone" not in joined.columns:
        joined = joined.withColumn("__cdc_e_tombstone", F.col("__cdc_e_deleted_at").isNotNull())
    e_seq, n_seq = F.col("__cdc_e_seq"), F.col("__cdc_n_seq")
    tombstone = F.col("__cdc_e_tombstone")

    # 1. Is the batch's newest change newer than everything applied? Then it decides whether the row lives.
    newer = (F.coalesce(e_seq.isNull() | (n_seq > e_seq), F.lit(False)) & n_seq.isNotNull()).alias("__cdc_newer")
    step = joined.select("*", newer)
    newer = F.col("__cdc_newer")
    deleted = F.when(newer, F.col("__cdc_n_op") == "delete").otherwise(tombstone)
    live_before = e_seq.isNotNull() & ~tombstone
    step = step.select(
        "*",
        deleted.alias("__cdc_deleted"),
        (~deleted & ~live_before).alias("__cdc_revive"),  # a new or re-inserted row: every column is written
        F.when(newer, n_seq).otherwise(e_seq).alias("__cdc_new_seq"),
        F.greatest(F.col("__cdc_n_image"), F.col("__cdc_e_image")).alias("__cdc_new_image"),
    )
    deleted, revive = F.col("__cdc_deleted"), F.col("__cdc_revive")
    new_seq, new_image = F.col("__cdc_new_seq"), F.col("__cdc_new_image")

    # 2. Which columns the batch writes: those a change newer than what last set them sets.
    stored_sets = [
        F.coalesce(F.element_at(F.col("__cdc_e_map"), F.lit(name)), F.col("__cdc_e_image")).alias(_STORED_SET + name)
        for name in spec.value_columns
    ]
    step = step.select("*", *stored_sets)
    writes: dict[str, Column] = {}
    for name in spec.value_columns:
        set_at, stored_set = F.col(_SET + name), F.col(_STORED_SET + name)
        writes[name] = revive | (set_at.isNotNull() & (stored_set.isNull() | (set_at > stored_set)))
    for name in spec.metadata:
        writes[name] = newer
    step = step.select("*", *[flag.alias(WRITE_PREFIX + c) for c, flag in writes.items()])
    flags = [F.col(WRITE_PREFIX + c) for c in writes]
    touched = _any(flags)
    new_sets = [
        F.when(F.col(WRITE_PREFIX + name), F.coalesce(F.col(_SET + name), new_seq))
        .otherwise(F.col(_STORED_SET + name))
        .alias(_NEW_SET + name)
        for name in spec.value_columns
    ]
    step = step.select("*", *new_sets, (newer | touched | F.col("__cdc_reset")).alias("__cdc_state_changed"))
    step = step.where(F.col("__cdc_state_changed"))

    # 3. The target action and the new state row.
    action = F.when(~deleted & (revive | touched), F.lit("upsert")).when(
        F.col("__cdc_was_live") & deleted, F.lit("delete")
    )
    deleted_at = (
        F.when(~deleted, F.lit(None).cast("timestamp"))
        .when(F.col("__cdc_e_deleted_at").isNotNull(), F.col("__cdc_e_deleted_at"))
        .otherwise(F.lit(now).cast("timestamp"))
    )
    return step.select(
        *spec.keys,
        KEY,
        *[F.when(F.col(WRITE_PREFIX + c), F.col(c)).alias(c) for c in (*spec.value_columns, *spec.metadata)],
        *flags,
        action.alias(ACTION),
        new_seq.alias(SEQUENCE),
        deleted_at.alias(DELETED_AT),
        F.when(new_image != new_seq, new_image).alias(IMAGE_SEQUENCE),
        _column_sequences(spec, new_image, seq_type).alias(COLUMN_SEQUENCES),
    )


def _column_sequences(spec: ApplySpec, image: Column, seq_type: DataType) -> Column:
    """``{column: sequence}`` for the columns set by a partial update newer than the image; null if none."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    empty = F.lit(None).cast(T.MapType(T.StringType(), seq_type))
    if not spec.value_columns:
        return empty
    sets = {name: F.col(_NEW_SET + name) for name in spec.value_columns}
    newer = _any([value > image for value in sets.values()])
    entries = F.array(*[F.struct(F.lit(name).alias("key"), value.alias("value")) for name, value in sets.items()])
    kept = F.filter(entries, lambda entry: entry.getField("value") > image)
    return F.when(newer, F.map_from_entries(kept)).otherwise(empty)


__all__ = ["floor_row", "floors", "fold", "resolve", "state_rows", "state_schema", "table_state"]
