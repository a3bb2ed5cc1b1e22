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
state row. It is built in layers, each naming what the next uses, so Spark computes every decision once per row, as
one SQL statement written from the table's columns: building it column by column through PySpark cost thousands of
py4j calls per table and batch.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence as Sequence_
from typing import TYPE_CHECKING, Final

from cdc_spark.merge.analyzed_plans import AnalyzedPlans
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
    WAS_LIVE,
    WRITE_PREFIX,
)
from cdc_spark.merge.jvm_fold import SET_PREFIX, fold_in_jvm, foldable, partitions_for
from cdc_spark.merge.keys import key_text_sql, key_values_sql
from cdc_spark.merge.spec import ApplySpec
from cdc_spark.merge.statements import literal, quote, sql_type, timestamp
from cdc_spark.session_conf import temporary_views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructField, StructType

_SET: Final = SET_PREFIX  # the sequence of the batch's newest change that set a column
_STORED_SET: Final = "__cdc_stored_set__"  # the sequence of what set a column before the batch
_NEW_SET: Final = "__cdc_new_set__"  # ... and after it
_STORED_KEY: Final = "__cdc_stored_key"  # the stored key's text, before it is coalesced with the batch's
STORED_PREFIX: Final = "__cdc_stored_k"  # the stored key's values in the key's types, by the key's position


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
    return state.where(f"{TABLE} = {literal(table)} AND {KEY} != {literal(FLOOR_KEY)}")


def floors(state: DataFrame, tables: list[str]) -> DataFrame:
    """The stored truncate floors of ``tables`` (columns ``table``, ``floor``)."""
    from pyspark.sql import functions as F

    kept = state.where((F.col(KEY) == FLOOR_KEY) & F.col(TABLE).isin(*tables))
    return kept.select(F.col(TABLE).alias("table"), F.col(SEQUENCE).alias("floor"))


def state_rows(resolved: DataFrame, table: str) -> DataFrame:
    """The new key state rows of one table's resolved batch, in :func:`state_schema`'s columns."""
    return resolved.selectExpr(
        f"{literal(table)} AS {TABLE}", KEY, SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES
    )


def kept_rows(resolved: DataFrame, table: str, spec: ApplySpec) -> DataFrame:
    """:func:`state_rows` with the key's columns beside its text, as :data:`STORED_PREFIX` columns: what a batch can
    keep of its new key state for the next one to join as it is (:mod:`cdc_spark.sinks.kept_states`)."""
    typed = [f"{quote(key)} AS {STORED_PREFIX}{i}" for i, key in enumerate(spec.keys)]
    return resolved.selectExpr(
        f"{literal(table)} AS {TABLE}", KEY, SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES, *typed
    )


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


def _fold_sql(source: str, columns: Sequence_[str], spec: ApplySpec, partial_updates: bool) -> str:
    """SQL of :func:`fold` over the relation ``source`` whose columns are ``columns``."""
    op, order = quote("_cdc_op"), quote(ORDER)
    keys = ", ".join(quote(k) for k in spec.keys)
    newest_first = f"PARTITION BY {keys} ORDER BY {order} DESC"
    whole = f"({newest_first} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
    kept = f"{op} != 'delete'"  # a delete leaves nothing behind
    head = [
        *[quote(k) for k in spec.keys],
        f"{order}.s AS __cdc_n_seq",
        f"{op} AS __cdc_n_op",
        *[quote(c) for c in spec.metadata],
        f"row_number() OVER ({newest_first}) AS __cdc_rank",
    ]
    if not (partial_updates and "_cdc_changed_columns" in columns):
        values = [
            f"CASE WHEN {kept} THEN {quote(name)} END AS {quote(name)}, {order}.s AS {quote(_SET + name)}"
            for name in spec.value_columns
        ]
        ranked = f"SELECT {', '.join([*head, f'{order}.s AS __cdc_n_image', *values])} FROM {source}"
        return f"SELECT * EXCEPT (__cdc_rank) FROM ({ranked}) WHERE __cdc_rank = 1"
    is_partial = f"({op} = 'update' AND _cdc_changed_columns IS NOT NULL)"
    newest = []
    for name in spec.value_columns:
        sets = f"(NOT {is_partial} OR array_contains(_cdc_changed_columns, {literal(name)}))"
        value = f"named_struct('o', {order}, 'v', CASE WHEN {kept} THEN {quote(name)} END)"
        # the newest change that set the column, with its value: one struct, ordered by the change's order
        newest.append(f"(max(CASE WHEN {sets} THEN {value} END) OVER {whole}) AS {quote(_SET + name)}")
    image = f"(max(CASE WHEN NOT {is_partial} THEN {order} END) OVER {whole}).s AS __cdc_n_image"
    ranked = f"SELECT {', '.join([*head, image, *newest])} FROM {source}"
    unpacked = [
        f"{quote(_SET + name)}.v AS {quote(name)}, {quote(_SET + name)}.o.s AS {quote(_SET + name)}"
        for name in spec.value_columns
    ]
    outer = [*[quote(k) for k in spec.keys], "__cdc_n_seq", "__cdc_n_op", *[quote(c) for c in spec.metadata]]
    return f"SELECT {', '.join([*outer, '__cdc_n_image', *unpacked])} FROM ({ranked}) WHERE __cdc_rank = 1"


