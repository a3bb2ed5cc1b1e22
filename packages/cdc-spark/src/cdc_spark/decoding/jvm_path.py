"""Decode in the JVM, with the protocol's codec only for the residue.

One micro-batch, for an :class:`~cdc_spark.decoding.adapter.Adapter`:

1. **Shapes** (one job): the adapter parses every envelope with ``from_json``; a grouping by table and wire shape
   yields one sample message per shape (the only payloads that reach the driver), and by topic-partition the
   newest commit ts (the partition clock). The driver decodes each sample with the codec: that is the shape's
   schema, and the adapter turns it into column readers. Per table the newest shape wins (commit ts, partition,
   offset, position), the Python path's rule.
2. **Typing** (one job): every change becomes one wide row, its table's columns typed by Spark expressions (or by
   the adapter's Java row typer, :mod:`~cdc_spark.decoding.java_rows`) into a struct for that table; the wide frame
   is cached and one small aggregate counts rows per table and rows that did not convert. Where the last batch's
   typings cover this batch's tables and shapes (a speculation: the Java row typer's, or the SQL typing's where an
   adapter's rows are its messages), they type it in step 1 instead, and its one cache holds the typed changes.
3. **Residue** (only when there is one): DDL, claim-check, compressed and malformed messages, shapes the driver
   could not decode, and messages with a value that did not convert go to :class:`PythonPath`, in the executors;
   their rows, control rows and dead letters join the JVM's. Should the residue bring a newer schema for a table
   the JVM typed, that table's messages are decoded in Python too, so each table has one schema.

Nothing is shuffled on the JVM path: each task types its own messages; only the residue is grouped by
topic-partition for the codecs that keep state.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Adapter, Route, Sample, ShapeReaders
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.coordinates import COORDINATES, at_coordinates, join_on_coordinates
from cdc_spark.decoding.jvm_values import Typed
from cdc_spark.decoding.literal_lookup import key_column, key_text, lookup
from cdc_spark.decoding.python_path import (
    MESSAGE_COLUMNS,
    SEED_RANK,
    PythonPath,
    Rank,
    assemble,
    newest,
    row_message,
)
from cdc_spark.decoding.reuse import Reuse, app_of
from cdc_spark.decoding.spark_types import spark_type
from cdc_spark.decoding.steps import Steps
from cdc_spark.decoding.task_clock import TaskSeeds, task_seeds
from cdc_spark.jit import executors_compile_huge_methods
from cdc_spark.partition_clock import PartitionKey, merge_clocks
from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row


@attrs.frozen
class _Shapes:
    """What the shapes job found: samples, message counts per route, the partition clock."""

    samples: list[Sample]
    python_messages: int
    clock: dict[PartitionKey, int]
    # the clock of the messages not routed to the JVM's typing (theirs comes from rows that converted)
    other_clock: dict[PartitionKey, int] = attrs.field(factory=dict)
    # some change without a commit ts follows a timed message in its partition (it is ordered by that one's ts)
    untimed_after_timed: bool = False
    untimed: int = 0  # messages without a commit ts (the running clock's are joined to the rows)
    # Per typed table (``__tidx``), goodness (``__change_bad``) and shape: the changes, their newest ts and the
    # topic-partition, where the cache holds typed changes (a speculation): the typing's counts without a job of theirs
    typed_groups: list[Row] | None = None
    watermarks: int = 0  # watermark messages (none: the control frame need not read the cache for them)
    # every message routed to the codec, where each is the sample of its shape (Simple's schema messages): the driver
    # holds them all; else None
    held: tuple[Message, ...] | None = None
    topics: tuple[str, ...] = ()  # every topic of the batch's messages (none for a null topic)
    # the running clock read by each task as it reads (:mod:`~cdc_spark.decoding.task_clock`), where the messages
    # come in offset order; None: sorted by a window
    task: TaskSeeds | None = None

    def clocked(self, rows: DataFrame, messages: DataFrame) -> DataFrame:
        """``rows`` with the running clock of ``messages`` (:func:`_clocked`) where a change without a commit ts
        follows a timed message; otherwise as they are (none needs it). ``rows`` that are ``messages`` themselves
        take their task clock in place: no join."""
        if not self.untimed_after_timed:
            return rows
        if self.task is not None and rows is messages:
            RUNNING_CLOCKS["task"] += 1
            return self.task.clocked(messages)
        return _clocked(rows, messages, self.untimed, self.topics, self.task)


# A message's rank within its group (one topic-partition) is (ts, offset): its ts (-1 for none), then its offset. In
# a partition whose messages come in ts order, the newest message of a group is its last offset and the oldest its
# first: longs, which Spark aggregates by hashing. The first aggregate checks that (the ts at the last offset is the
# newest ts, the one at the first the oldest) and only where it does not hold is the rank aggregated again, as one
# decimal(38,0): ts plus one, then the offset in the low 19 digits (every long from 0 up has at most 19). A decimal
# that wide is a BigInteger to Spark: about a tenth of a Simple decode's executor samples went to it. A struct's max
# Spark aggregates by sorting every message by the group's keys (measured at 10^6 Canal-JSON messages: 0.78 s
# against the decimal's 0.40 s), kept for a frame's own offsets below zero.
_OFFSET_DIGITS: Final = 10**19
_RANK_ORDER: Final = "decimal(38,0)"


def _rank_order() -> Column:
    from pyspark.sql import functions as F

    rank = F.col(A.RANK)
    shifted = rank["ts"].cast(_RANK_ORDER) + F.lit(1)  # ts may be the largest long
    return shifted * F.lit(str(_OFFSET_DIGITS)).cast(_RANK_ORDER) + rank["offset"].cast(_RANK_ORDER)


def _rank(row: Row, end: str) -> Rank:
    """The newest (``end``: rank) or oldest (oldest) rank of a group of :func:`_shape_groups`."""
    if f"{end}_offset" in row.__fields__:  # a group in ts order: its last (first) offset and its newest (oldest) ts
        return (row[f"{end}_ts"], row["partition"] or 0, row[f"{end}_offset"], row[f"{end}_position"])
    ranked = row[end]
    if not isinstance(ranked, Decimal):  # a frame's own offsets, not Kafka's: the struct itself was aggregated
        return (ranked["ts"], ranked["partition"], ranked["offset"], ranked["position"])
    ts_part, offset = divmod(int(ranked), _OFFSET_DIGITS)
    return (ts_part - 1, row["partition"] or 0, offset, row[f"{end}_position"])


def _in_ts_order(row: Row) -> bool:
    """Whether a group of the first aggregate has its newest ts at its last offset and its oldest at its first."""
    return bool(
        row["lowest_offset"] >= 0 and row["ts_at_last"] == row["rank_ts"] and row["ts_at_first"] == row["oldest_ts"]
    )


def _shape_groups(prepared: DataFrame, changes: bool = False) -> list[Row]:
    """One row per route, table, shape, sampling and topic-partition: messages, newest and oldest rank (by offset
    where the group is in ts order, else by :func:`_rank_order`, or where an offset is negative by the rank struct
    itself), newest commit ts and how many messages have none. With ``changes`` (``prepared`` holds a row per typed
    change, :func:`_changes`), also per typed table and goodness of the change, with ``rows``, how many."""
    from pyspark.sql import functions as F

    keys = [A.ROUTE, A.DATABASE, A.TABLE, A.SHAPE, A.SAMPLE, "topic", "partition"]
    rank = F.col(A.RANK)
    ts, offset, position = rank["ts"], rank["offset"], rank["position"]
    first = F.col(A.POSITION) == 0 if changes else F.lit(True)  # a message's own row
    counts = [
        F.count_if(first).alias("messages"),
        F.max(A.TS).alias("ts"),
        F.count_if(F.col(A.TS).isNull() & first).alias("untimed"),
        F.min(offset).alias("lowest_offset"),
    ]
    if changes:
        keys += ["__tidx", "__change_bad"]
        counts.append(F.count(F.lit(1)).alias("rows"))
    groups = (
        prepared.groupBy(*keys)
        .agg(
            *counts,
            F.max(ts).alias("rank_ts"),
            F.max(offset).alias("rank_offset"),
            F.max_by(ts, offset).alias("ts_at_last"),
            F.max_by(position, offset).alias("rank_position"),
            F.min(ts).alias("oldest_ts"),
            F.min(offset).alias("oldest_offset"),
            F.min_by(ts, offset).alias("ts_at_first"),
            F.min_by(position, offset).alias("oldest_position"),
        )
        .collect()
    )
    if all(_in_ts_order(row) for row in groups):
        return groups
    if all(row["lowest_offset"] >= 0 for row in groups):
        order = _rank_order()
        return (
            prepared.groupBy(*keys)
            .agg(
                *counts,
                F.max(order).alias("rank"),
                F.max_by(position, order).alias("rank_position"),
                F.min(order).alias("oldest"),
                F.min_by(position, order).alias("oldest_position"),
            )
            .collect()
        )
    return prepared.groupBy(*keys).agg(*counts, F.max(A.RANK).alias("rank"), F.min(A.RANK).alias("oldest")).collect()


def _find_shapes(
    prepared: DataFrame, messages: DataFrame, described: Callable[[str, str, str], bool], changes: bool = False
) -> _Shapes:
    """One aggregate per shape and topic-partition (:func:`_shape_groups`), then the newest and the oldest message
    of each sampled shape fetched by their coordinates: no payload goes through the aggregate. A message routed to
    the JVM comes from ``messages`` (the source; ``prepared`` holds no payload of it), any other from ``prepared``
    (the batch's cache holds it whole: the source is not read again). A JVM shape that is ``described(database,
    table, shape)`` already needs no message (its sample has none). With ``changes``, ``prepared`` holds a row per
    typed change (:func:`_shape_groups`)."""
    from pyspark.sql import functions as F

    groups = _shape_groups(prepared, changes)
    typed_groups = [row for row in groups if row[A.ROUTE] == Route.JVM] if changes else None
    clock: dict[PartitionKey, int] = {}
    other_clock: dict[PartitionKey, int] = {}
    untimed: set[PartitionKey] = set()
    untimed_messages = 0
    python_messages = 0
    watermarks = 0
    newest: dict[tuple[str, str, str, bool], tuple[Rank, str]] = {}
    oldest: dict[tuple[str, str, str, bool], tuple[Rank, str]] = {}
    routes: dict[tuple[str, str, str, bool], set[str]] = {}
    for row in groups:
        where = (row["topic"], row["partition"])
        if row["ts"] is not None and row["ts"] > clock.get(where, -1):
            clock[where] = row["ts"]
        if row[A.ROUTE] != Route.JVM and row["ts"] is not None and row["ts"] > other_clock.get(where, -1):
            other_clock[where] = row["ts"]
        if row[A.ROUTE] == Route.PYTHON:
            python_messages += row["messages"]
        if row[A.ROUTE] == Route.WATERMARK:
            watermarks += row["messages"]
        untimed_messages += row["untimed"]
        if row[A.ROUTE] == Route.JVM and row["untimed"]:
            untimed.add(where)
        if not row[A.SAMPLE] or row[A.DATABASE] is None or row[A.TABLE] is None:
            continue
        rank, first = _rank(row, "rank"), _rank(row, "oldest")
        key = (row[A.DATABASE], row[A.TABLE], row[A.SHAPE] or "", row[A.ROUTE] == Route.JVM)
        routes.setdefault(key, set()).add(row[A.ROUTE])
        if key not in newest or (rank, row["topic"]) > newest[key]:
            newest[key] = (rank, row["topic"])
        if key not in oldest or (first, row["topic"]) < oldest[key]:
            oldest[key] = (first, row["topic"])
    untimed_after_timed = bool(untimed & clock.keys())
    topics = tuple(sorted({row["topic"] for row in groups if row["topic"] is not None}))
    if not newest:
        return _Shapes(
            [], python_messages, clock, other_clock, untimed_after_timed, untimed_messages, typed_groups, watermarks,
            topics=topics,
        )  # fmt: skip
    known = {key for key in newest if key[3] and described(*key[:3])}
    key_of = {(topic, rank[1], rank[2]): key for picked in (newest, oldest) for key, (rank, topic) in picked.items()
              if key not in known}  # fmt: skip
    ends = {(t, p, o, key[3]) for (t, p, o), key in key_of.items()}
    # the batch's cache keeps the payloads of the messages not routed to the JVM: no second read of the source
    fetched = _fetched(
        (messages, {(t, p, o) for t, p, o, jvm in ends if jvm}),
        (prepared.where(F.col(A.ROUTE) != Route.JVM), {(t, p, o) for t, p, o, jvm in ends if not jvm}),
    )
    samples: list[Sample] = []
    for (database, table, shape, jvm), (rank, topic) in newest.items():
        if (database, table, shape, jvm) in known:
            samples.append(Sample(database=database, table=table, shape=shape, message=None, rank=rank, jvm=jvm))
            continue
        found = fetched.get((topic, rank[1], rank[2]))
        if found is None:
            continue
        first, first_topic = oldest[(database, table, shape, jvm)]
        other = fetched.get((first_topic, first[1], first[2]))
        fallback = None if other is None or other is found else row_message(other)
        samples.append(
            Sample(database=database, table=table, shape=shape, message=row_message(found), rank=rank, jvm=jvm,
                   fallback=fallback)
        )  # fmt: skip
    residue = {(t, p, o) for t, p, o, jvm in ends if not jvm and routes.get(key_of[t, p, o]) == {Route.PYTHON.value}}
    held = [row_message(fetched[end]) for end in residue if end in fetched]  # PythonPath.run puts them in order
    return _Shapes(
        samples, python_messages, clock, other_clock, untimed_after_timed, untimed_messages, typed_groups, watermarks,
        held=tuple(held) if held and len(held) == python_messages else None, topics=topics,
    )  # fmt: skip


def _fetched(*wanted: tuple[DataFrame, set[tuple[str, int, int]]]) -> dict[tuple[str, int, int], Row]:
    """The messages at the coordinates (topic, partition, offset) wanted of each frame, by them: one job."""
    from pyspark.sql import functions as F

    found: DataFrame | None = None
    for frame, ends in wanted:
        if not ends:
            continue
        # The offsets first, a set of longs, cheap to test on every message; then the coordinates (at_coordinates)
        offsets = F.col("offset").isin(*sorted({o for _, _, o in ends}))
        picked = frame.where(offsets & at_coordinates(ends)).select(*MESSAGE_COLUMNS)
        found = picked if found is None else found.unionByName(picked)
    rows = [] if found is None else found.collect()
    return {(r["topic"], r["partition"], r["offset"]): r for r in rows}


# In the cache, a message's rank is its last row's position alone: the rest of it is the ts and coordinates, cached
# anyway, and a struct column is copied whole into the cache and out of it on every read of one of its fields.
_LAST: Final = "__last"


def _without_payloads(prepared: DataFrame, keep_value: bool = False) -> DataFrame:
    """What the batch's cache holds: a message the JVM types without its key and value (they are parsed already;
    Debezium's with their schemas are most of a message), any other whole, for the codec. A JVM message the codec
    needs after all (a value the JVM could not convert, a shape it cannot describe) comes from the source
    (:func:`_whole`), as do the samples. ``keep_value``: the value stays, for a Java row typer that reads it. The
    rank is kept as its position alone (:func:`_ranked` makes it again)."""
    from pyspark.sql import functions as F

    routed_here = F.col(A.ROUTE) == Route.JVM
    dropped = ("key",) if keep_value else ("key", "value")
    stripped = prepared.withColumns({name: F.when(~routed_here, F.col(name)) for name in dropped})
    return stripped.withColumn(_LAST, F.col(A.RANK)["position"]).drop(A.RANK)


def _ranked(stored: DataFrame) -> DataFrame:
    """The cache of :func:`_without_payloads` with ``A.RANK`` made again (where it is read)."""
    from pyspark.sql import functions as F

    return stored.withColumn(A.RANK, A.rank(F.col(_LAST))).drop(_LAST)


def _whole(residue: DataFrame, messages: DataFrame) -> DataFrame:
    """The ``residue``'s messages with their payloads: those the cache holds without theirs, from ``messages`` (the
    source), by their coordinates. Where the residue's filter routes none of those, Spark's optimizer finds the
    join empty and the source is not read again."""
    from pyspark.sql import functions as F

    routed_here = F.col(A.ROUTE) == Route.JVM
    wanted = residue.where(routed_here).select(*COORDINATES)
    fetched = join_on_coordinates(messages, wanted, "left_semi")
    return residue.where(~routed_here).select(*MESSAGE_COLUMNS).unionByName(fetched.select(*MESSAGE_COLUMNS))


def _with_running_clock(prepared: DataFrame, topics: Sequence[str]) -> DataFrame:
    """``clock_before``: the newest commit ts of the messages before each one in its partition (a shuffle by
    partition, so only asked for when a change without a ts follows a timed message). ``topics``: every topic of
    ``prepared`` (none: its topics are not known). The window sorts by its partitioning first: a topic's number in
    ``topics`` in place of its name, as every message of a partition ties on it and a tie of names compares their
    bytes (at 10^6 Avro messages with tombstone deletes, 6% of the executors' samples)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    topic = lookup({name: k for k, name in enumerate(topics)}, F.col("topic")) if topics else F.col("topic")
    partitioned = Window.partitionBy(topic, F.col("partition")).orderBy("offset")
    before = partitioned.rowsBetween(Window.unboundedPreceding, -1)
    return prepared.withColumn("clock_before", F.max(A.TS).over(before))


# Up to this many changes without a commit ts, their clocks are broadcast to the rows (about 100 bytes each in every
# executor); more are joined by a shuffle. Either way the window itself sorts the messages' coordinates and ts only:
# over whole rows it shuffled and sorted every typed value (measured at 10^6 Avro messages with tombstone deletes:
# a quarter of the executors' samples).
BROADCAST_CLOCKS: Final = 250_000


# How many times each way of finding the running clock was planned: by the tasks as they read ("task") or sorted
# by a window ("sorted")
RUNNING_CLOCKS: Final[Counter[str]] = Counter()


def _clocked(
    rows: DataFrame, messages: DataFrame, untimed: int, topics: Sequence[str], task: TaskSeeds | None = None
) -> DataFrame:
    """``rows`` (any number per message, by :data:`COORDINATES`) with ``clock_before`` of ``messages`` (one row per
    message, with ``A.TS``; ``untimed`` of them without a ts, ``topics`` all their topics), null where a message has
    a ts (its own orders it). With ``task`` (the seeds of ``messages``) each task reads the clock as it reads its
    messages; without, a window sorts them."""
    from pyspark.sql import functions as F

    narrow = messages.select(*COORDINATES, A.TS)
    RUNNING_CLOCKS["sorted" if task is None else "task"] += 1
    narrow = _with_running_clock(narrow, topics) if task is None else task.clocked(narrow)
    clocks = narrow.where(F.col(A.TS).isNull()).select(*COORDINATES, "clock_before")
    return join_on_coordinates(rows, clocks, "left", broadcast=untimed <= BROADCAST_CLOCKS)


# Whole-stage code generation off: operator code generation splits a projection into small methods. The typing is
# planned so (when persisted) where the executors leave huge methods to the interpreter (:mod:`cdc_spark.jit`), and
# its count always: a projection that types every column of every table makes one whole-stage method far larger
# than the JIT compiles by default (measured on 400,000 Canal-JSON messages, typing 5.3 s with it, 4.2 s without;
# 3.5 s with it where huge methods are compiled).
SPLIT_METHODS: Final = {"spark.sql.codegen.wholeStage": "false"}

# The batch's own caches (the parse, the typed rows), as Spark takes them when persist() is called. They live for
# one batch, so their string columns are not dictionary-encoded: gathering the statistics for it hashes every value
# into a boxed map (4% of a Debezium decode's executor samples). A cached batch holds 2,000 rows, not Spark's
# 10,000, so fewer column buffers exceed G1's large-object size (each is allocated on its own and may start a
# marking cycle). Measured at 10^6 Debezium messages: typing 12.6 -> 9.7 s, the whole decode 31.7 -> 28.6 s.
BATCH_CACHE: Final = {
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
    "spark.sql.inMemoryColumnarStorage.batchSize": "2000",
}


def _key(database: Column | str, table: Column | str, shape: Column | str) -> Column:
    from pyspark.sql import functions as F

    parts = [F.lit(p) if isinstance(p, str) else p for p in (database, table, shape)]
    return F.concat_ws("\u0000", *parts)


@attrs.frozen
class _TableTyping:
    """How one table's rows are typed: its final schema and the readers of each of its shapes."""

    index: int
    schema: TableSchema
    shapes: Mapping[str, ShapeReaders]

    @property
    def typed(self) -> bool:
        """Whether the table's values come typed, per shape (:attr:`ShapeReaders.image`), not in text maps."""
        return any(shape.typed for shape in self.shapes.values())


@attrs.frozen
class _Read:
    """One column of one image: its value in the final schema's type, its zero-date text (None: the column's
    readers have no zero dates), and whether the wire had a value (typed images only)."""

    value: Column
    zero: Column | None
    present: Column


def _parse_of(typing: _TableTyping, name: str) -> A.ParsedReader | None:
    """The column's :class:`~cdc_spark.decoding.adapter.ParsedReader` when every shape that reads its text parses
    it alike (one ``from_json`` per image then serves them all), else None (each reader parses where it reads)."""
    readers = [shape.readers.get(name) for shape in typing.shapes.values() if shape.image is None]
    parsed = [r for r in readers if isinstance(r, A.ParsedReader)]
    if not parsed or len(parsed) != len([r for r in readers if r is not None]):
        return None
    return parsed[0] if len({r.schema for r in parsed}) == 1 else None


def _parses(typing: _TableTyping) -> dict[int, A.ParsedReader]:
    """By column position: the columns whose text stage one parses (:func:`_parse_of`)."""
    found = {k: _parse_of(typing, c.name) for k, c in enumerate(typing.schema.stored_columns)}
    return {k: parse for k, parse in found.items() if parse is not None}


def _parsed_text(texts: Column, image: str, k: int, parses: Mapping[int, A.ParsedReader]) -> Column | None:
    """Stage one's parse of column ``k``'s text in ``image`` (``a``: the new one, ``b``: the old one), if made."""
    return texts[f"j{image}{k}"] if k in parses else None


def _column(typing: _TableTyping, name: str, text: Column | None, parsed: Column | None = None) -> _Read:
    """One column of one image, read by its shape's reader from ``text`` (the column's text in the image's map)
    or, for typed images, from the shape's own value expression, and cast to the final schema's type; ``parsed``:
    the text's parse, made once in stage one (:func:`_parse_of`)."""
    from pyspark.sql import functions as F

    target = spark_type(next(c.data_type for c in typing.schema.stored_columns if c.name == name))
    by_signature: dict[Any, list[str]] = {}
    readers: dict[Any, A.Reader] = {}
    sources: dict[Any, Column] = {}
    for shape, shape_readers in typing.shapes.items():
        reader = shape_readers.readers.get(name)
        source = text if shape_readers.image is None else shape_readers.image.get(name)
        if reader is None or source is None:
            continue
        signature = shape_readers.signatures[name]
        by_signature.setdefault(signature, []).append(shape)
        readers[signature] = reader
        sources[signature] = source
    if not readers:
        return _Read(F.lit(None).cast(target), None, F.lit(False))

    # A shape's own type to the final one: a widening, or a bad value (null where the text was not).
    def read(reader: A.Reader, source: Column) -> Typed:
        if parsed is not None and isinstance(reader, A.ParsedReader) and source is text:
            return reader.read(source, parsed)
        return reader(source)

    typed = [(shapes, read(readers[signature], sources[signature]), sources[signature])
             for signature, shapes in by_signature.items()]  # fmt: skip
    if len(typed) == 1:
        _, only, source = typed[0]
        return _Read(only.value.cast(target), only.zero, source.isNotNull())
    shape_column = F.col(A.SHAPE)
    value: Column | None = None
    zero: Column | None = None
    present: Column | None = None
    has_zero = any(part.zero is not None for _, part, _ in typed)
    for shapes, part, source in typed:
        test = shape_column.isin(*shapes)
        cast = part.value.cast(target)
        value = F.when(test, cast) if value is None else value.when(test, cast)
        present = F.when(test, source.isNotNull()) if present is None else present.when(test, source.isNotNull())
        if has_zero:
            part_zero = part.zero if part.zero is not None else F.lit(None).cast("string")
            zero = F.when(test, part_zero) if zero is None else zero.when(test, part_zero)
    assert value is not None and present is not None
    return _Read(value, zero, F.coalesce(present, F.lit(False)))


def _after_text(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.element_at(F.col(A.AFTER), F.lit(name))


def _before_text(name: str) -> Column:
    """The old image's text of ``name``: from BEFORE, or where it lacks the column, from BEFORE_BASE."""
    from pyspark.sql import functions as F

    before, base = F.col(A.BEFORE), F.col(A.BEFORE_BASE)
    key = F.lit(name)
    return F.when(base.isNotNull() & ~F.map_contains_key(before, key), F.element_at(base, key)).otherwise(
        F.element_at(before, key)
    )


def _names_in(image: Column, names: Sequence[str]) -> Column:
    """The ``names`` that are keys of ``image``, in order."""
    from pyspark.sql import functions as F

    return F.array_compact(F.array(*[F.when(F.map_contains_key(image, F.lit(n)), F.lit(n)) for n in names]))


def _struct(fields: list[Column]) -> Column:
    from pyspark.sql import functions as F

    return F.struct(*fields)


def _none() -> Column:
    from pyspark.sql import functions as F

    return F.lit(None).cast("string")


def _text_stage(typing: _TableTyping, parses: Mapping[int, A.ParsedReader]) -> Column:
    """Stage one of a table: each column's text in both images, looked up in the maps once (``ta<k>``, ``tb<k>``),
    their parse where the column's readers parse JSON (``ja<k>``, ``jb<k>``), the changed columns, and whether there
    is an old image; the maps are not carried further."""
    from pyspark.sql import functions as F

    names = [c.name for c in typing.schema.stored_columns]
    image = F.when(F.col(A.OP) == "delete", F.col(A.BEFORE)).otherwise(F.col(A.AFTER))
    present = sum((F.map_contains_key(image, F.lit(n)).cast("int") for n in names), F.lit(0))
    changed = F.when(F.col(A.CHANGED_FROM).isNotNull(), _names_in(F.col(A.CHANGED_FROM), names)).when(
        image.isNotNull() & (present < len(names)),
        _names_in(image, names),  # an older, narrower schema
    )
    fields = [t for k, n in enumerate(names) for t in (_after_text(n).alias(f"ta{k}"), _before_text(n).alias(f"tb{k}"))]
    for k, parse in parses.items():
        name = names[k]
        fields += [parse.parse(_after_text(name)).alias(f"ja{k}"), parse.parse(_before_text(name)).alias(f"jb{k}")]
    return F.struct(*fields, changed.alias("changed"), F.col(A.BEFORE).isNotNull().alias("has_before"))


def _after_stage(typing: _TableTyping, parses: Mapping[int, A.ParsedReader]) -> tuple[Column, list[tuple[str, bool]]]:
    """Stage two: the new image's columns read once, into a struct (``a<k>`` values, ``za<k>`` zero-date texts),
    and per column whether it can have zero dates."""
    texts = _texts(typing)
    fields: list[Column] = []
    layout: list[tuple[str, bool]] = []
    for k, column in enumerate(typing.schema.stored_columns):
        after = _column(typing, column.name, texts[f"ta{k}"], _parsed_text(texts, "a", k, parses))
        fields.append(after.value.alias(f"a{k}"))
        if after.zero is not None:
            fields.append(after.zero.alias(f"za{k}"))
        layout.append((column.name, after.zero is not None))
    return _struct(fields), layout


def _image_stage(typing: _TableTyping) -> tuple[Column, list[tuple[str, bool]]]:
    """Stage one of a table whose values come typed: each column read from its shape's value (``a<k>``, ``za<k>``
    as in stage two), whether the wire had a value (``p<k>``), and the changed columns of rows whose shape has
    fewer columns than the table's schema (an older version; the Python path's rule)."""
    from pyspark.sql import functions as F

    fields: list[Column] = []
    layout: list[tuple[str, bool]] = []
    for k, column in enumerate(typing.schema.stored_columns):
        read = _column(typing, column.name, None)
        fields += [read.value.alias(f"a{k}"), read.present.alias(f"p{k}")]
        if read.zero is not None:
            fields.append(read.zero.alias(f"za{k}"))
        layout.append((column.name, read.zero is not None))
    names = [c.name for c in typing.schema.stored_columns]
    narrower: dict[tuple[str, ...], list[str]] = {}
    for shape, readers in typing.shapes.items():
        image = readers.image or {}
        present = tuple(n for n in names if n in image)
        if len(present) < len(names):
            narrower.setdefault(present, []).append(shape)
    changed: Column = F.lit(None).cast("array<string>")
    for present, shapes in narrower.items():
        listed = F.array(*[F.lit(n) for n in present]).cast("array<string>")
        changed = F.when(F.col(A.SHAPE).isin(*shapes), listed).otherwise(changed)
    return F.struct(*fields, changed.alias("changed")), layout


def _texts(typing: _TableTyping) -> Column:
    from pyspark.sql import functions as F

    return F.col(f"__x{typing.index}")


def _before_stage(typing: _TableTyping, layout: list[tuple[str, bool]], parses: Mapping[int, A.ParsedReader]) -> Column:
    """Stage three: the old image's columns (``b<k>``, ``zb<k>``); a text equal to the new image's reuses its
    value, so an update's full old image is read only where it differs."""
    from pyspark.sql import functions as F

    texts, after = _texts(typing), F.col(f"__va{typing.index}")
    fields: list[Column] = []
    for k, (name, has_zero) in enumerate(layout):
        same = texts[f"tb{k}"].eqNullSafe(texts[f"ta{k}"])
        before = _column(typing, name, texts[f"tb{k}"], _parsed_text(texts, "b", k, parses))
        fields.append(F.when(same, after[f"a{k}"]).otherwise(before.value).alias(f"b{k}"))
        if has_zero:
            own_zero = before.zero if before.zero is not None else _none()
            fields.append(F.when(same, after[f"za{k}"]).otherwise(own_zero).alias(f"zb{k}"))
    return _struct(fields)


def _contract_stage(typing: _TableTyping, layout: list[tuple[str, bool]]) -> tuple[Column, Column]:
    """Stage four, over the others (``__x<index>``, ``__va<index>``, ``__vb<index>``): the contract's struct (its
    columns, ``_cdc_before``, changed columns, zero dates) and whether a text did not convert (null value, no
    zero date)."""
    from pyspark.sql import functions as F

    texts = _texts(typing)
    after_values, before_values_struct = F.col(f"__va{typing.index}"), F.col(f"__vb{typing.index}")
    is_delete = F.col(A.OP) == "delete"
    values: list[Column] = []
    before_values: list[Column] = []
    bad: Column = F.lit(False)
    zeros: list[tuple[str, Column]] = []
    for k, (name, has_zero) in enumerate(layout):
        after, before = after_values[f"a{k}"], before_values_struct[f"b{k}"]
        values.append(F.when(is_delete, before).otherwise(after).alias(name))
        before_values.append(before.alias(name))
        checks = (
            (after, texts[f"ta{k}"], after_values, f"za{k}"),
            (before, texts[f"tb{k}"], before_values_struct, f"zb{k}"),
        )
        for value, text, struct, zero_field in checks:
            failed = text.isNotNull() & value.isNull()
            bad = bad | (failed & struct[zero_field].isNull() if has_zero else failed)
        if has_zero:
            zeros.append((name, F.when(is_delete, before_values_struct[f"zb{k}"]).otherwise(after_values[f"za{k}"])))
    before_struct = F.when(texts["has_before"], F.struct(*before_values))
    struct = F.struct(
        *values,
        before_struct.alias("_cdc_before"),
        texts["changed"].alias("_cdc_changed_columns"),
        _zero_map(zeros).alias("_cdc_zero_dates"),
    )
    return struct, bad


def _zero_map(zeros: Sequence[tuple[str, Column]]) -> Column:
    """``_cdc_zero_dates``: column -> zero-date text, null when the row has none."""
    from pyspark.sql import functions as F

    if not zeros:
        return F.lit(None).cast("map<string,string>")
    entries = [F.when(c.isNotNull(), F.struct(F.lit(n).alias("key"), c.alias("value"))) for n, c in zeros]
    any_zero = F.lit(False)
    for _, c in zeros:
        any_zero = any_zero | c.isNotNull()
    return F.when(any_zero, F.map_from_entries(F.array_compact(F.array(*entries))))


def _image_contract_stage(typing: _TableTyping, layout: list[tuple[str, bool]]) -> tuple[Column, Column]:
    """Stage four of a table whose values come typed (over ``__va<index>``): a change has one image, the new one
    or a delete's old one; a value that did not convert (present, null, no zero date) makes the row bad."""
    from pyspark.sql import functions as F

    read = F.col(f"__va{typing.index}")
    values: list[Column] = []
    bad: Column = F.lit(False)
    zeros: list[tuple[str, Column]] = []
    for k, (name, has_zero) in enumerate(layout):
        values.append(read[f"a{k}"].alias(name))
        failed = read[f"p{k}"] & read[f"a{k}"].isNull()
        bad = bad | (failed & read[f"za{k}"].isNull() if has_zero else failed)
        if has_zero:
            zeros.append((name, read[f"za{k}"]))
    struct = F.struct(
        *values,
        F.when(F.col(A.OP) == "delete", F.struct(*values)).alias("_cdc_before"),
        read["changed"].alias("_cdc_changed_columns"),
        _zero_map(zeros).alias("_cdc_zero_dates"),
    )
    return struct, bad


@attrs.frozen
class _Typing:
    """The typing projections of a batch's tables (:func:`_typed_wide`), built once per :func:`_typings_key`: they
    name columns only, so a later batch with the same key reuses them."""

    index: Column  # the row's table index (``__tidx``)
    first: list[Column]  # stage one: texts, or typed images read
    after: list[Column]
    before: list[Column]
    structs: list[Column]  # stage four: the contract's struct of each table
    bad: Column
    parts: Mapping[int, tuple[Column, list[Column]]]  # per table index: its rows' filter and output columns


# Built typing projections, by key; small, as a job types few distinct sets of shapes at a time.
TYPINGS: Final[Reuse[_Typing]] = Reuse(capacity=8)
# Shapes described in earlier batches, for adapters whose shape digest fixes the readers (``readers_by_shape``).
SHAPES: Final[Reuse[ShapeReaders]] = Reuse(capacity=256)


def _shape_key(readers: ShapeReaders) -> Hashable:
    image = None if readers.image is None else tuple(readers.image)
    return (readers.schema, tuple(sorted(readers.signatures.items(), key=lambda item: item[0])), image)


def _typings_key(app: str | None, adapter: Adapter, typings: Sequence[_TableTyping]) -> Hashable:
    """Everything the projections capture: the Spark app (its JVM objects), the adapter's protocol, options and zones,
    and per table its index, final schema and every shape's schema and signatures (by content, not identity)."""
    tables = tuple(
        (t.index, t.schema, tuple((shape, _shape_key(r)) for shape, r in sorted(t.shapes.items()))) for t in typings
    )
    return (app, adapter.expressions_key(), tables)


@attrs.frozen
class _ShapeReuse:
    """Readers of shapes described in earlier batches (:data:`SHAPES`), for an adapter with ``readers_by_shape``:
    such a shape's sample is neither fetched nor decoded again. Readers of a shape that names a schema version only
    (``ShapeReaders.by_version``) serve where the schemas of earlier batches (``known``) hold theirs: a version
    number alone does not tell one table's schemas apart everywhere (hand-made messages, say)."""

    app: str | None
    adapter: Adapter
    known: Sequence[TableSchema] = ()

    def _key(self, database: str, table: str, shape: str) -> Hashable:
        return (self.app, self.adapter.expressions_key(), database, table, shape)

    def kept(self, database: str, table: str, shape: str) -> bool:
        readers = SHAPES.held(self._key(database, table, shape)) if self.adapter.readers_by_shape else None
        return readers is not None and (not readers.by_version or readers.schema in self.known)

    def described(
        self, samples: Sequence[Sample], known: Sequence[TableSchema]
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        """The adapter's readers for the samples with a message, the kept ones for the others (then kept too)."""
        with_message = [s for s in samples if s.message is not None]
        # a batch of known shapes asks the adapter nothing: its codec's decoder is not even made (TiCDC Avro's makes a
        # registry client, about 25 ms)
        described = self.adapter.describe(with_message, known) if with_message else {}
        retry = [attrs.evolve(s, message=s.fallback, fallback=None) for s in samples
                 if s.fallback is not None and described.get((s.database, s.table, s.shape)) is None]  # fmt: skip
        if retry:  # the newest message of these shapes did not decode: their oldest may
            described.update({k: v for k, v in self.adapter.describe(retry, known).items() if v is not None})
        for sample in samples:
            name = (sample.database, sample.table, sample.shape)
            if sample.jvm and sample.message is None:
                described[name] = SHAPES.peek(self._key(*name))  # None (the codec) if it was dropped meanwhile
            elif self.adapter.readers_by_shape and (readers := described.get(name)) is not None and readers.reusable:
                SHAPES.put(self._key(*name), readers)
        return described


def _table_index(typings: Sequence[_TableTyping]) -> Column:
    """The index of the row's table among ``typings`` (-1: none of them)."""
    from pyspark.sql import functions as F

    # the names compared as they are: a key joined of them was a string made for every message
    database, table = F.col(A.DATABASE), F.col(A.TABLE)
    index = F.lit(-1)
    for typing in typings:
        named = (database == F.lit(typing.schema.database)) & (table == F.lit(typing.schema.table))
        index = F.when(named, F.lit(typing.index)).otherwise(index)
    return index


def _build_typing(typings: Sequence[_TableTyping]) -> _Typing:
    """The four projections of :func:`_typed_wide` for ``typings``."""
    from pyspark.sql import functions as F

    index = _table_index(typings)
    tidx = F.col("__tidx")
    text_typings = [t for t in typings if not t.typed]
    layouts: dict[int, list[tuple[str, bool]]] = {}
    parses = {t.index: _parses(t) for t in text_typings}
    first = [F.when(tidx == t.index, _text_stage(t, parses[t.index])).alias(f"__x{t.index}") for t in text_typings]
    for typing in typings:
        if typing.typed:
            struct, layouts[typing.index] = _image_stage(typing)
            first.append(F.when(tidx == typing.index, struct).alias(f"__va{typing.index}"))
    after_columns: list[Column] = []
    for typing in text_typings:
        struct, layouts[typing.index] = _after_stage(typing, parses[typing.index])
        after_columns.append(F.when(tidx == typing.index, struct).alias(f"__va{typing.index}"))
    before_columns = [
        F.when(tidx == t.index, _before_stage(t, layouts[t.index], parses[t.index])).alias(f"__vb{t.index}")
        for t in text_typings
    ]
    structs: list[Column] = []
    bad: Column = F.lit(False)
    for typing in typings:
        contract = _image_contract_stage if typing.typed else _contract_stage
        struct, table_bad = contract(typing, layouts[typing.index])
        structs.append(F.when(tidx == typing.index, struct).alias(f"__t{typing.index}"))
        bad = F.when(tidx == typing.index, table_bad).otherwise(bad)
    parts = {t.index: _part_columns(t) for t in typings}
    return _Typing(index, first, after_columns, before_columns, structs, bad, parts)


def _java_plans(adapter: Adapter, typings: Sequence[_TableTyping]) -> dict[int, str] | None:
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


def _java_functions(adapter: Adapter, typings: Sequence[_TableTyping]) -> dict[int, str] | None:
    """The adapter's Java row typer's function of each table, by index (:func:`_java_plans`)."""
    plans = _java_plans(adapter, typings)
    if adapter.java_rows is None or plans is None:
        return None
    java_rows = adapter.java_rows
    return {t.index: java_rows.function(t.schema, plans[t.index]) for t in typings}


def _seeded_clock(partition_ts: Mapping[PartitionKey, int]) -> Column:
    """The clock each row's topic-partition ended the last batch on (null for one not seen before)."""
    from pyspark.sql import functions as F

    here = key_column(F.col("topic"), F.col("partition"))  # a null topic is a key of its own, as the codecs take it
    return lookup({key_text(t, p): ts for (t, p), ts in partition_ts.items()}, here)


def _typed_wide(rows: DataFrame, typing: _Typing, partition_ts: Mapping[PartitionKey, int]) -> Any:
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
    return _wide(staged, typing.bad, typing.structs, partition_ts)


# Built once per Spark app and what they capture, as the typing projections are (:data:`TYPINGS`): a Java-typed batch's
# table index and typer calls, its change columns, and each table's part columns. Each is a few dozen to a few
# hundred py4j calls, and building them every batch took 0.4-0.6 s of a Simple or Canal-JSON batch's driver time.
ROW_CALLS: Final[Reuse[tuple[Column, tuple[Column, ...]]]] = Reuse(capacity=8)
CHANGE_COLUMNS: Final[Reuse[tuple[Column, tuple[Column, ...]]]] = Reuse(capacity=8)
PARTS: Final[Reuse[tuple[Column, list[Column]]]] = Reuse(capacity=64)


def _with_typed_rows(messages: DataFrame, typings: Sequence[_TableTyping], functions: Mapping[int, str]) -> DataFrame:
    """``messages`` with ``__tidx`` (:func:`_table_index`) and per table one call of its Java row typer's function
    (``functions``: by table index) on its messages, ``__m<index>``: each change's operation, contract struct and
    whether a value did not convert (null for a message it could not read). Messages read by a typed envelope reader
    (``A.TYPED``) were typed as they were read: its rows are taken instead."""
    from pyspark.sql import functions as F

    typed = A.TYPED in messages.columns

    def build() -> tuple[Column, tuple[Column, ...]]:
        tidx = F.col("__tidx")
        table_index = F.when(F.col(A.ROUTE) == Route.JVM, _table_index(typings)).otherwise(-1)
        message = F.col("value").cast("binary")
        calls = tuple(
            F.when(
                tidx == index, F.col(A.TYPED)[f"m{index}"] if typed else F.call_udf(name, message, F.col(A.SHAPE))
            ).alias(f"__m{index}")
            for index, name in functions.items()
        )
        return table_index, calls

    names = tuple((t.index, t.schema.database, t.schema.table) for t in typings)
    table_index, calls = ROW_CALLS.get((app_of(messages), names, tuple(functions.items()), typed), build)
    return messages.withColumn("__tidx", table_index).select("*", *calls).drop(A.TYPED)


def _changes(typed: DataFrame, functions: Mapping[int, str]) -> DataFrame:
    """``typed`` (:func:`_with_typed_rows`) with one row per change of a JVM message (any other keeps one row, at
    position 0): ``A.POSITION``, ``A.OP``, ``A.VERSION``, ``__change_bad`` and each table's contract struct
    ``__t<index>`` in place of the typer's arrays. A message the Java could not read has no rows from it: each of its
    changes is bad (its message goes to the codec)."""
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

    exploded, columns = CHANGE_COLUMNS.get((app_of(typed), tuple(functions), versioned), build)
    staged = typed.select("*", exploded)
    calls = [f"__m{index}" for index in functions]
    return staged.select(*[c for c in typed.columns if c not in calls and c != A.VERSION], A.POSITION, *columns)


def _java_typed_wide(typed: DataFrame, functions: Mapping[int, str], partition_ts: Mapping[PartitionKey, int]) -> Any:
    """:func:`_typed_wide`'s frame from the Java row typer's calls (:func:`_with_typed_rows`): one row per change
    (:func:`_changes`)."""
    return _changes_wide(_changes(typed, functions), functions, partition_ts)


def _changes_wide(changes: DataFrame, functions: Mapping[int, str], partition_ts: Mapping[PartitionKey, int]) -> Any:
    """:func:`_typed_wide`'s frame from :func:`_changes`' rows, for the tables of ``functions``."""
    from pyspark.sql import functions as F

    return _wide(changes, F.col("__change_bad"), [F.col(f"__t{index}") for index in functions], partition_ts)


# The tables a Java row typer typed in the last batch, by Spark app and adapter (its ``expressions_key``): the next
# batch types its messages with them while its shapes are found, in the same pass (:func:`decode`).
SPECULATIONS: Final[Reuse[tuple[_TableTyping, ...]]] = Reuse(capacity=8)
# Batches typed by the Java row typer: in their shapes' pass (typed), again after a speculation that missed
# (retyped), or without a speculation (unspeculated).
SPECULATED: Final[Counter[str]] = Counter()


# How many tables a speculation types at most: the batch's own, then the most recent of earlier batches' others
SPECULATED_TABLES: Final = 32


def _speculated(typings: Sequence[_TableTyping], earlier: Sequence[_TableTyping]) -> tuple[_TableTyping, ...]:
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
class _Speculation:
    """The last batch's Java typings (:data:`SPECULATIONS`) and their functions, registered in this batch's session."""

    typings: tuple[_TableTyping, ...]
    functions: Mapping[int, str]
    envelope: str | None  # the protocol's envelope reader typing these tables as it reads, where it has one

    @classmethod
    def of(cls, key: Hashable, adapter: Adapter) -> _Speculation | None:
        """The speculation kept under ``key``, None where there is none or the adapter has no Java row typer."""
        java_rows = adapter.java_rows
        typings = SPECULATIONS.peek(key) if java_rows is not None else None
        plans = _java_plans(adapter, typings) if typings else None
        if java_rows is None or typings is None or plans is None:
            return None
        functions = {t.index: java_rows.function(t.schema, plans[t.index]) for t in typings}
        envelope = java_rows.envelope_function([(t.index, t.schema, plans[t.index]) for t in typings])
        return cls(typings, functions, envelope)

    def covers(self, typings: Sequence[_TableTyping]) -> bool:
        return _covers(self.typings, typings)


def _covers(speculated: Sequence[_TableTyping], typings: Sequence[_TableTyping]) -> bool:
    """Whether ``speculated`` types this batch's ``typings`` as they would: each table there, with the same final
    schema, and each of its shapes with the same readers."""
    by_name = {(t.schema.database, t.schema.table): t for t in speculated}
    for typing in typings:
        known = by_name.get((typing.schema.database, typing.schema.table))
        if known is None or known.schema != typing.schema:
            return False
        for shape, readers in typing.shapes.items():
            other = known.shapes.get(shape)
            if other is None or _shape_key(other) != _shape_key(readers):
                return False
    return True


def _hit_typings(speculated: Sequence[_TableTyping], typings: Sequence[_TableTyping]) -> list[_TableTyping]:
    """The speculation's typings of this batch's tables (their indexes are the cache's)."""
    present = {(t.schema.database, t.schema.table) for t in typings}
    return [t for t in speculated if (t.schema.database, t.schema.table) in present]


def _typings_in_pass(kept: Sequence[_TableTyping] | None, columns: Sequence[str]) -> tuple[_TableTyping, ...] | None:
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


def _typed_messages(
    prepared: DataFrame, typing: _Typing, typings: Sequence[_TableTyping], records: Sequence[str]
) -> DataFrame:
    """``prepared`` (an adapter's whose rows are its messages, their parsed values in ``records``) typed by
    ``typing`` as the rows of :func:`_changes` are: ``__tidx``, each table's contract struct ``__t<index>``,
    ``__change_bad``, and the position and version of its one change; neither the stages nor the records are kept
    (should the speculation miss, the messages are typed from the source)."""
    from pyspark.sql import functions as F

    added = {
        "__tidx": F.when(F.col(A.ROUTE) == Route.JVM, typing.index).otherwise(-1),
        A.POSITION: F.lit(0),
        **({} if A.VERSION in prepared.columns else {A.VERSION: F.lit(None).cast("long")}),
    }
    staged = prepared.withColumns(added).select("*", *typing.first)
    staged = staged.select("*", *typing.after).select("*", *typing.before)
    typed = staged.select("*", *typing.structs, typing.bad.alias("__change_bad"))
    kept = {*added, "__change_bad", *(f"__t{t.index}" for t in typings)}
    stages = [c for c in typed.columns if c not in prepared.columns and c not in kept]
    return typed.drop(*stages, *records)


def _wide(staged: DataFrame, bad: Column, structs: Sequence[Column], partition_ts: Mapping[PartitionKey, int]) -> Any:
    """The typed rows' common columns, ``__bad`` and the tables' structs (``structs``), from ``staged``."""
    from pyspark.sql import functions as F

    clock_ts = _seeded_clock(partition_ts)
    running = F.col("clock_before") if "clock_before" in staged.columns else F.lit(None).cast("long")
    order_ts = F.coalesce(F.col(A.TS), F.greatest(running, clock_ts.cast("long")) if partition_ts else running)
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


def _reclocked(
    rows: DataFrame,
    prepared: DataFrame,
    dead: frozenset[tuple[str | None, int | None, int | None]],
    partition_ts: Mapping[PartitionKey, int],
    *,
    untimed: int,
    topics: Sequence[str],
) -> DataFrame:
    """The order ts of changes without a commit ts taken again without the batch's dead letters: a message the
    codec could not decode says nothing about time (the codec's clock never saw it). ``untimed``: how many
    messages of ``prepared`` have no ts, ``topics`` their topics (:func:`_clocked`)."""
    from pyspark.sql import functions as F

    living = prepared.where(~at_coordinates(dead))
    seeded = _seeded_clock(partition_ts)
    before = F.greatest(F.col("__reclock"), seeded.cast("long")) if partition_ts else F.col("__reclock")
    sequence = F.col("_cdc_sequence")
    reordered = F.struct(
        F.coalesce(F.col("_cdc_commit_ts"), before).alias("commit_ts"), sequence["partition"].alias("partition"),
        sequence["offset"].alias("offset"), sequence["position"].alias("position"),
    )  # fmt: skip
    joined = _clocked(rows, living, untimed, topics).withColumnRenamed("clock_before", "__reclock")
    return joined.withColumn("_cdc_sequence", reordered).drop("__reclock")


def _parts_of(app: str | None, typings: Sequence[_TableTyping]) -> dict[int, tuple[Column, list[Column]]]:
    """Each table's :func:`_part_columns`, by index (kept in :data:`PARTS`)."""
    return {t.index: PARTS.get((app, t.index, t.schema), functools.partial(_part_columns, t)) for t in typings}


def _part_columns(typing: _TableTyping) -> tuple[Column, list[Column]]:
    """A table's rows of the wide frame, and its change frame's columns (the contract's order). The names and the
    coordinates are made here, not kept in the wide frame: a string column costs its cache a comparison with the
    column's least and greatest value for every row (5% of an Avro decode's executor samples), and these are the
    table's own names and the message's coordinates, which the wide frame has."""
    from pyspark.sql import functions as F

    struct = F.col(f"__t{typing.index}")
    names = [c.name for c in typing.schema.stored_columns]
    columns = [
        *[struct.getField(n).alias(n) for n in names],
        *[F.col(n) for n in ("_cdc_op", "_cdc_commit_ts", "_cdc_sequence")],
        struct.getField("_cdc_before").alias("_cdc_before"),
        struct.getField("_cdc_changed_columns").alias("_cdc_changed_columns"),
        F.lit(typing.schema.database).alias("_cdc_database"),
        F.lit(typing.schema.table).alias("_cdc_table"),
        F.col("_cdc_schema_version"),
        F.col("topic").alias("_cdc_topic"),
        F.col("partition").cast("int").alias("_cdc_partition"),
        F.col("offset").alias("_cdc_offset"),
        struct.getField("_cdc_zero_dates").alias("_cdc_zero_dates"),
    ]
    return F.col("__tidx") == typing.index, columns


def _jvm_part(wide: DataFrame, part: tuple[Column, list[Column]]) -> DataFrame:
    rows, columns = part
    frame: DataFrame = wide.where(rows).select(*columns)
    return frame


def _typed_counts(
    wide: DataFrame, counted: Sequence[Row] | None, python_shapes: Sequence[tuple[str, str, str]]
) -> list[tuple[int, bool, str, int, int, int | None]]:
    """The typed rows by table index, goodness and topic-partition: how many, and the newest commit ts. Where the
    cache holds the changes typed (a speculation that hit), the shapes' aggregate has ``counted`` them
    (``_Shapes.typed_groups``), but for the shapes the codec takes after all (``python_shapes``); otherwise (None)
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


def _watermarks(prepared: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    none = F.lit(None).cast("string")
    frame: DataFrame = prepared.where(F.col(A.ROUTE) == Route.WATERMARK).select(
        F.lit("watermark").alias("kind"), none.alias("database"), none.alias("table"), F.col(A.TS).alias("commit_ts"),
        none.alias("sql"), none.alias("ddl_type"), none.alias("schema_json"),
        F.col("partition").cast("int").alias("partition"), F.col("offset").alias("offset"),
    )  # fmt: skip
    return frame


def decode(
    df: DataFrame,
    adapter: Adapter,
    options: Mapping[str, object],
    schemas: Mapping[tuple[str, str], TableSchema],
    *,
    partition_ts: Mapping[PartitionKey, int],
    known_versions: Sequence[TableSchema],
    time_as: str,
) -> DecodedChanges:
    """Decode ``df`` (Kafka source columns) on the JVM path (module docstring)."""
    from pyspark.sql import functions as F

    spark = df.sparkSession
    steps = Steps()
    messages = df.select(*MESSAGE_COLUMNS)
    app = app_of(df)
    speculation_key = (app, adapter.expressions_key())
    # The last batch's typings: each message of theirs is typed in the shapes' pass, and the batch's one cache holds
    # its changes, typed, not its text: one row per change (a message's first is its own row, ``prepared``). Should
    # this batch have other shapes or schemas, the text is read again from the source (a second envelope pass), as it
    # would be without a speculation.
    speculation = _Speculation.of(speculation_key, adapter)
    # Where the rows are the messages, the SQL typing of the last batch's tables types them in the same way, in the
    # shapes' pass: the cache holds the typed changes, not the parsed records.
    in_pass_kept: tuple[_TableTyping, ...] | None = None  # the last batch's typings
    in_pass: tuple[_TableTyping, ...] | None = None  # those this batch can type in its shapes' pass
    planned = BATCH_CACHE if executors_compile_huge_methods(spark) else {**BATCH_CACHE, **SPLIT_METHODS}
    with steps.timed("shapes"):
        with session_conf(spark, BATCH_CACHE):
            prepared_text = untyped = adapter.prepare(messages, None if speculation is None else speculation.envelope)
            records = adapter.records(untyped)
            if speculation is not None:
                typed_rows = _with_typed_rows(prepared_text, speculation.typings, speculation.functions)
                prepared_text = _changes(typed_rows, speculation.functions)
            elif records is not None:
                in_pass_kept = SPECULATIONS.peek(speculation_key)
                in_pass = _typings_in_pass(in_pass_kept, prepared_text.columns)
            if in_pass is not None:
                built = TYPINGS.get(_typings_key(app, adapter, in_pass), functools.partial(_build_typing, in_pass))
                prepared_text = _typed_messages(prepared_text, built, in_pass, records or [])
            keep_value = adapter.java_rows is not None and speculation is None
            with session_conf(spark, planned if in_pass is not None else {}):
                stored = _without_payloads(prepared_text, keep_value).persist()
        cache = _ranked(stored)
        prepared = cache if speculation is None else cache.where(F.col(A.POSITION) == 0)
        known = [*known_versions, *schemas.values()]  # every schema of earlier batches, for samples and the residue
        reused = _ShapeReuse(app, adapter, known)
        # with a speculation, the cache's rows are the typed changes: their counts come with the shapes
        typed_changes = speculation is not None or in_pass is not None
        found = _find_shapes(cache if typed_changes else prepared, messages, reused.kept, changes=typed_changes)
        if found.untimed_after_timed:
            found = attrs.evolve(found, task=task_seeds(prepared, found.topics))
    cached: list[DataFrame] = [stored]
    with steps.timed("schemas"):
        described = reused.described(found.samples, known)
    candidates: dict[tuple[str, str], list[tuple[Rank, TableSchema]]] = {
        name: [(SEED_RANK, schema)] for name, schema in schemas.items()
    }
    shapes_of: dict[tuple[str, str], dict[str, ShapeReaders]] = {}
    python_shapes: list[tuple[str, str, str]] = []
    for sample in found.samples:
        if not sample.jvm:
            continue
        readers = described.get((sample.database, sample.table, sample.shape))
        if readers is None:
            python_shapes.append((sample.database, sample.table, sample.shape))
            continue
        name = (sample.database, sample.table)
        shapes_of.setdefault(name, {})[sample.shape] = readers
        candidates.setdefault(name, []).append((sample.rank, readers.schema))
    provisional = newest(candidates)

    # 2. typing in the JVM
    routed_to_python = F.col(A.ROUTE) == Route.PYTHON
    if python_shapes:
        routed_to_python = routed_to_python | _key(F.col(A.DATABASE), F.col(A.TABLE), F.col(A.SHAPE)).isin(
            *[_key(*k) for k in python_shapes]
        )
    typings = [
        _TableTyping(index, provisional[name][1], shapes)
        for index, (name, shapes) in enumerate(sorted(shapes_of.items()))
    ]
    wide = None
    counts: dict[int, int] = {}
    # Only the changes that converted move the clock: a message the codec then rejects is a dead letter, and the
    # codec's clock never sees one. Messages routed elsewhere bring theirs (and the residue's comes from the codec).
    typed_clock: dict[PartitionKey, int] = {}
    bad_messages: DataFrame | None = None
    if typings:
        with steps.timed("typing"):
            hit = speculation if speculation is not None and speculation.covers(typings) else None
            if hit is not None:
                typings = _hit_typings(hit.typings, typings)
                hit = attrs.evolve(hit, functions={t.index: hit.functions[t.index] for t in typings})
            sql_hit = in_pass is not None and _covers(in_pass, typings)
            if sql_hit:
                typings = _hit_typings(in_pass or (), typings)
            routed_here = ~routed_to_python & (F.col(A.ROUTE) == Route.JVM)

            def jvm_messages() -> DataFrame:
                """The messages to type, where the cache holds no typed changes: without the messages' text in it (a
                speculation that missed), from the source again (the Java's) or as prepared before the typing."""
                if in_pass is not None:
                    return found.clocked(untyped, prepared).where(routed_here)
                text = prepared if speculation is None else adapter.prepare(messages)
                return found.clocked(text, prepared).where(routed_here)

            functions = hit.functions if hit is not None else _java_functions(adapter, typings)
            if hit is not None:  # the cache holds the changes typed: the typed rows are a projection of it
                parts_of = _parts_of(app, typings)
                changes = found.clocked(cache.where(routed_here), prepared)
                wide = _changes_wide(changes, hit.functions, partition_ts)
                SPECULATED["typed"] += 1
            elif sql_hit:  # the cache holds the messages typed, one change each: its rows are the typed rows
                parts_of = _parts_of(app, typings)
                structs = [F.col(f"__t{t.index}") for t in typings]
                changes = found.clocked(prepared, prepared).where(routed_here)
                wide = _wide(changes, F.col("__change_bad"), structs, partition_ts)
                SPECULATED["typed"] += 1
            elif functions is not None:
                parts_of = _parts_of(app, typings)
                calls = _with_typed_rows(jvm_messages(), typings, functions).drop("key", "value")
                with session_conf(spark, BATCH_CACHE):
                    wide = _java_typed_wide(calls, functions, partition_ts).persist()
                SPECULATED["retyped" if speculation is not None else "unspeculated"] += 1
            else:
                projections = TYPINGS.get(_typings_key(reused.app, adapter, typings), lambda: _build_typing(typings))
                parts_of = dict(projections.parts)
                with session_conf(spark, planned):
                    wide = _typed_wide(adapter.rows(jvm_messages()), projections, partition_ts).persist()
                if records is not None:
                    SPECULATED["retyped" if in_pass is not None else "unspeculated"] += 1
            if (adapter.java_rows is not None or records is not None) and hit is None and not sql_hit:
                earlier = speculation.typings if speculation is not None else in_pass_kept
                SPECULATIONS.put(speculation_key, _speculated(typings, earlier or ()))
            if hit is None and not sql_hit:
                cached.append(wide)
            bad_rows = 0
            counted = found.typed_groups if hit is not None or sql_hit else None
            for tidx, bad, topic, partition, count, ts in _typed_counts(wide, counted, python_shapes):
                if bad:
                    bad_rows += count
                    continue
                counts[tidx] = counts.get(tidx, 0) + count
                where = (topic, partition)
                if ts is not None and ts > typed_clock.get(where, -1):
                    typed_clock[where] = ts
            if bad_rows:
                bad_messages = wide.where(F.col("__bad")).select(*COORDINATES).distinct()

    # 3. the residue, in Python
    residue_filter = routed_to_python
    jvm_tables = {(t.schema.database, t.schema.table): t for t in typings}
    python: PythonPath | None = None
    final = dict(provisional)
    if found.python_messages or python_shapes or bad_messages is not None:
        with steps.timed("codec"):
            while True:
                residue = prepared.where(residue_filter)
                if bad_messages is not None:
                    rejected = join_on_coordinates(prepared, bad_messages, "left_semi")
                    residue = residue.unionByName(rejected.where(~residue_filter))
                # the driver holds every message of the residue where it is the first (no table moved), has no
                # shape the codec takes and no message the JVM rejected
                whole = residue_filter is routed_to_python and not python_shapes and bad_messages is None
                held = found.held if whole else None
                python = PythonPath.run(_whole(residue, messages), adapter.protocol, options, known, held)
                merged: dict[tuple[str, str], list[tuple[Rank, TableSchema]]] = {n: [v] for n, v in provisional.items()}
                for name, ranked in python.first.schemas().items():
                    merged.setdefault(name, []).append(ranked)
                final = newest(merged)
                moved = [name for name in jvm_tables if final[name][1] != provisional[name][1]]
                if not moved:
                    break
                # A newer schema in the residue: those tables are decoded in Python whole, so each has one schema.
                for database, table in moved:
                    residue_filter = residue_filter | ((F.col(A.DATABASE) == database) & (F.col(A.TABLE) == table))
                    del jvm_tables[(database, table)]
    parts: dict[tuple[str, str], list[DataFrame]] = {}
    control: list[DataFrame] = [_watermarks(prepared)] if found.watermarks else []
    dead: list[DataFrame] = []
    clock = merge_clocks(partition_ts, found.other_clock, typed_clock)
    if wide is not None:
        jvm_rows = wide if bad_messages is None else join_on_coordinates(wide, bad_messages, "left_anti")
        dead_letters = python.first.dead_coordinates() if python is not None else frozenset()
        if found.untimed_after_timed and dead_letters:
            jvm_rows = _reclocked(
                jvm_rows, prepared, dead_letters, partition_ts, untimed=found.untimed, topics=found.topics
            )
        for name, typing in jvm_tables.items():
            if counts.get(typing.index):
                parts.setdefault(name, []).append(_jvm_part(jvm_rows, parts_of[typing.index]))
    result = None
    if python is not None:
        with steps.timed("codec"):
            result = assemble(python, [schema for _, schema in (final[n] for n in sorted(final))], partition_ts)
        cached.extend(result.cached)
        for name, part in result.parts.items():
            parts.setdefault(name, []).append(part)
        control.append(result.control)
        dead += result.dead
        clock = merge_clocks(clock, result.clock)
    final_schemas = {name: schema for name, (_, schema) in final.items()}
    typed = sum(counts.get(t.index, 0) for t in jvm_tables.values())
    paths = {"jvm": typed, "codec": 0 if result is None else result.messages}
    return DecodedChanges(
        spark, parts, final_schemas, control, dead, clock, cached, time_as, paths=paths, steps=steps.seconds
    )


__all__ = ["decode"]
