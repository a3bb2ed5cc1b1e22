"""One micro-batch of a table's changes, made ready to merge: ordered, floored at the latest truncate, summed up.

:func:`summarize_all` is the only action apply runs on a batch's data before it writes: one aggregate over every
table of the batch that returns, per table, the number of changes, the latest truncate and the new truncate floor
(sequences travel as JSON text ``{"v": ...}`` so any orderable ``sequence_by`` type works) and rejects unknown
operations. Nothing else is collected to the driver.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from cdc_core.errors import ConfigError
from cdc_spark.merge.columns import ORDER, TIME
from cdc_spark.merge.spec import CHANGE_OPS, ApplySpec
from cdc_spark.merge.statements import quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType


@attrs.frozen
class Sequence:
    """A value of the ``sequence_by`` type carried as JSON text (``{"v": value}``) between driver and plans."""

    text: str
    data_type: DataType

    def _schema(self) -> StructType:
        from pyspark.sql.types import StructField, StructType

        return StructType([StructField("v", self.data_type)])

    def sql(self) -> str:
        """The value as a SQL expression (the JSON text read back with the sequence's type)."""
        from cdc_spark.merge.statements import literal, sql_type

        return f"from_json({literal(self.text)}, {literal(sql_type(self._schema()))}).v"

    def column(self) -> Column:
        from pyspark.sql import functions as F

        return F.expr(self.sql())


@attrs.frozen(kw_only=True)
class BatchSummary:
    """What :func:`summarize_all` learned about a batch (per table)."""

    changes: int
    partial_updates: int  # updates that set only some columns (``_cdc_changed_columns``)
    ops: Mapping[str, int] = attrs.field(factory=dict)  # changes by operation (insert, update, delete, truncate)
    truncate: Sequence | None  # the batch's latest truncate, if newer than the stored floor
    truncate_time: Sequence | None  # its commit time (closes SCD2 versions), of the sequence's time type
    floor: Sequence | None  # changes at or before it are ignored: max(stored floor, batch truncate)


def check_orderable(data_type: DataType, table: str, column: str) -> None:
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        for field in data_type.fields:
            check_orderable(field.dataType, table, column)
    elif isinstance(data_type, (T.MapType, T.ArrayType, T.BinaryType, T.VariantType)):
        raise ConfigError(f"table {table}: sequence_by column {column} of type {data_type.simpleString()} has no order")


def sequence_type(changes: DataFrame, spec: ApplySpec) -> DataType:
    data_type = changes.schema[spec.sequence_by].dataType
    check_orderable(data_type, spec.table, spec.sequence_by)
    return data_type


def _time_field(data_type: DataType) -> str | None:
    """The field of a struct sequence that holds its commit time: ``commit_ts``, else the first; None for a scalar."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        names = [f.name for f in data_type.fields]
        return "commit_ts" if "commit_ts" in names else names[0]
    return None


def sequence_time(column: Column, data_type: DataType) -> Column:
    """The commit time of a sequence (SCD2 bounds): its ``commit_ts`` field (else its first), or the scalar."""
    field = _time_field(data_type)
    return column if field is None else column.getField(field)


def time_type(data_type: DataType) -> DataType:
    """The type of :func:`sequence_time` of a sequence of ``data_type``."""
    from pyspark.sql import types as T

    field = _time_field(data_type)
    return data_type if field is None or not isinstance(data_type, T.StructType) else data_type[field].dataType


@attrs.frozen
class Pending:
    """One table's batch to summarize: its changes and spec, and the floor stored before the batch."""

    changes: DataFrame
    spec: ApplySpec
    stored_floor: str | None = None  # JSON ``{"v": ...}`` kept by the table's state; see also ``floors``


def _time_sql(seq: str, data_type: DataType) -> str:
    """SQL of :func:`sequence_time` over the sequence expression ``seq``."""
    field = _time_field(data_type)
    return seq if field is None else f"{seq}.{quote(field)}"


def _rows_sql(item: Pending, view: str, seq_type: DataType) -> str:
    """One table's changes (the view ``view``) in the narrow columns every table's rows share, then one row that
    is not a change and carries the table's stored floor (so a table of no changes is still summed up)."""
    from cdc_spark.merge.statements import literal, sql_type

    spec = item.spec
    op, seq = "_cdc_op", quote(spec.sequence_by)
    null_key = " OR ".join(["false", *(f"{quote(key)} IS NULL" for key in spec.keys)])
    partial = "_cdc_op = 'update' AND _cdc_changed_columns IS NOT NULL"
    if "_cdc_changed_columns" not in item.changes.columns:
        partial = "false"
    stored = Sequence(item.stored_floor, seq_type).sql() if item.stored_floor else "NULL"
    columns = [
        f"{literal(spec.table)} AS `table`",
        f"({null_key}) AND {op} != 'truncate' AS null_key",
        f"{op} AS op",
        f"{partial} AS partial",
        f"CASE WHEN {op} = 'truncate' THEN {seq} END AS cut",
        f"{_time_sql(seq, seq_type)} AS seq_time",
        f"CAST(NULL AS {sql_type(seq_type)}) AS stored",
        "true AS is_change",
    ]
    anchor = f"SELECT {literal(spec.table)}, NULL, NULL, false, NULL, NULL, {stored}, false"
    return f"SELECT {', '.join(columns)} FROM {view} UNION ALL {anchor}"


def _aggregate_sql(rows: str) -> str:
    """Each table's counts, latest truncate and stored floor over ``rows`` (:func:`_rows_sql` of every table)."""
    from cdc_spark.merge.statements import literal

    known = ", ".join(literal(name) for name in CHANGE_OPS)
    columns = [
        "`table`",
        "count_if(null_key) AS null_keys",
        "count_if(is_change) AS changes",
        *(f"count_if(op = {literal(name)}) AS op_{name}" for name in CHANGE_OPS),
        "count_if(partial) AS partial",
        # a set, not min(): with one aggregate of its own buffer Spark aggregates by hash, where min() of a string
        # (and max() of a sequence struct) alone make it sort the batch's every change by table first
        f"array_min(collect_set(CASE WHEN is_change AND (op IS NULL OR op NOT IN ({known})) THEN coalesce(op, 'null')"
        " END)) AS unknown",
        "max(cut) AS latest",
        "max_by(seq_time, cut) AS truncate_time",
        "max(stored) AS stored",
    ]
    return f"SELECT {', '.join(columns)} FROM ({rows}) GROUP BY `table`"


def summarize_all(items: list[Pending], floors: DataFrame | None = None) -> dict[str, BatchSummary]:
    """Every table's :class:`BatchSummary` from one aggregate over all their batches (one Spark action, one shuffle
    whatever the number of tables).

    The tables' sequences must share one type. ``floors`` (columns ``table`` and ``floor`` of that type) are
    stored floors read in the same action; a table's ``stored_floor`` counts where it has none there. Unknown
    operations and changes without a key are a ConfigError.

    The aggregate is one SQL statement over the tables' frames as views, analysed once: a union grown frame by
    frame is analysed again at every step, which cost seconds at fifty tables.
    """
    from cdc_spark.session_conf import temporary_views

    if not items:
        return {}
    seq_type = sequence_type(items[0].changes, items[0].spec)
    for item in items[1:]:
        # compared as text, as the key states are grouped: fields that differ only in nullability union alike
        if sequence_type(item.changes, item.spec).simpleString() != seq_type.simpleString():
            raise ConfigError(
                f"table {item.spec.table}: sequences of type {sequence_type(item.changes, item.spec).simpleString()}"
                f" cannot be summarized with {seq_type.simpleString()}"
            )
    spark = items[0].changes.sparkSession
    frames = [item.changes for item in items] + ([floors] if floors is not None else [])
    with temporary_views(spark, *frames, prefix="cdc_summary") as views:
        own = zip(items, views[: len(items)], strict=True)  # the floors' view, if any, is the last
        union = " UNION ALL ".join(_rows_sql(item, view, seq_type) for item, view in own)
        # read by as many tasks as the cluster has cores, not one a partition of each table: fifty tables of three
        # partitions were 150 tasks of a few rows each (1.5 s of a 17 s batch on local[2], its tasks' work 0.6 s)
        tasks = spark.sparkContext.defaultParallelism
        rows = _aggregate_sql(f"SELECT /*+ COALESCE({tasks}) */ * FROM ({union})")
        stored = "stored"
        if floors is not None:
            rows = f"SELECT r.*, f.floor FROM ({rows}) r LEFT JOIN {views[-1]} f ON r.`table` = f.`table`"
            stored = "coalesce(floor, stored)"
        newer = f"CASE WHEN {stored} IS NULL OR latest > {stored} THEN latest END"
        columns = [
            "`table`",
            "null_keys",
            "changes",
            *(f"op_{name}" for name in CHANGE_OPS),
            "partial",
            "unknown",
            f"to_json(named_struct('v', {newer})) AS truncate",
            "to_json(named_struct('v', truncate_time)) AS truncate_time",
            f"to_json(named_struct('v', greatest(latest, {stored}))) AS floor",
        ]
        collected = spark.sql(f"SELECT {', '.join(columns)} FROM ({rows})").collect()
    specs = {item.spec.table: item.spec for item in items}
    return {row["table"]: _summary(row, specs[row["table"]], seq_type) for row in collected}


def _summary(row: Any, spec: ApplySpec, seq_type: DataType) -> BatchSummary:
    if row["null_keys"]:  # a null never matches in MERGE: every such change would insert another row
        raise ConfigError(
            f"table {spec.table}: {row['null_keys']} changes have no value in key column(s) {', '.join(spec.keys)};"
            " pass --keys with columns that are never null"
        )
    if row["unknown"] is not None:
        raise ConfigError(
            f"table {spec.table}: unknown _cdc_op {row['unknown']!r}; expected one of {', '.join(CHANGE_OPS)}"
        )

    def sequence(text: str | None, data_type: DataType) -> Sequence | None:
        return Sequence(text, data_type) if text and json.loads(text).get("v") is not None else None

    truncate = sequence(row["truncate"], seq_type)
    return BatchSummary(
        changes=int(row["changes"]),
        partial_updates=int(row["partial"]),
        ops={name: int(row[f"op_{name}"]) for name in CHANGE_OPS if row[f"op_{name}"]},
        truncate=truncate,
        truncate_time=sequence(row["truncate_time"], time_type(seq_type)) if truncate is not None else None,
        floor=sequence(row["floor"], seq_type),
    )


def summarize(changes: DataFrame, spec: ApplySpec, stored_floor: str | None) -> BatchSummary:
    """One table's :class:`BatchSummary` (see :func:`summarize_all`)."""
    return summarize_all([Pending(changes, spec, stored_floor)])[spec.table]


def storable(frame: DataFrame, columns: tuple[str, ...], schema: StructType | None = None) -> DataFrame:
    """Columns neither Delta nor Iceberg can hold, converted: day-time intervals (MySQL TIME) to microseconds.
    ``schema``: ``frame``'s, where the caller has it (reading it is a py4j call)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    schema = frame.schema if schema is None else schema
    intervals = {
        name: F.expr(f"unix_micros(CAST('1970-01-01 00:00:00' AS TIMESTAMP) + {quote(name)})")
        for name in columns
        if isinstance(schema[name].dataType, T.DayTimeIntervalType)
    }
    return frame.withColumns(intervals) if intervals else frame


def ordered(changes: DataFrame, spec: ApplySpec, summary: BatchSummary) -> DataFrame:
    """The batch's row changes after the floor, with ``__cdc_order`` (a total order per key) and ``__cdc_time``.

    Equal sequences are ordered deterministically: deletes last, then by a hash of the change's content. Written as
    SQL text: a few py4j calls, where a Column per step cost one or three each.
    """
    from pyspark.sql import functions as F

    schema = changes.schema
    seq_type = schema[spec.sequence_by].dataType
    seq = quote(spec.sequence_by)
    kept = "_cdc_op != 'truncate'"
    if summary.floor is not None:
        kept += f" AND {seq} > {summary.floor.sql()}"
    frame = storable(changes.where(kept), spec.target_columns, schema)
    content = f"xxhash64(_cdc_op, {', '.join(quote(c) for c in spec.columns)})"
    order = f"named_struct('s', {seq}, 'r', CASE WHEN _cdc_op = 'delete' THEN 1 ELSE 0 END, 'h', {content})"
    return frame.withColumns({ORDER: F.expr(order), TIME: F.expr(_time_sql(seq, seq_type))})


__all__ = [
    "BatchSummary",
    "Pending",
    "Sequence",
    "ordered",
    "sequence_time",
    "sequence_type",
    "storable",
    "summarize",
    "summarize_all",
    "time_type",
]
