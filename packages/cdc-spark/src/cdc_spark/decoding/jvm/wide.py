"""The typed rows of a JVM decode: the wide frame (one row per change, one struct per table), its counts, and each
table's change frame cut from it.

The wide frame is what the batch caches: a change's coordinates, operation, sequence and commit ts in common
columns, ``__tidx`` (its table), ``__bad`` (a value did not convert: its message goes to the codec) and per table
the contract's struct ``__t<index>``. Nothing is shuffled: each task types its own messages.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.batch_cache import table_rows
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Route
from cdc_spark.decoding.jvm.clock import order_clock, seeded_clock
from cdc_spark.decoding.jvm.own_methods import own_method
from cdc_spark.decoding.jvm.table_typing import TableTyping, Typing
from cdc_spark.decoding.kept_plans import KeptPlans
from cdc_spark.partition_clock import PartitionKey
from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row


# Whole-stage code generation off: operator code generation splits a projection into small methods. The typing is
# planned so (when persisted) where the executors leave huge methods to the interpreter (:mod:`cdc_spark.runtime.jit`),
# and its count always: a projection that types every column of every table makes one whole-stage method far larger
# than the JIT compiles by default (measured on 400,000 Canal-JSON messages, typing 5.3 s with it, 4.2 s without;
# 3.5 s with it where huge methods are compiled).
SPLIT_METHODS: Final = {"spark.sql.codegen.wholeStage": "false"}


def typed_wide(rows: DataFrame, typing: Typing, partition_ts: Mapping[PartitionKey, int]) -> Any:
    """Every change as one row: common columns, ``__tidx`` and one typed struct per table; ``__bad`` rows did not
    convert (their messages go to the codec).

    Four projections: each column's texts looked up once; the new image's values, read once; the old image's,
    where they differ; the contract assembled from those. Spark keeps them apart (each one's structs are
    referenced many times by the next), so every lookup and conversion is generated and run once. A table whose
    values come typed is read in the first (:func:`_image_stage`) and assembled in the fourth.
    """

    staged = rows.withColumn("__tidx", typing.index)
    carried = [c for c in staged.columns if c not in (A.AFTER, A.BEFORE, A.BEFORE_BASE, A.CHANGED_FROM)]
    staged = staged.select(*carried, *typing.first)
    staged = staged.select("*", *typing.after)
    staged = staged.select("*", *typing.before)
    return wide_frame(staged, typing.bad, typing.structs, partition_ts)


def typed_messages(
    prepared: DataFrame,
    typing: Typing,
    typings: Sequence[TableTyping],
    records: Sequence[str],
    *,
    own_methods: bool = False,
) -> DataFrame:
    """``prepared`` (an adapter's whose rows are its messages, their parsed values in ``records``) typed by
    ``typing`` as the rows of :func:`change_rows` are: ``__tidx``, each table's contract struct ``__t<index>``,
    ``__change_bad``, and the position and version of its one change; neither the stages nor the records are kept
    (should the speculation miss, the messages are typed from the source).

    ``own_methods`` where the pass runs as whole-stage code: each of the four stages in a generated method of its
    own, and the parse below them in another (:mod:`.own_methods`), so the one stage the pass becomes stays under
    the JVM's limit on a method. Without whole-stage code each boundary would copy the row once more."""
    from pyspark.sql import functions as F

    def apart(frame: DataFrame) -> DataFrame:
        return own_method(frame) if own_methods else frame

    added = {
        "__tidx": F.when(F.col(A.ROUTE) == Route.JVM, typing.index).otherwise(-1),
        A.POSITION: F.lit(0),
        **({} if A.VERSION in prepared.columns else {A.VERSION: F.lit(None).cast("long")}),
    }
    staged = apart(prepared.withColumns(added)).select("*", *typing.first)
    staged = apart(apart(staged).select("*", *typing.after)).select("*", *typing.before)
    typed = apart(staged).select("*", *typing.structs, typing.bad.alias("__change_bad"))
    kept = {*added, "__change_bad", *(f"__t{t.index}" for t in typings)}
    stages = [c for c in typed.columns if c not in prepared.columns and c not in kept]
    return typed.drop(*stages, *records)


def wide_frame(
    staged: DataFrame, bad: Column, structs: Sequence[Column], partition_ts: Mapping[PartitionKey, int]
) -> Any:
    """The typed rows' common columns, ``__bad`` and the tables' structs (``structs``), from ``staged``."""
    from pyspark.sql import functions as F

    clock_ts = seeded_clock(partition_ts)
    running = F.col("clock_before") if "clock_before" in staged.columns else F.lit(None).cast("long")
    before = F.greatest(running, clock_ts.cast("long")) if partition_ts else running
    after = F.col("clock_after") if "clock_after" in staged.columns else None  # a window's (not the task clock's)
    order_ts = F.coalesce(F.col(A.TS), order_clock(before, after))
    return staged.select(
        "topic", "partition", "offset", "__tidx",
        F.col(A.OP).alias("_cdc_op"),
        F.col(A.TS).alias("_cdc_commit_ts"),
        F.struct(
            order_ts.alias("commit_ts"), F.col("partition").cast("int").alias("partition"),
            F.col("offset").alias("offset"), F.col(A.POSITION).cast("int").alias("position"),
        ).alias("_cdc_sequence"),
        F.col(A.VERSION).cast("long").alias("_cdc_schema_version"),
        bad.alias("__bad"),
        *structs,
    )  # fmt: skip


def jvm_part(
    wide: DataFrame,
    part: tuple[Column, list[Column]],
    index: int,
    plans: KeptPlans | None = None,
    *,
    key: Hashable = None,
    schema: str | None = None,
) -> DataFrame:
    """Table ``index``'s change frame: its ``part`` (rows and columns) of ``wide``, read from the checkpoint
    without the other tables' rows where the JVM can (:func:`~cdc_spark.batch_cache.table_rows`). With ``plans``,
    its analyzed plan is kept under ``key``, which names ``part`` (the table's index and schema, say); ``schema``:
    ``wide``'s schema as JSON, where the caller has it."""
    rows, columns = part

    def build(source: DataFrame) -> DataFrame:
        frame: DataFrame = source.where(rows).select(*columns)
        return frame

    source = table_rows(wide, index)
    return build(source) if plans is None else plans.frame(("part", key), source, build, schema=schema)


def typed_counts(
    wide: DataFrame, counted: Sequence[Row] | None, python_shapes: Sequence[tuple[str, str, str]]
) -> list[tuple[int, bool, str, int, int, int | None]]:
    """The typed rows by table index, goodness and topic-partition: how many, and the newest commit ts. Where the
    cache holds the changes typed (a speculation that hit), the shapes' aggregate has ``counted`` them
    (``Shapes.typed_groups``), but for the shapes the codec takes after all (``python_shapes``); otherwise (None)
    one aggregate over ``wide``."""
    from pyspark.sql import functions as F

    if counted is not None:
        excluded = set(python_shapes)
        return [
            (r["__tidx"], r["__change_bad"], r["topic"], r["partition"], r["rows"], r["ts"])
            for r in counted
            if (r[A.DATABASE], r[A.TABLE], r[A.SHAPE]) not in excluded
        ]
    with session_conf(wide.sparkSession, SPLIT_METHODS):
        counted = (
            wide.groupBy("__tidx", "__bad", "topic", "partition")
            .agg(F.count(F.lit(1)).alias("count"), F.max("_cdc_commit_ts").alias("ts"))
            .collect()
        )
    return [(r["__tidx"], r["__bad"], r["topic"], r["partition"], r["count"], r["ts"]) for r in counted]
