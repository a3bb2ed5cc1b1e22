"""A micro-batch decoded in the JVM, with the protocol's codec only for the residue: the stages in order.

For an :class:`~cdc_spark.decoding.adapter.Adapter`, each stage a function of what the ones before found:

1. **Shapes** (one job, :mod:`~cdc_spark.decoding.jvm.shapes`): the adapter parses every envelope; a grouping by
   table and wire shape yields one sample message per shape (the only payloads that reach the driver), and by
   topic-partition the newest commit ts (the partition clock). The batch's cache holds the messages.
2. **Schemas** (the driver): the codec decodes each sample: that is the shape's schema, and the adapter turns it
   into column readers. Per table the newest shape wins (commit ts, partition, offset, position), the Python path's
   rule.
3. **Typing** (one job): every change becomes one wide row, its table's columns typed by Spark expressions
   (:mod:`~cdc_spark.decoding.jvm.table_typing`) or by the adapter's Java row typer
   (:mod:`~cdc_spark.decoding.jvm.java_typing`) into a struct for that table (:mod:`~cdc_spark.decoding.jvm.wide`);
   one small aggregate counts rows per table and rows that did not convert. Where the last batch's typings cover
   this batch's tables and shapes (a speculation), they type it in stage 1 instead, and its one cache holds the
   typed changes.
4. **Residue** (only when there is one): DDL, claim-check, compressed and malformed messages, shapes the driver
   could not decode, and messages with a value that did not convert go to
   :class:`~cdc_spark.decoding.python_path.PythonPath`, in the executors. Should the residue bring a newer schema
   for a table the JVM typed, that table's messages are decoded in Python too, so each table has one schema.
5. **Result**: the JVM's rows, control rows and dead letters joined with the residue's.

Nothing is shuffled on the JVM path: each task types its own messages; only the residue is grouped by
topic-partition for the codecs that keep state. What is kept from batch to batch is the caller's
:class:`~cdc_spark.decoding.jvm.caches.JvmCaches`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from cdc_core.schema import TableSchema
from cdc_spark.batch_cache import persist_batch, release
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Adapter, GuessesInputs, Route, ShapeReaders
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.coordinates import COORDINATES, join_on_coordinates
from cdc_spark.decoding.jvm.caches import JvmCaches
from cdc_spark.decoding.jvm.clock import SEEDED_CLOCK_MARKER, reclocked
from cdc_spark.decoding.jvm.java_typing import (
    Speculation,
    change_rows,
    changes_wide,
    covers,
    hit_typings,
    java_functions,
    java_typed_wide,
    speculated,
    typings_in_pass,
    with_typed_rows,
)
from cdc_spark.decoding.jvm.own_methods import in_whole_stage
from cdc_spark.decoding.jvm.shapes import ShapeReuse, Shapes, find_shapes, ranked, whole, without_payloads
from cdc_spark.decoding.jvm.table_typing import TableTyping, build_typing, part_columns_of, typings_key
from cdc_spark.decoding.jvm.wide import (
    SPLIT_METHODS,
    jvm_part,
    typed_counts,
    typed_messages,
    typed_wide,
    wide_frame,
)
from cdc_spark.decoding.python_path import MESSAGE_COLUMNS, SEED_RANK, PythonPath, Rank, assemble, newest
from cdc_spark.decoding.reuse import app_of
from cdc_spark.decoding.steps import Steps
from cdc_spark.decoding.task_clock import read_in_pass, task_clock_function, task_seeds
from cdc_spark.partition_clock import PartitionKey, merge_clocks
from cdc_spark.runtime.jit import executors_compile_huge_methods
from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

Named = tuple[str, str]  # (database, table)


def _key(database: Column | str, table: Column | str, shape: Column | str) -> Column:
    from pyspark.sql import functions as F

    parts = [F.lit(p) if isinstance(p, str) else p for p in (database, table, shape)]
    return F.concat_ws("\u0000", *parts)


def _watermarks(prepared: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    none = F.lit(None).cast("string")
    frame: DataFrame = prepared.where(F.col(A.ROUTE) == Route.WATERMARK).select(
        F.lit("watermark").alias("kind"), none.alias("database"), none.alias("table"), F.col(A.TS).alias("commit_ts"),
        none.alias("sql"), none.alias("ddl_type"), none.alias("schema_json"),
        F.col("partition").cast("int").alias("partition"), F.col("offset").alias("offset"),
    )  # fmt: skip
    return frame


@attrs.frozen
class _Request:
    """One batch to decode and what decodes it."""

    df: DataFrame  # Kafka source columns
    adapter: Adapter
    options: Mapping[str, object]
    schemas: Mapping[Named, TableSchema]  # the newest schema of each table from earlier batches
    partition_ts: Mapping[PartitionKey, int]  # the clock each topic-partition ended the last batch on
    known_versions: Sequence[TableSchema]
    caches: JvmCaches

    @functools.cached_property
    def messages(self) -> DataFrame:
        # a projection of the source's columns, the same every batch of a source: analyzed once
        return self.caches.source_plans.frame(("messages",), self.df, lambda df: df.select(*MESSAGE_COLUMNS))

    @functools.cached_property
    def app(self) -> str | None:
        return app_of(self.df)


@attrs.frozen
class _Shaped:
    """Stage 1's result: the batch's cache and its shapes."""

    found: Shapes
    reused: ShapeReuse  # readers of shapes described before
    known: list[TableSchema]  # every schema of earlier batches, for samples and the residue
    stored: DataFrame  # the batch's cache as persisted
    cache: DataFrame  # the cache with its rank made again: a row per typed change where a speculation typed it
    prepared: DataFrame  # a row per message
    untyped: DataFrame  # the adapter's prepared messages, before any typing in this pass
    records: list[str] | None  # the parsed records' columns, where the adapter's rows are its messages
    speculation: Speculation | None  # the last batch's Java typings, which typed this pass
    in_pass: tuple[TableTyping, ...] | None  # the last batch's SQL typings, which typed this pass
    in_pass_kept: tuple[TableTyping, ...] | None  # the last batch's SQL typings, all of them
    planned: dict[str, str]  # the session settings a persisted typing is planned under


@attrs.frozen
class _Learned:
    """Stage 2's result: each table's newest schema and how its rows are typed."""

    provisional: dict[Named, tuple[Rank, TableSchema]]
    typings: list[TableTyping]
    python_shapes: list[tuple[str, str, str]]  # shapes the driver could not describe: the codec's
    routed_to_python: Column


@attrs.frozen
class _Typed:
    """Stage 3's result: the wide frame, its counts and the typings it was built with."""

    typings: list[TableTyping]
    wide: DataFrame | None = None
    parts_of: Mapping[int, tuple[Column, list[Column]]] = attrs.field(factory=dict)
    counts: dict[int, int] = attrs.field(factory=dict)  # converted rows by table index
    # only the changes that converted move the clock: a message the codec then rejects is a dead letter, and the
    # codec's clock never sees one
    clock: dict[PartitionKey, int] = attrs.field(factory=dict)
    bad_messages: DataFrame | None = None  # coordinates of messages with a value that did not convert
    cached: tuple[DataFrame, ...] = ()  # the wide frame where it was persisted (not a projection of the cache)
    in_cache: bool = False  # a projection of the batch's cache (a speculation that covered the batch)