def fold(changes: DataFrame, spec: ApplySpec, partial_updates: bool = True) -> DataFrame:
    """One row per key: the newest change's operation and metadata, and for every column the value and
    sequence (``__cdc_set__<col>``) of the newest change that set it (partial updates set only their columns).

    One window per key ordered newest first (a single shuffle and sort, which the join with the state then
    reuses): its first row is the newest change. Without partial updates in the batch every change sets every
    column, so that row gives them all; otherwise each column's newest setting change is taken over the window.
    """
    with temporary_views(changes.sparkSession, changes, prefix="cdc_resolve") as (source,):
        return changes.sparkSession.sql(_fold_sql(source, changes.columns, spec, partial_updates))


def _any(flags: list[str]) -> str:
    return "(" + " OR ".join(["false", *flags]) + ")"


def _joined_sql(
    net: str,
    stored: str,
    fields: list[StructField],
    spec: ApplySpec,
    summary: BatchSummary,
    *,
    every_key: bool,
    typed: bool = False,
) -> str:
    """SQL of the net changes (``net``, :func:`fold`'s columns) next to the keys' stored state (``__cdc_e_*``),
    matched by the keys' values: each stored key's text is read back into the batch's key types (the text is the
    same for every value that compares equal, :mod:`cdc_spark.merge.keys`), so the fold's shuffle by the keys
    serves the join too (on 10^6 changes spread as a decode leaves them, a shuffle of the folded rows by their text
    was 1.6 s of the round's task time more than reading the stored keys back).
    On a truncate, every key stored before it is joined too, and its state is reset to a tombstone at the truncate
    (``WAS_LIVE`` keeps whether the target still holds its row). ``every_key``: every stored key is joined, whether
    the batch changes it or not. ``typed``: the stored rows carry the keys' values in the batch's key types
    (:func:`kept_rows`), which are taken as they are instead of read back from the texts."""
    keyed = f"SELECT *, {key_text_sql(fields)} AS {KEY} FROM {net}"
    stored_keys = [f"{STORED_PREFIX}{i}" for i in range(len(fields))]
    values = stored_keys if typed else key_values_sql(KEY, fields, lenient=True)
    old = (
        f"SELECT {', '.join(f'{value} AS {name}' for value, name in zip(values, stored_keys, strict=True))},"
        f" {KEY} AS {_STORED_KEY}, {SEQUENCE} AS __cdc_e_seq, {DELETED_AT} AS __cdc_e_deleted_at,"
        f" coalesce({IMAGE_SEQUENCE}, {SEQUENCE}) AS __cdc_e_image, {COLUMN_SEQUENCES} AS __cdc_e_map FROM {stored}"
    )
    # the texts decide (a value read back into a narrower type may round: 1.2345 as a decimal(10,2)), in a condition
    # Spark does not take for a join key: the values alone place the stored keys where the fold placed the batch's
    same_text = (
        f"(instr(n.{KEY}, o.{_STORED_KEY}) = 1 AND instr(o.{_STORED_KEY}, n.{KEY}) = 1)"  # each the other's head
    )
    on = " AND ".join(
        [*[f"n.{quote(f.name)} = o.{name}" for f, name in zip(fields, stored_keys, strict=True)], same_text]
    )
    # a key the batch does not change (every_key, or a truncate) has its values from the stored text
    keys = [
        f"coalesce(n.{quote(f.name)}, o.{name}) AS {quote(f.name)}" for f, name in zip(fields, stored_keys, strict=True)
    ]
    was_live = "(__cdc_e_seq IS NOT NULL AND __cdc_e_deleted_at IS NULL)"
    if summary.truncate is None:
        join = "FULL OUTER JOIN" if every_key else "LEFT JOIN"
        key = f"coalesce(n.{KEY}, o.{_STORED_KEY})" if every_key else f"n.{KEY}"
        net_keys = ", ".join([KEY, *[quote(f.name) for f in fields]])
        return (
            f"SELECT {', '.join(keys)}, n.* EXCEPT ({net_keys}), {key} AS {KEY},"
            f" o.* EXCEPT ({', '.join([_STORED_KEY, *stored_keys])}), {was_live} AS {WAS_LIVE},"
            f" false AS __cdc_reset, __cdc_e_deleted_at IS NOT NULL AS __cdc_e_tombstone"
            f" FROM ({keyed}) n {join} ({old}) o ON {on}"
        )
    floor = summary.truncate.sql()
    reset = f"coalesce(__cdc_e_seq < {floor}, false)"
    # a key the truncate deletes from the target needs its values: read strictly, a key that does not fit fails
    strict = [f"o.{name}" for name in stored_keys] if typed else key_values_sql(f"o.{_STORED_KEY}", fields)
    keys = [f"coalesce(n.{quote(f.name)}, {value}) AS {quote(f.name)}" for f, value in zip(fields, strict, strict=True)]
    net_only = ["__cdc_n_seq", "__cdc_n_op", *spec.metadata, "__cdc_n_image"]
    for name in spec.value_columns:
        net_only += [name, _SET + name]
    columns = [
        *keys,
        f"coalesce(n.{KEY}, o.{_STORED_KEY}) AS {KEY}",
        *[f"n.{quote(c)}" for c in net_only],
        f"{was_live} AS {WAS_LIVE}",
        f"CASE WHEN {reset} THEN {floor} ELSE __cdc_e_seq END AS __cdc_e_seq",
        "__cdc_e_deleted_at",  # a reset live key has none yet: resolve stamps the delete
        f"({reset} OR __cdc_e_deleted_at IS NOT NULL) AS __cdc_e_tombstone",
        f"CASE WHEN {reset} THEN {floor} ELSE __cdc_e_image END AS __cdc_e_image",
        f"CASE WHEN NOT {reset} THEN __cdc_e_map END AS __cdc_e_map",
        f"{reset} AS __cdc_reset",
    ]
    kept = "true" if every_key else f"n.__cdc_n_seq IS NOT NULL OR (__cdc_e_seq < {floor} AND {was_live})"
    return f"SELECT {', '.join(columns)} FROM ({keyed}) n FULL OUTER JOIN ({old}) o ON {on} WHERE {kept}"


