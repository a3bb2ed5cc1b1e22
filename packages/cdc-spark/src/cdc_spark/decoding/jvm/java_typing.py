"""Stage two of a JVM decode, in Java: the adapter's row typer types each table's messages in the executors.

Where the adapter has a Java row typer (:mod:`~cdc_spark.decoding.java_rows`) that can type every table of the
batch, each message is one call of its table's function, whose changes become rows (:func:`change_rows`). The
last batch's typings are a speculation (:class:`Speculation`): the next batch types its messages with them in its
shapes' pass, and where its tables and shapes are the same (:func:`covers`) nothing is typed again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Adapter, Route
from cdc_spark.decoding.jvm.table_typing import TableTyping, shape_key, table_index
from cdc_spark.decoding.jvm.wide import wide_frame
from cdc_spark.decoding.reuse import Reuse, app_of
from cdc_spark.partition_clock import PartitionKey

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def java_plans(adapter: Adapter, typings: Sequence[TableTyping]) -> dict[int, str] | None:
    """The adapter's Java row typer's plan of each table, by index, or None where it has none or cannot type a table
    (a column without a Java reader, or of another Spark type in one of the table's shapes)."""
    java_rows = adapter.java_rows
    if java_rows is None:
        return None
    plans: dict[int, str] = {}
    for typing in typings:
        plan = None if typing.typed else java_rows.plan(typing.schema, typing.shapes)
        if plan is None:
            return None
        plans[typing.index] = plan
    return plans


def java_functions(adapter: Adapter, typings: Sequence[TableTyping]) -> dict[int, str] | None:
    """The adapter's Java row typer's function of each table, by index (:func:`java_plans`)."""
    plans = java_plans(adapter, typings)
    if adapter.java_rows is None or plans is None:
        return None
    java_rows = adapter.java_rows
    return {t.index: java_rows.function(t.schema, plans[t.index]) for t in typings}


def with_typed_rows(
    messages: DataFrame,
    typings: Sequence[TableTyping],
    functions: Mapping[int, str],
    kept: Reuse[tuple[Column, tuple[Column, ...]]],
) -> DataFrame:
    """``messages`` with ``__tidx`` (:func:`table_index`) and per table one call of its Java row typer's function
    (``functions``: by table index) on its messages, ``__m<index>``: each change's operation, contract struct and
    whether a value did not convert (null for a message it could not read). Messages read by a typed envelope reader
    (``A.TYPED``) were typed as they were read: its rows are taken instead. The table index and the calls are built
    once per Spark app and what they capture (kept in ``kept``): a few hundred py4j calls, 0.4-0.6 s of a Simple or
    Canal-JSON batch's driver time when built every batch."""
    from pyspark.sql import functions as F

    typed = A.TYPED in messages.columns

    def build() -> tuple[Column, tuple[Column, ...]]:
        tidx = F.col("__tidx")
        indexed = F.when(F.col(A.ROUTE) == Route.JVM, table_index(typings)).otherwise(-1)
        message = F.col("value").cast("binary")
        calls = tuple(
            F.when(
                tidx == index, F.col(A.TYPED)[f"m{index}"] if typed else F.call_udf(name, message, F.col(A.SHAPE))
            ).alias(f"__m{index}")
            for index, name in functions.items()
        )
        return indexed, calls

    names = tuple((t.index, t.schema.database, t.schema.table) for t in typings)
    indexed, calls = kept.get((app_of(messages), names, tuple(functions.items()), typed), build)
    return messages.withColumn("__tidx", indexed).select("*", *calls).drop(A.TYPED)


def change_rows(
    typed: DataFrame, functions: Mapping[int, str], kept: Reuse[tuple[Column, tuple[Column, ...]]]
) -> DataFrame:
    """``typed`` (:func:`with_typed_rows`) with one row per change of a JVM message (any other keeps one row, at
    position 0): ``A.POSITION``, ``A.OP``, ``A.VERSION``, ``__change_bad`` and each table's contract struct
    ``__t<index>`` in place of the typer's arrays. A message the Java could not read has no rows from it: each of its
    changes is bad (its message goes to the codec). Its columns are built once per Spark app (kept in ``kept``)."""
    from pyspark.sql import functions as F

    versioned = A.VERSION in typed.columns

    def build() -> tuple[Column, tuple[Column, ...]]:
        tidx = F.col("__tidx")
        # One row per change: the positions of the message's rows (its rank's position is the last one's)
        positions = F.when(F.col(A.ROUTE) == Route.JVM, F.sequence(F.lit(0), F.col(A.RANK)["position"]))
        op: Column = F.lit(None).cast("string")
        bad: Column = F.lit(True)
        structs: list[Column] = []
        for index in functions:
            change = F.try_element_at(F.col(f"__m{index}"), F.col(A.POSITION) + 1)
            op = F.when(tidx == index, change["op"]).otherwise(op)
            bad = F.when(tidx == index, F.coalesce(change["bad"], F.lit(True))).otherwise(bad)
            structs.append(F.when(tidx == index, change["row"]).alias(f"__t{index}"))
        version = F.col(A.VERSION) if versioned else F.lit(None).cast("long")
        exploded = F.explode(F.coalesce(positions, F.array(F.lit(0)))).alias(A.POSITION)
        return exploded, (op.alias(A.OP), version.alias(A.VERSION), bad.alias("__change_bad"), *structs)

    exploded, columns = kept.get((app_of(typed), tuple(functions), versioned), build)
    staged = typed.select("*", exploded)
    calls = [f"__m{index}" for index in functions]
    return staged.select(*[c for c in typed.columns if c not in calls and c != A.VERSION], A.POSITION, *columns)


def java_typed_wide(
    typed: DataFrame,
    functions: Mapping[int, str],
    partition_ts: Mapping[PartitionKey, int],
    kept: Reuse[tuple[Column, tuple[Column, ...]]],
) -> Any:
    """The wide frame (:func:`~cdc_spark.decoding.jvm.wide.typed_wide`'s) from the Java row typer's calls
    (:func:`with_typed_rows`): one row per change (:func:`change_rows`, its columns kept in ``kept``)."""
    return changes_wide(change_rows(typed, functions, kept), functions, partition_ts)


def changes_wide(changes: DataFrame, functions: Mapping[int, str], partition_ts: Mapping[PartitionKey, int]) -> Any:
    """The wide frame from :func:`change_rows`' rows, for the tables of ``functions``."""
    from pyspark.sql import functions as F

    return wide_frame(changes, F.col("__change_bad"), [F.col(f"__t{index}") for index in functions], partition_ts)


# How many tables a speculation types at most: the batch's own, then the most recent of earlier batches' others
SPECULATED_TABLES: Final = 32


def speculated(typings: Sequence[TableTyping], earlier: Sequence[TableTyping]) -> tuple[TableTyping, ...]:
    """The next speculation: this batch's typings, and those of the tables earlier batches typed that this one did
    not (as recent first, up to :data:`SPECULATED_TABLES` in all), indexed after them. Batches of a stream often
    touch some of its tables each, and streaming queries of one application may decode different tables with the
    same options: each batch then finds its tables in the speculation, not only the last batch's."""
    names = {(t.schema.database, t.schema.table) for t in typings}
    kept = [t for t in earlier if (t.schema.database, t.schema.table) not in names]
    room = max(SPECULATED_TABLES - len(typings), 0)
    return (
        *typings,
        *[attrs.evolve(t, index=len(typings) + k) for k, t in enumerate(kept[:room])],
    )


@attrs.frozen
class Speculation:
    """The last batch's Java typings and their functions, registered in this batch's session: the tables a Java row
    typer typed in the last batch, by Spark app and adapter (its ``expressions_key``), type the next batch's messages
    while its shapes are found, in the same pass."""

    typings: tuple[TableTyping, ...]
    functions: Mapping[int, str]
    envelope: str | None  # the protocol's envelope reader typing these tables as it reads, where it has one

    @classmethod
    def of(cls, kept: Reuse[tuple[TableTyping, ...]], key: Hashable, adapter: Adapter) -> Speculation | None:
        """The speculation ``kept`` under ``key``, None where there is none or the adapter has no Java row typer."""
        java_rows = adapter.java_rows
        typings = kept.peek(key) if java_rows is not None else None
        plans = java_plans(adapter, typings) if typings else None
        if java_rows is None or typings is None or plans is None:
            return None
        functions = {t.index: java_rows.function(t.schema, plans[t.index]) for t in typings}
        envelope = java_rows.envelope_function([(t.index, t.schema, plans[t.index]) for t in typings])
        return cls(typings, functions, envelope)

    def covers(self, typings: Sequence[TableTyping]) -> bool:
        return covers(self.typings, typings)


def covers(speculated: Sequence[TableTyping], typings: Sequence[TableTyping]) -> bool:
    """Whether ``speculated`` types this batch's ``typings`` as they would: each table there, with the same final
    schema, and each of its shapes with the same readers."""
    by_name = {(t.schema.database, t.schema.table): t for t in speculated}
    for typing in typings:
        known = by_name.get((typing.schema.database, typing.schema.table))
        if known is None or known.schema != typing.schema:
            return False
        for shape, readers in typing.shapes.items():
            other = known.shapes.get(shape)
            if other is None or shape_key(other) != shape_key(readers):
                return False
    return True


def hit_typings(speculated: Sequence[TableTyping], typings: Sequence[TableTyping]) -> list[TableTyping]:
    """The speculation's typings of this batch's tables (their indexes are the cache's)."""
    present = {(t.schema.database, t.schema.table) for t in typings}
    return [t for t in speculated if (t.schema.database, t.schema.table) in present]


def typings_in_pass(kept: Sequence[TableTyping] | None, columns: Sequence[str]) -> tuple[TableTyping, ...] | None:
    """The last batch's SQL typings (``kept``) that a batch whose prepared messages have ``columns`` can type in
    its shapes' pass: each table with those of its shapes whose sources ``prepare`` made (a shape of a schema id
    the batch lacks reads a column it does not have); None where none is left."""
    have = set(columns)
    typings = []
    for typing in kept or ():
        shapes = {s: r for s, r in typing.shapes.items() if r.sources is not None and r.sources <= have}
        if shapes:
            typings.append(attrs.evolve(typing, shapes=shapes))
    return tuple(typings) or None