@attrs.frozen
class _Residue:
    """Stage 4's result: the codec's decode, the final schemas and the tables whose JVM rows stand."""

    python: PythonPath | None
    final: dict[Named, tuple[Rank, TableSchema]]
    jvm_tables: dict[Named, TableTyping]


def decode(
    df: DataFrame,
    adapter: Adapter,
    options: Mapping[str, object],
    schemas: Mapping[Named, TableSchema],
    *,
    partition_ts: Mapping[PartitionKey, int],
    known_versions: Sequence[TableSchema],
    time_as: str,
    caches: JvmCaches,
) -> DecodedChanges:
    """Decode ``df`` (Kafka source columns) on the JVM path (module docstring), keeping what later batches reuse in
    ``caches``."""
    request = _Request(df, adapter, options, schemas, partition_ts, known_versions, caches)
    steps = Steps()
    with steps.timed("shapes"):
        shaped = _shapes(request)
        if shaped.found.python_messages and _missed_guess(request.adapter, request.messages):
            release(shaped.stored)  # its pass sent messages the guess did not cover to the codec: prepared again
            shaped = _shapes(request)
    with steps.timed("schemas"):
        learned = _schemas(request, shaped)
    typed = _Typed(learned.typings)
    if learned.typings:
        with steps.timed("typing"):
            typed = _typing(request, shaped, learned)
    jvm_tables = {(t.schema.database, t.schema.table): t for t in typed.typings}
    if shaped.found.python_messages or learned.python_shapes or typed.bad_messages is not None:
        with steps.timed("codec"):
            residue = _residue(request, shaped, learned, typed, jvm_tables)
    else:
        residue = _Residue(None, dict(learned.provisional), jvm_tables)
    return _result(request, shaped, typed, residue, steps=steps, time_as=time_as)