def resolve(
    changes: DataFrame,
    spec: ApplySpec,
    stored: DataFrame,
    summary: BatchSummary,
    now: dt.datetime,
    *,
    every_key: bool = False,
    plans: AnalyzedPlans | None = None,
    fold_by_walk: bool = False,
    rows: int | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """The batch's net changes resolved against the table's key state ``stored`` (:func:`table_state`): one row per
    key whose target row or state changes, with the target action and write flags, whether the target held the key's
    row before the batch (``WAS_LIVE``) and the new state columns.

    ``every_key``: a row for every key of the table's state as well, those the batch leaves as they are with no
    action and their stored state, so that the rows are the table's whole new state (written in place of the old
    one instead of MERGEd into it).

    One SQL statement, planned at once: built from the table's columns as text (no Spark call per column). With
    ``plans``, a statement of the same text over frames of the same schemas (another table of the batch of the same
    shape) is analyzed once (:mod:`cdc_spark.merge.analyzed_plans`). ``fold_by_walk``: the batch is folded by a walk
    over its changes sorted by key (:mod:`cdc_spark.merge.jvm_fold`, for batches of many keys) where its keys and
    the session allow, into ``partitions`` (None: those :func:`~cdc_spark.merge.jvm_fold.partitions_for` gives for
    ``rows``, the stored keys and changes, None when not counted), and that fold's shuffle runs now. ``stored`` may
    carry the keys' values typed (:func:`kept_rows`, of keys of the batch's types), which the join then takes as
    they are.
    """
    from cdc_spark.runtime.java_code import callable_here

    schema = changes.schema
    fields = [schema[k] for k in spec.keys]
    seq_type = stored.schema[SEQUENCE].dataType
    partial = summary.partial_updates > 0
    spark = changes.sparkSession
    walked = fold_by_walk and foldable(schema, spec) and callable_here(spark)
    if walked:
        changes = fold_in_jvm(changes, spec, partial, partitions or partitions_for(spark, rows))
    typed = f"{STORED_PREFIX}0" in stored.columns

    def statement(source: str, state: str) -> str:
        folded = source if walked else f"({_fold_sql(source, schema.names, spec, partial)})"
        joined = _joined_sql(folded, state, fields, spec, summary, every_key=every_key, typed=typed)
        return _resolve_sql(joined, spec, seq_type, now, every_key)

    if plans is not None:
        return plans.sql([changes, stored], statement, prefix="cdc_resolve")
    with temporary_views(changes.sparkSession, changes, stored, prefix="cdc_resolve") as (source, state):
        return changes.sparkSession.sql(statement(source, state))


def _resolve_sql(joined: str, spec: ApplySpec, seq_type: DataType, now: dt.datetime, every_key: bool) -> str:
    """The layers of :func:`resolve` over ``joined`` (:func:`_joined_sql`), each naming what the next uses."""
    # 1. Is the batch's newest change newer than everything applied? Then it decides whether the row lives.
    newer = "(coalesce(__cdc_e_seq IS NULL OR __cdc_n_seq > __cdc_e_seq, false) AND __cdc_n_seq IS NOT NULL)"
    first = f"SELECT *, {newer} AS __cdc_newer FROM ({joined})"
    deleted = "CASE WHEN __cdc_newer THEN __cdc_n_op = 'delete' ELSE __cdc_e_tombstone END"
    live_before = "(__cdc_e_seq IS NOT NULL AND NOT __cdc_e_tombstone)"
    step = (
        f"SELECT *, {deleted} AS __cdc_deleted,"
        # a new or re-inserted row: every column is written
        f" (NOT ({deleted}) AND NOT {live_before}) AS __cdc_revive,"
        " CASE WHEN __cdc_newer THEN __cdc_n_seq ELSE __cdc_e_seq END AS __cdc_new_seq,"
        f" greatest(__cdc_n_image, __cdc_e_image) AS __cdc_new_image FROM ({first})"
    )
    # 2. Which columns the batch writes: those a change newer than what last set them sets.
    stored_sets = [
        f"coalesce(element_at(__cdc_e_map, {literal(name)}), __cdc_e_image) AS {quote(_STORED_SET + name)}"
        for name in spec.value_columns
    ]
    step = f"SELECT {', '.join(['*', *stored_sets])} FROM ({step})"
    writes: dict[str, str] = {}
    for name in spec.value_columns:
        set_at, stored_set = quote(_SET + name), quote(_STORED_SET + name)
        writes[name] = f"(__cdc_revive OR ({set_at} IS NOT NULL AND ({stored_set} IS NULL OR {set_at} > {stored_set})))"
    for name in spec.metadata:
        writes[name] = "__cdc_newer"
    flagged = [f"{flag} AS {quote(WRITE_PREFIX + c)}" for c, flag in writes.items()]
    step = f"SELECT {', '.join(['*', *flagged])} FROM ({step})"
    flags = [quote(WRITE_PREFIX + c) for c in writes]
    new_sets = [
        f"CASE WHEN {quote(WRITE_PREFIX + name)} THEN coalesce({quote(_SET + name)}, __cdc_new_seq)"
        f" ELSE {quote(_STORED_SET + name)} END AS {quote(_NEW_SET + name)}"
        for name in spec.value_columns
    ]
    step = f"SELECT {', '.join(['*', *new_sets, f'{_any(flags)} AS __cdc_touched'])} FROM ({step})"
    # a key the batch leaves as it was: no row, or (every_key) its stored state as it is
    step = f"SELECT *, NOT (__cdc_newer OR __cdc_touched OR __cdc_reset) AS __cdc_unchanged FROM ({step})"
    if not every_key:
        step = f"SELECT * FROM ({step}) WHERE NOT __cdc_unchanged"

    # 3. The target action and the new state row.
    action = (
        "CASE WHEN NOT __cdc_deleted AND (__cdc_revive OR __cdc_touched) THEN 'upsert'"
        f" WHEN {WAS_LIVE} AND __cdc_deleted THEN 'delete' END"
    )
    # ``now`` read from a one-element array at a position taken from the row (1 wherever it is read): Spark writes a
    # timestamp literal into the generated code as a number, so the resolve's code (a class of thousands of lines a
    # table) would be new, compiled again, every batch; an array literal is a reference and the code stays the same
    now_here = f"element_at(array({timestamp(now)}), CAST(coalesce(__cdc_deleted, true) AS INT))"
    deleted_at = (
        "CASE WHEN NOT __cdc_deleted THEN CAST(NULL AS TIMESTAMP) WHEN __cdc_e_deleted_at IS NOT NULL"
        f" THEN __cdc_e_deleted_at ELSE {now_here} END"
    )
    columns = [
        *[quote(k) for k in spec.keys],
        KEY,
        *[
            f"CASE WHEN {quote(WRITE_PREFIX + c)} THEN {quote(c)} END AS {quote(c)}"
            for c in (*spec.value_columns, *spec.metadata)
        ],
        *flags,
        f"{action} AS {ACTION}",
        WAS_LIVE,
        f"__cdc_new_seq AS {SEQUENCE}",
        f"{deleted_at} AS {DELETED_AT}",
        "CASE WHEN __cdc_unchanged THEN CASE WHEN __cdc_e_image != __cdc_e_seq THEN __cdc_e_image END"
        f" WHEN __cdc_new_image != __cdc_new_seq THEN __cdc_new_image END AS {IMAGE_SEQUENCE}",
        f"CASE WHEN __cdc_unchanged THEN __cdc_e_map"
        f" ELSE {_column_sequences(spec, '__cdc_new_image', seq_type)} END AS {COLUMN_SEQUENCES}",
    ]
    return f"SELECT {', '.join(columns)} FROM ({step})"


def _column_sequences(spec: ApplySpec, image: str, seq_type: DataType) -> str:
    """``{column: sequence}`` for the columns set by a partial update newer than the image; null if none."""
    empty = f"CAST(NULL AS map<string, {sql_type(seq_type)}>)"
    if not spec.value_columns:
        return empty
    sets = {name: quote(_NEW_SET + name) for name in spec.value_columns}
    newer = _any([f"{value} > {image}" for value in sets.values()])
    entries = ", ".join(f"named_struct('key', {literal(name)}, 'value', {value})" for name, value in sets.items())
    kept = f"filter(array({entries}), __cdc_entry -> __cdc_entry.value > {image})"
    return f"CASE WHEN {newer} THEN map_from_entries({kept}) ELSE {empty} END"


__all__ = [
    "STORED_PREFIX",
    "floor_row",
    "floors",
    "fold",
    "kept_rows",
    "resolve",
    "state_rows",
    "state_schema",
    "table_state",
]