def _missed_guess(adapter: Adapter, messages: DataFrame) -> bool:
    """Whether the adapter prepared the batch for what it guessed from earlier batches and missed
    (:class:`~cdc_spark.decoding.adapter.GuessesInputs`)."""
    return isinstance(adapter, GuessesInputs) and adapter.missed_guess(messages)


def _shapes(request: _Request) -> _Shaped:
    """Stage 1: the adapter's parse, typed in the same pass where the last batch's typings serve (a speculation),
    cached without the payloads the JVM parsed; then the shapes' aggregate over the cache."""
    from pyspark.sql import functions as F

    adapter, caches, spark = request.adapter, request.caches, request.df.sparkSession
    speculation_key = (request.app, adapter.expressions_key())
    speculation = Speculation.of(caches.speculations, speculation_key, adapter)
    in_pass_kept: tuple[TableTyping, ...] | None = None
    in_pass: tuple[TableTyping, ...] | None = None
    planned = {} if executors_compile_huge_methods(spark) else dict(SPLIT_METHODS)
    envelope = None if speculation is None else speculation.envelope
    # the messages' rows as a leaf where the pass can keep its physical plan over them (kept_passes); read with a
    # default, as an adapter another package registers may predate the property
    keeps_plans = bool(getattr(adapter, "keeps_prepared_plans", False))
    leaf = caches.passes.leaf(request.messages) if keeps_plans else None
    prepared_text = untyped = adapter.prepare(request.messages if leaf is None else leaf, envelope)
    records = adapter.records(untyped)
    if speculation is not None:  # the cache holds the changes typed, not their text: one row per change
        rows = with_typed_rows(prepared_text, speculation.typings, speculation.functions, caches.row_calls)
        prepared_text = change_rows(rows, speculation.functions, caches.change_columns)
    elif records is not None:  # the rows are the messages: the last batch's SQL typing types them in this pass
        in_pass_kept = caches.speculations.peek(speculation_key)
        in_pass = typings_in_pass(in_pass_kept, prepared_text.columns)
    keep_value = adapter.java_rows is not None and speculation is None
    # the task clock's ranges come with the shapes where the project's Java code is here
    task_clock = task_clock_function(spark)
    if in_pass is not None:
        typing_key = typings_key(request.app, adapter, in_pass)
        built = caches.typings.get(typing_key, functools.partial(build_typing, in_pass))
        typing_tables = in_pass

        def typed_in_pass(source: DataFrame, own_methods: bool) -> DataFrame:
            messages = typed_messages(source, built, typing_tables, records or [], own_methods=own_methods)
            typed = without_payloads(messages, keep_value)
            # a row per message: the running clock read as the pass reads them, kept for the frames after it
            return typed if task_clock is None else read_in_pass(typed, task_clock)

        def pass_stages(source: DataFrame) -> DataFrame:
            # whole-stage code: the pass one stage, each typing stage in a generated method of its own (own_methods)
            staged = None if planned else typed_in_pass(source, own_methods=True)
            return staged if staged is not None and in_whole_stage(staged) else typed_in_pass(source, False)

        # the same projections every batch of these typings: analyzed once, put over each batch's messages
        cached = caches.stage_plans.frame((typing_key, keep_value, task_clock), prepared_text, pass_stages)
    else:
        cached = without_payloads(prepared_text, keep_value)
    settings = planned if in_pass is not None else {}
    with session_conf(spark, settings):
        stored = caches.passes.persist(cached, leaf, settings)
    cache = ranked(stored, caches.cache_plans)
    prepared = cache if speculation is None else cache.where(F.col(A.POSITION) == 0)
    known = [*request.known_versions, *request.schemas.values()]
    reused = ShapeReuse(request.app, adapter, caches.shapes, known)
    typed_changes = speculation is not None or in_pass is not None  # their counts come with the shapes
    found = find_shapes(cache if typed_changes else prepared, request.messages, reused.kept, changes=typed_changes,
                        task_clock=task_clock, plans=caches.cache_plans, partition_ts=request.partition_ts)  # fmt: skip
    if found.untimed_after_timed and not found.task_found:
        found = attrs.evolve(found, task=task_seeds(prepared, found.topics, request.partition_ts))
    return _Shaped(found, reused, known, stored, cache, prepared, untyped, records and list(records), speculation,
                   in_pass, in_pass_kept, planned)  # fmt: skip


def _schemas(request: _Request, shaped: _Shaped) -> _Learned:
    """Stage 2: each sampled shape's readers (the codec's schema of its sample), each table's newest schema, and
    the shapes left to the codec."""
    from pyspark.sql import functions as F

    described = shaped.reused.described(shaped.found.samples, shaped.known)
    candidates: dict[Named, list[tuple[Rank, TableSchema]]] = {
        name: [(SEED_RANK, schema)] for name, schema in request.schemas.items()
    }
    shapes_of: dict[Named, dict[str, ShapeReaders]] = {}
    python_shapes: list[tuple[str, str, str]] = []
    for sample in shaped.found.samples:
        if not sample.jvm:
            continue
        readers = described.get(sample.key)
        if readers is None:
            python_shapes.append(sample.key)
            continue
        name = (sample.database, sample.table)
        shapes_of.setdefault(name, {})[sample.shape] = readers
        candidates.setdefault(name, []).append((sample.rank, readers.schema))
    provisional = newest(candidates)
    routed_to_python = F.col(A.ROUTE) == Route.PYTHON
    if python_shapes:
        undescribed = [_key(*k) for k in python_shapes]
        routed_to_python = routed_to_python | _key(F.col(A.DATABASE), F.col(A.TABLE), F.col(A.SHAPE)).isin(*undescribed)
    typings = [
        TableTyping(index, provisional[name][1], shapes)
        for index, (name, shapes) in enumerate(sorted(shapes_of.items()))
    ]
    return _Learned(provisional, typings, python_shapes, routed_to_python)


def _typing(request: _Request, shaped: _Shaped, learned: _Learned) -> _Typed:
    """Stage 3: the wide frame of the batch's typed rows (:func:`_typed_frame`), then its counts by table, goodness
    and topic-partition: those that converted, and the partition clock they move."""
    from pyspark.sql import functions as F

    typed = _typed_frame(request, shaped, learned)
    assert typed.wide is not None
    # where the cache holds the typed changes, the shapes' aggregate counted them
    counted = shaped.found.typed_groups if typed.in_cache else None
    bad_rows = 0
    counts: dict[int, int] = {}
    clock: dict[PartitionKey, int] = {}
    for tidx, bad, topic, partition, count, ts in typed_counts(typed.wide, counted, learned.python_shapes):
        if bad:
            bad_rows += count
            continue
        counts[tidx] = counts.get(tidx, 0) + count
        where = (topic, partition)
        if ts is not None and ts > clock.get(where, -1):
            clock[where] = ts
    bad_messages = typed.wide.where(F.col("__bad")).select(*COORDINATES).distinct() if bad_rows else None
    return attrs.evolve(typed, counts=counts, clock=clock, bad_messages=bad_messages)


def _typed_frame(request: _Request, shaped: _Shaped, learned: _Learned) -> _Typed:
    """The wide frame: a projection of the cache where a speculation typed the batch in stage 1 and covers its tables
    and shapes; else typed again, by the Java row typer or the SQL typing, and cached. The typings of every
    adapter that can speculate are kept for the next batch."""
    from pyspark.sql import functions as F

    caches, found = request.caches, shaped.found
    speculation, in_pass, typings = shaped.speculation, shaped.in_pass, learned.typings
    routed_here = ~learned.routed_to_python & (F.col(A.ROUTE) == Route.JVM)
    if speculation is not None and speculation.covers(typings):  # the cache holds the changes typed
        typings = hit_typings(speculation.typings, typings)
        functions = {t.index: speculation.functions[t.index] for t in typings}
        changes = found.clocked(shaped.cache.where(routed_here), shaped.prepared, caches.running_clocks)
        wide = changes_wide(changes, functions, request.partition_ts)
    elif in_pass is not None and covers(in_pass, typings):  # the cache holds the messages typed, one change each
        typings = hit_typings(in_pass, typings)
        wide = _wide_in_pass(request, shaped, typings, routed_here, learned.python_shapes)
    else:
        return _typed_again(request, shaped, typings, routed_here)
    caches.speculated["typed"] += 1
    return _Typed(typings, wide, part_columns_of(request.app, typings, caches.parts), in_cache=True)


def _wide_in_pass(
    request: _Request,
    shaped: _Shaped,
    typings: list[TableTyping],
    routed_here: Column,
    python_shapes: Sequence[tuple[str, str, str]],
) -> DataFrame:
    """The wide frame of a cache that holds the messages typed: their clock, the rows routed here, the common
    columns and each table's struct. Its analyzed plan is the same every batch of the same tables, shapes left to
    the codec, clock and topic-partitions, but for the seeds' and the partition clock's values: kept
    (``JvmCaches.cache_plans``) and given each batch's values."""
    from pyspark.sql import functions as F

    found, caches, partition_ts = shaped.found, request.caches, request.partition_ts
    indexes = tuple(t.index for t in typings)

    def build(prepared: DataFrame, planned: Counter[str] | None = None) -> DataFrame:
        changes = found.clocked(prepared, prepared, Counter() if planned is None else planned).where(routed_here)
        structs = [F.col(f"__t{index}") for index in indexes]
        wide: DataFrame = wide_frame(changes, F.col("__change_bad"), structs, partition_ts)
        return wide

    clock_key = found.clock_key()
    if clock_key is None:  # the clock joined to the rows: two reads of the messages, planned anew
        return build(shaped.prepared, caches.running_clocks)
    if found.untimed_after_timed and found.task is not None:  # counted here, as a kept plan is not built again
        caches.running_clocks["pass" if found.task.in_pass else "task"] += 1
    key = ("wide", indexes, tuple(sorted(python_shapes)), clock_key, tuple(partition_ts))
    values: dict[int, list[int | None]] = found.clock_values()
    if partition_ts:
        values[SEEDED_CLOCK_MARKER] = list(partition_ts.values())
    return caches.cache_plans.frame(key, shaped.prepared, build, values)


def _typed_again(request: _Request, shaped: _Shaped, typings: list[TableTyping], routed_here: Column) -> _Typed:
    """The wide frame typed from the messages, by the adapter's Java row typer where it can type every table, else
    by the SQL typing, and cached; its typings kept as the next batch's speculation."""
    adapter, caches, spark = request.adapter, request.caches, request.df.sparkSession
    speculation, in_pass, found = shaped.speculation, shaped.in_pass, shaped.found
    if in_pass is not None:  # the cache holds no text to type again: the prepared messages of the pass
        text = shaped.untyped
    else:  # without the messages' text in the cache (a speculation that missed), from the source again
        text = shaped.prepared if speculation is None else adapter.prepare(request.messages)
    messages = found.clocked(text, shaped.prepared, caches.running_clocks).where(routed_here)
    functions = java_functions(adapter, typings)
    wide: DataFrame
    if functions is not None:
        parts_of = part_columns_of(request.app, typings, caches.parts)
        calls = with_typed_rows(messages, typings, functions, caches.row_calls).drop("key", "value")
        wide = persist_batch(java_typed_wide(calls, functions, request.partition_ts, caches.change_columns))
        caches.speculated["retyped" if speculation is not None else "unspeculated"] += 1
    else:
        key = typings_key(request.app, adapter, typings)
        projections = caches.typings.get(key, functools.partial(build_typing, typings))
        parts_of = dict(projections.parts)
        with session_conf(spark, shaped.planned):
            wide = persist_batch(typed_wide(adapter.rows(messages), projections, request.partition_ts))
        if shaped.records is not None:
            caches.speculated["retyped" if in_pass is not None else "unspeculated"] += 1
    if adapter.java_rows is not None or shaped.records is not None:
        earlier = speculation.typings if speculation is not None else shaped.in_pass_kept
        caches.speculations.put((request.app, adapter.expressions_key()), speculated(typings, earlier or ()))
    return _Typed(typings, wide, parts_of, cached=(wide,))


def _residue(
    request: _Request, shaped: _Shaped, learned: _Learned, typed: _Typed, jvm_tables: dict[Named, TableTyping]
) -> _Residue:
    """Stage 4: the codec decodes the residue (messages routed to it, shapes it takes, messages the JVM rejected);
    a table whose newest schema the residue brings is decoded by the codec whole, and the residue taken again."""
    from pyspark.sql import functions as F

    prepared, found, provisional = shaped.prepared, shaped.found, learned.provisional
    residue_filter = learned.routed_to_python
    jvm_tables = dict(jvm_tables)  # the caller's stays whole
    while True:
        residue = prepared.where(residue_filter)
        if typed.bad_messages is not None:
            rejected = join_on_coordinates(prepared, typed.bad_messages, "left_semi")
            residue = residue.unionByName(rejected.where(~residue_filter))
        # the driver holds every message of the residue where it is the first (no table moved), has no shape the
        # codec takes and no message the JVM rejected
        first = residue_filter is learned.routed_to_python and not learned.python_shapes
        held = found.held if first and typed.bad_messages is None else None
        source = functools.partial(whole, residue, request.messages)  # built only where a later step reads it
        python = PythonPath.run(source, request.adapter.protocol, request.options, shaped.known, held,
                                spark=request.df.sparkSession, partition_ts=request.partition_ts)  # fmt: skip
        merged: dict[Named, list[tuple[Rank, TableSchema]]] = {n: [v] for n, v in provisional.items()}
        for name, ranked_schema in python.first.schemas().items():
            merged.setdefault(name, []).append(ranked_schema)
        final = newest(merged)
        moved = [name for name in jvm_tables if final[name][1] != provisional[name][1]]
        if not moved:
            return _Residue(python, final, jvm_tables)
        for database, table in moved:  # a newer schema in the residue: decoded in Python whole
            residue_filter = residue_filter | ((F.col(A.DATABASE) == database) & (F.col(A.TABLE) == table))
            del jvm_tables[(database, table)]


def _result(
    request: _Request, shaped: _Shaped, typed: _Typed, residue: _Residue, *, steps: Steps, time_as: str
) -> DecodedChanges:
    """Stage 5: each table's part of the JVM's rows (without messages the JVM or the codec rejected) and the
    codec's, the control rows, the dead letters and the partition clock."""
    found, partition_ts = shaped.found, request.partition_ts
    parts: dict[Named, list[DataFrame]] = {}
    control: list[DataFrame] = [_watermarks(shaped.prepared)] if found.watermarks else []
    dead: list[DataFrame] = []
    cached: list[DataFrame] = [shaped.stored, *typed.cached]
    clock = merge_clocks(partition_ts, found.other_clock, typed.clock)
    if typed.wide is not None:
        jvm_rows = typed.wide
        if typed.bad_messages is not None:
            jvm_rows = join_on_coordinates(jvm_rows, typed.bad_messages, "left_anti")
        dead_letters = residue.python.first.dead_coordinates() if residue.python is not None else frozenset()
        if found.untimed_after_timed and dead_letters:
            jvm_rows = reclocked(jvm_rows, shaped.prepared, dead_letters, partition_ts, untimed=found.untimed,
                                 topics=found.topics, planned=request.caches.running_clocks)  # fmt: skip
        # every table's part reads frames of the wide frame's columns: its schema asked of the JVM once, not per
        # table (it holds every table's struct)
        wide_schema = jvm_rows._jdf.schema().json() if residue.jvm_tables else None
        for name, typing in residue.jvm_tables.items():
            if typed.counts.get(typing.index):
                # the part's columns are the table's index's and schema's (part_columns)
                part_key = (request.app, typing.index, typing.schema)
                part = jvm_part(jvm_rows, typed.parts_of[typing.index], typing.index, request.caches.cache_plans,
                                key=part_key, schema=wide_schema)  # fmt: skip
                parts.setdefault(name, []).append(part)
    codec_messages = 0
    if residue.python is not None:
        with steps.timed("codec"):
            final = [schema for _, schema in (residue.final[n] for n in sorted(residue.final))]
            result = assemble(residue.python, final, partition_ts)
        cached.extend(result.cached)
        for name, part in result.parts.items():
            parts.setdefault(name, []).append(part)
        control.append(result.control)
        dead += result.dead
        clock = merge_clocks(clock, result.clock)
        codec_messages = result.messages
    schemas = {name: schema for name, (_, schema) in residue.final.items()}
    paths = {"jvm": sum(typed.counts.get(t.index, 0) for t in residue.jvm_tables.values()), "codec": codec_messages}
    return DecodedChanges(request.df.sparkSession, parts, schemas, control, dead, clock, cached, time_as,
                          paths=paths, steps=steps.seconds)  # fmt: skip


__all__ = ["decode"]
