"""The pipeline as one streaming job: source -> decode -> (watermark gate) -> apply -> one table per source table.

Each micro-batch runs in ``foreachBatch``: it is decoded, split per table, gated at the global watermark when
asked, and merged by Spark into each table (and its state table) with the batch id as the commit mark (Delta's
app transaction, Iceberg's snapshot summary). Spark writes the batch's offsets to its commit log only after
``foreachBatch`` returns, i.e. after every table's commit: a crash in between replays the batch, and the tables
that already hold it skip it (exactly once).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import urlsplit

import attrs

from cdc_core.errors import ConfigError, DeadLetterLimitError, Fault, fault_of
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.secrets import redact_options
from cdc_spark.apply import Applied, apply_tables
from cdc_spark.batch_tables import batch_tables, load_keys, save_keys, table_settings
from cdc_spark.ddl_policy import TABLE_DDL, TableDdl, check_policy, table_ddls
from cdc_spark.decoding import PLANS, DecodedChanges, decode
from cdc_spark.expression_mode import expressions_for
from cdc_spark.failures import reason, typed
from cdc_spark.merge import DEFAULT_TOMBSTONE_RETENTION, ApplySpec, build_spec
from cdc_spark.partition_clock import PartitionKey, load_clock, save_clock
from cdc_spark.retries import RetryPolicy
from cdc_spark.routing import Routing, TableSettings
from cdc_spark.sinks import BatchInfo, Sink, load_sink
from cdc_spark.source.checks import DEFAULT_BROKER_TIMEOUT_S, check_kafka_topics, kafka_source_defaults
from cdc_spark.table_filter import drop_excluded
from cdc_spark.table_workers import DEFAULT_TABLE_PARALLELISM
from cdc_spark.time_text import check_time_as

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

    from cdc_spark.watermark import WatermarkGate

KAFKA_SCHEMA: Final = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int,"
    " headers array<struct<key:string,value:binary>>"
)
MAX_KNOWN_VERSIONS: Final = 1024  # schema versions kept to prime decoders (oldest dropped first)
JOB_OPTIONS: Final = frozenset(
    {
        "table-format",
        "catalog",
        "catalog-name",
        "watermark",
        "trigger-interval",
        "app-id",
        "decode",
        "time-as",
        "table-parallelism",
    }
)
# ``decode=auto`` (the default) decodes a batch of fewer messages than this with the codec. Below it the JVM plan's
# fixed cost (a shapes job, then planning and compiling one typing projection over every table) outweighs its
# speed: measured warm on 10 to 3,000 Debezium and Canal-JSON messages, the codec took 1.3-1.7 s a batch against
# 1.6-3.4 s, the two even at 10,000; cold, in a fresh `cdc apply`, 2.8 s against 8.8 s for 10 messages. The codec
# runs on the driver (the ``driver`` plan) unless the messages' bytes pass SMALL_BATCH_BYTES: no Python worker, and
# the rows are local relations (docs/spark-source-decode.md, "Decode plans"). Every plan gives the same change
# frames (test_decode_equality.py).
SMALL_BATCH: Final = 2_000
SMALL_BATCH_BYTES: Final = 16 * 1024 * 1024  # what the driver collects of a small batch at most
DECODE_PLANS: Final = ("auto", *PLANS)
# options of earlier versions, and what replaced them
REPLACED_OPTIONS: Final = {
    "sink": "table-format=delta|iceberg (Spark runs every MERGE)",
    "catalog-prefix": "catalog=NAME (a catalog the session has)",
}


@attrs.frozen(kw_only=True)
class SourceSpec:
    """Where messages come from: ``kafka://HOST:PORT[,HOST:PORT]/TOPIC[,TOPIC]`` or ``file://PATH``."""

    kind: Literal["kafka", "file"]
    location: str  # bootstrap servers, or a path
    topics: tuple[str, ...] = ()

    @classmethod
    def parse(cls, uri: str) -> SourceSpec:
        parts = urlsplit(uri)
        if parts.scheme == "kafka":
            topics = tuple(t for t in parts.path.strip("/").split(",") if t)
            if not parts.netloc or not topics:
                raise ConfigError(f"source {uri!r}: expected kafka://HOST:PORT/TOPIC")
            return cls(kind="kafka", location=parts.netloc, topics=topics)
        if parts.scheme == "file":
            path = (parts.netloc + parts.path) if parts.netloc not in ("", "localhost") else parts.path
            if not path:
                raise ConfigError(f"source {uri!r}: expected file://PATH")
            return cls(kind="file", location=path)
        raise ConfigError(f"source {uri!r}: the scheme must be kafka:// or file://")


@attrs.frozen(kw_only=True)
class JobConfig:
    protocol: str
    source: SourceSpec
    target: str
    checkpoint: str
    keys: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)  # "db.table" or "*" -> key columns
    scd: int = 1
    continuous: bool = False
    # codec and source options, and JOB_OPTIONS; credentials among them never reach a repr or a log
    options: Mapping[str, str] = attrs.field(factory=dict, repr=lambda o: repr(redact_options(o)))
    track_columns: tuple[str, ...] | None = None
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION
    metadata_columns: tuple[str, ...] = ()  # change-frame columns also written to the targets (_cdc_op...)
    # the run's bounds: dead letters it may write (None: any number), restarts after a service went away, and how
    # long the Kafka brokers may take to answer
    max_dead_letters: int | None = None
    retry: RetryPolicy = attrs.field(factory=RetryPolicy)
    broker_timeout: float = DEFAULT_BROKER_TIMEOUT_S
    # which tables are applied, where each lands, per-target keys/scd/columns (over the defaults above)
    routing: Routing = attrs.field(factory=Routing)
    ddl: str = attrs.field(default="evolve", validator=lambda _, __, value: check_policy(value))

    def __attrs_post_init__(self) -> None:
        for old, new in REPLACED_OPTIONS.items():
            if old in self.options:
                raise ConfigError(f"option {old}= is no longer supported: use {new}")

    @property
    def table_format(self) -> str:
        return self.options.get("table-format", "delta")

    @property
    def app_id(self) -> str:
        return self.options.get("app-id") or f"cdc-apply:{os.path.abspath(self.checkpoint)}"

    @property
    def watermark(self) -> bool:
        text = self.options.get("watermark", "false").lower()
        if text not in ("true", "false"):
            raise ConfigError(f"option watermark={text!r}: expected true or false")
        if text == "true" and not get_codec(self.protocol).watermarks:
            raise ConfigError(f"option watermark=true: protocol {self.protocol} carries no TiCDC watermarks")
        return text == "true"

    @property
    def decode_plan(self) -> str:
        """``decode=auto|jvm|python|driver`` (see :func:`cdc_spark.decoding.decode` and :func:`batch_plan`)."""
        plan = self.options.get("decode", "auto")
        if plan not in DECODE_PLANS:
            raise ConfigError(f"option decode={plan!r}: expected one of {', '.join(DECODE_PLANS)}")
        return plan

    @property
    def time_as(self) -> str:
        """``time-as=interval|string`` (see :mod:`cdc_spark.time_text`)."""
        return check_time_as(self.options.get("time-as", "interval"))

    @property
    def table_parallelism(self) -> int:
        """``table-parallelism=N``: tables of a micro-batch applied at once (1: one after the other)."""
        text = self.options.get("table-parallelism", str(DEFAULT_TABLE_PARALLELISM))
        if not text.isascii() or not text.isdigit() or int(text) < 1:
            raise ConfigError(f"option table-parallelism={text!r}: expected a whole number of 1 or more")
        return int(text)

    def codec_options(self) -> dict[str, str]:
        return {k: v for k, v in self.options.items() if k not in JOB_OPTIONS and not k.startswith("source.")}

    def source_options(self) -> dict[str, str]:
        return {k.removeprefix("source."): v for k, v in self.options.items() if k.startswith("source.")}


def batch_plan(plan: str, messages: int, payload: int = 0) -> str:
    """The decode plan of a batch of ``messages`` of ``payload`` bytes (keys and values) under the ``decode``
    option: ``auto`` is the codec on the driver (``driver``) below :data:`SMALL_BATCH` messages of at most
    :data:`SMALL_BATCH_BYTES`, the codec in the executors (``python``) for as few messages of more bytes, and the JVM
    plan from :data:`SMALL_BATCH` messages on; any other plan holds for every batch."""
    if plan != "auto":
        return plan
    if messages >= SMALL_BATCH:
        return "jvm"
    return "driver" if payload <= SMALL_BATCH_BYTES else "python"


def parse_keys(text: str | None) -> dict[str, tuple[str, ...]]:
    """``id`` or ``id,region`` (every table) or ``db.t1=id;db.t2=a,b`` (per table)."""
    if not text:
        return {}
    keys: dict[str, tuple[str, ...]] = {}
    for part in text.split(";"):
        table, sep, columns = part.partition("=")
        names = tuple(c.strip() for c in (columns if sep else table).split(",") if c.strip())
        if not names:
            raise ConfigError(f"--keys {text!r}: no column names in {part!r}")
        keys[table.strip() if sep else "*"] = names
    return keys


@attrs.frozen(kw_only=True)
class BatchReport:
    """What one micro-batch did: the one source of every report of a run (progress lines, the summary line)."""

    batch_id: int
    messages: int
    applied: dict[str, int]
    skipped: tuple[str, ...]  # tables that had committed this batch before (a replay)
    held: int
    dead_letters: int
    watermark: int | None
    seconds: float
    # how the batch was decoded: ``jvm`` changes typed by Spark, ``codec`` messages through the protocol's codec
    decoded: Mapping[str, int] = attrs.field(factory=dict)
    # where the time went: decode (and its steps, DecodedChanges.steps) and writing the tables
    decode_seconds: float = 0.0
    decode_steps: Mapping[str, float] = attrs.field(factory=dict)
    apply_seconds: float = 0.0
    # the changes written by table and operation (insert, update, delete, truncate); the offsets the batch reached
    # (topic -> partition -> next offset, as Spark's Kafka source writes them); where its dead letters went
    changes: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    offsets: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    dead_letter_table: str | None = None
    ddl: tuple[str, ...] = ()  # what the DDL policy did (truncates, drops, renames, columns kept)


def make_sink(spark: SparkSession, config: JobConfig) -> Sink:
    """The sink of ``table-format`` (entry points ``cdc_spark.sinks``) for the job's target or ``catalog``."""
    return load_sink(config.table_format, spark, config.target, config.options)


def read_stream(spark: SparkSession, config: JobConfig) -> DataFrame:
    """The source as a streaming DataFrame in the Kafka source's shape.

    ``kafka://`` reads with Spark's own ``kafka`` format (``startingOffsets`` defaults to ``earliest``, its waits on
    the brokers to ``broker_timeout``: :func:`cdc_spark.source.checks.kafka_source_defaults`); every ``source.*``
    option is handed to it as is (``source.maxOffsetsPerTrigger``, ``source.kafka.security.protocol``, ...).
    ``file://`` reads files of message lines with Spark's own file source
    (:func:`cdc_spark.source.file_stream.message_stream`; ``source.maxFilesPerTrigger``, ``source.topic``).
    """
    options = config.source_options()
    if config.source.kind == "kafka":
        options = {**kafka_source_defaults(config.broker_timeout), **options}
        reader = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", config.source.location)
            .option("subscribe", ",".join(config.source.topics))
            .option("startingOffsets", options.pop("startingOffsets", "earliest"))
        )
    else:
        from cdc_spark.source.file_stream import message_stream

        return message_stream(spark, config.source.location, options)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _offsets(frame: DataFrame) -> tuple[int, int, str]:
    """The batch's message count, the bytes of its keys and values, and its next offsets per topic-partition as
    JSON: one small aggregate."""
    from pyspark.sql import functions as F

    size = F.coalesce(F.octet_length("key"), F.lit(0)) + F.coalesce(F.octet_length("value"), F.lit(0))
    rows = frame.groupBy("topic", "partition").agg(
        F.max("offset").alias("last"), F.count(F.lit(1)).alias("n"), F.sum(size).alias("bytes")
    )
    spans: dict[str, dict[str, int]] = {}
    messages = payload = 0
    for row in rows.collect():
        spans.setdefault(str(row["topic"]), {})[str(row["partition"])] = int(row["last"]) + 1
        messages += int(row["n"])
        payload += int(row["bytes"] or 0)
    return messages, payload, json.dumps(spans, sort_keys=True)


@attrs.define
class BatchProcessor:
    """The ``foreachBatch`` function: decode, gate, apply every table; one report per batch."""

    config: JobConfig
    sink: Sink
    letters: Sink | None = None  # the sink that appends dead letters (default: ``sink``)
    gate: WatermarkGate | None = None
    progress: Callable[[BatchReport], None] | None = None
    schemas: dict[tuple[str, str], TableSchema] = attrs.field(factory=dict)
    # newest commit ts per topic-partition, saved in the checkpoint: orders Avro tombstones across batches
    clock: dict[PartitionKey, int] | None = None
    # every schema version BOOTSTRAP/DDL messages brought, newest last: a lagging partition's rows of an older
    # version still decode in a later batch (TiCDC Simple)
    versions: dict[tuple[str, str, int | None], TableSchema] = attrs.field(factory=dict)
    # the failure of the last batch as the project's typed error (the query only says "foreachBatch failed")
    failure: BaseException | None = attrs.field(default=None, init=False)
    dead_letters_written: int = attrs.field(default=0, init=False)  # this run's, against max_dead_letters
    batches: int = attrs.field(default=0, init=False)  # completed in this query
    # the tables the last batch changed: how wide the next one's decode is likely to be (expression_mode)
    last_tables: int = attrs.field(default=1, init=False)

    # target -> the source tables routed to it so far (their schemas give its default key)
    sources: dict[str, set[tuple[str, str]]] = attrs.field(factory=dict)
    # target -> the key columns it was applied with, saved in the checkpoint (a restarted run may need them)
    keys: dict[str, tuple[str, ...]] | None = None

    def table_settings(self, target: str) -> TableSettings:
        """How ``target`` (``database.table``) is applied: keys, SCD type, tracked and written columns."""
        remembered = self._keys()
        sources = sorted(self.sources.get(target, ()))
        settings = table_settings(self.config, target, sources, self.schemas, remembered.get(target))
        remembered[target] = settings.keys or ()
        return settings

    def _keys(self) -> dict[str, tuple[str, ...]]:
        if self.keys is None:
            self.keys = load_keys(self.config.checkpoint)
        return self.keys

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        try:
            self._process(frame, batch_id)
        except BaseException as exc:
            self.failure = typed(exc)
            raise
        self.batches += 1

    def _process(self, frame: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        frame = frame.persist()
        # undone in reverse order on the way out: the decode released, the settings restored, the batch unpersisted
        with contextlib.ExitStack() as scope:
            scope.callback(frame.unpersist)
            messages, payload, offsets = _offsets(frame)
            if messages == 0 and self.gate is None:
                return
            # a small batch's decode and summary run interpreted, as do those of a batch of many tables (by the last
            # batch's) with few changes each; each table then chooses by its own rows
            scope.enter_context(expressions_for(frame.sparkSession, messages, self.last_tables))
            decode_started = time.monotonic()
            codec_options = self.config.codec_options()
            decoded = decode(
                drop_excluded(frame, self.config.protocol, codec_options, self.config.routing),
                self.config.protocol,
                codec_options,
                schemas=self.schemas or None,
                plan=batch_plan(self.config.decode_plan, messages, payload),
                time_as=self.config.time_as,
                partition_ts=self._clock(),
                known_versions=list(self.versions.values()),
            )
            scope.callback(decoded.release)
            decode_seconds = time.monotonic() - decode_started
            # the rest of the batch (its summary) by its own tables, which the next batch's decode goes by
            self.last_tables = max(1, len(decoded.tables()))
            scope.enter_context(expressions_for(frame.sparkSession, messages, self.last_tables))
            self.schemas.update(decoded.schemas())
            ddl = self._learn_versions(decoded.control())
            routed = batch_tables(
                decoded, self.config, ddl, sink=self.sink, sources=self.sources, schemas=self.schemas,
                remembered=self._keys(),
            )  # fmt: skip
            keys_before = dict(self._keys())
            tables = routed.frames
            watermark = None
            held = 0
            if self.gate is not None:
                gated = self.gate.gate(batch_id, tables, decoded.control())
                tables, watermark, held = gated.ready, gated.watermark, sum(gated.held.values())
            batch = BatchInfo(app_id=self.config.app_id, batch_id=batch_id, offsets=offsets)
            dead = self._dead_letters(decoded, batch)  # durable before any table and the offsets
            apply_started = time.monotonic()
            results = self._apply(tables, batch)
            apply_seconds = time.monotonic() - apply_started
            skipped = [name for name, result in results.items() if not result.written]
            applied = {name: result.changes for name, result in results.items() if result.written and result.changes}
            changes = {name: dict(results[name].ops) for name in applied}
            if self.gate is not None:
                self.gate.commit(batch_id)
            self.clock = decoded.partition_commit_ts()
            save_clock(self.config.checkpoint, self.clock)
            if self._keys() != keys_before:
                save_keys(self.config.checkpoint, self._keys())
            paths = dict(decoded.paths)
        if self.progress is not None:
            report = BatchReport(
                batch_id=batch_id,
                messages=messages,
                applied=applied,
                skipped=tuple(skipped),
                held=held,
                dead_letters=dead,
                watermark=watermark,
                seconds=time.monotonic() - started,
                decoded=paths,
                decode_seconds=decode_seconds,
                decode_steps=dict(decoded.steps),
                apply_seconds=apply_seconds,
                changes=changes,
                offsets=json.loads(offsets),
                dead_letter_table=self._dead_letter_table() if dead else None,
                ddl=routed.notes,
            )
            self.progress(report)

    def _apply(self, tables: Mapping[str, DataFrame], batch: BatchInfo) -> dict[str, Applied]:
        """Every table's changes applied at once, ``table-parallelism`` tables side by side (see
        :mod:`cdc_spark.sinks.scd1_batch`); specs are built first, so a configuration error stops the batch before
        any table is written."""
        specs: list[tuple[DataFrame, ApplySpec]] = []
        for name, pending in sorted(tables.items()):
            settings = self.table_settings(name)
            spec = build_spec(
                pending,
                table=name,
                keys=settings.keys or (),
                scd=settings.scd,
                track_columns=settings.track_columns,
                include_columns=settings.include_columns,
                exclude_columns=settings.exclude_columns,
                tombstone_retention=self.config.tombstone_retention,
                metadata=self.config.metadata_columns,
            )
            specs.append((pending, spec))
        return apply_tables(specs, self.sink, batch, self.config.table_parallelism)

    def _learn_versions(self, control: DataFrame) -> list[TableDdl]:
        """Learn the schema versions the batch brought; returns its table DDL (one collect of control rows)."""
        from cdc_core.canonical import schema_from_json

        table_ddl = f"kind = 'ddl' AND ddl_type IN ({', '.join(repr(k) for k in TABLE_DDL)})"
        rows = control.where(f"schema_json IS NOT NULL OR ({table_ddl})").collect()
        for row in rows:
            if row["schema_json"] is None:
                continue
            schema = schema_from_json(json.loads(row["schema_json"]))
            key = (schema.database, schema.table, schema.version)
            self.versions.pop(key, None)
            self.versions[key] = schema
        while len(self.versions) > MAX_KNOWN_VERSIONS:
            del self.versions[next(iter(self.versions))]
        return table_ddls(rows)

    def _clock(self) -> dict[PartitionKey, int]:
        if self.clock is None:
            self.clock = load_clock(self.config.checkpoint)
        return self.clock

    def _dead_letters(self, decoded: DecodedChanges, batch: BatchInfo) -> int:
        """Undecodable messages appended to the dead-letter table by Spark, once per batch, before any table is
        written: past ``max_dead_letters``, or where the table cannot be written, the batch fails whole."""
        count = decoded.dead_letter_count()
        if not count:
            return 0
        letters = decoded.dead_letters()
        limit = self.config.max_dead_letters
        if limit is not None and self.dead_letters_written + count > limit:
            first = letters.select("topic", "partition", "offset", "error").first()
            where = f"{first['topic']}[{first['partition']}]@{first['offset']}" if first is not None else "?"
            raise DeadLetterLimitError(
                f"batch {batch.batch_id}: {count} message(s) could not be decoded, more than --max-dead-letters "
                f"{limit} allows in this run ({self.dead_letters_written} before it); nothing of the batch was "
                f"committed; the first, {where}: {first['error'] if first is not None else '?'}"
            )
        writer = self.letters if self.letters is not None else self.sink
        writer.write_dead_letters(letters, batch)
        self.dead_letters_written += count
        return count

    def _dead_letter_table(self) -> str | None:
        writer: object = self.letters if self.letters is not None else self.sink
        table_format = getattr(writer, "format", None)
        name = getattr(table_format, "dead_letters", None)
        return str(name()) if callable(name) else None


def query_name(config: JobConfig) -> str:
    """The streaming query's name (progress listeners tell the job's query by it)."""
    return f"cdc-apply-{config.protocol}"


def start(
    spark: SparkSession,
    config: JobConfig,
    progress: Callable[[BatchReport], None] | None = None,
    stream: DataFrame | None = None,
) -> StreamingQuery:
    """Start the streaming query (``--once``: until the source is drained; ``--continuous``: forever).

    ``stream`` replaces the configured source with any streaming DataFrame in the Kafka source's shape
    (Spark's own ``kafka`` format on a cluster that has it, or files of recorded messages).
    """
    return _start(spark, config, progress, stream)[0]


def check_source(spark: SparkSession, config: JobConfig) -> None:
    """The source exists (a ``file://`` location, the ``kafka://`` topics on brokers that answer in time)."""
    if config.source.kind == "kafka":
        settings = config.source_options()
        check_kafka_topics(spark, config.source.location, config.source.topics, settings, config.broker_timeout)
    else:
        from cdc_spark.source.file_stream import stream_path

        stream_path(config.source.location)


def _start(
    spark: SparkSession,
    config: JobConfig,
    progress: Callable[[BatchReport], None] | None,
    stream: DataFrame | None,
) -> tuple[StreamingQuery, BatchProcessor]:
    _ = config.decode_plan, config.time_as, config.table_parallelism  # a bad option fails here, not in a batch
    get_codec(config.protocol).decoder(config.codec_options())  # so do an unknown protocol and codec options
    if stream is None:
        check_source(spark, config)
    gate = None
    if config.watermark:
        from cdc_spark.watermark import WatermarkGate

        gate = WatermarkGate(spark, os.path.join(config.checkpoint, "watermarks"))
    sink = make_sink(spark, config)
    letters = load_sink(config.table_format, spark, config.target, config.options)
    processor = BatchProcessor(config=config, sink=sink, letters=letters, gate=gate, progress=progress)
    writer = (
        (stream if stream is not None else read_stream(spark, config))
        .writeStream.foreachBatch(processor)
        .option("checkpointLocation", os.path.join(config.checkpoint, "stream"))
        .queryName(query_name(config))
    )
    if config.continuous:
        writer = writer.trigger(processingTime=config.options.get("trigger-interval", "5 seconds"))
    else:
        writer = writer.trigger(availableNow=True)
    return writer.start(), processor


_LOG: Final = logging.getLogger("cdc_spark.job")


def run(
    spark: SparkSession,
    config: JobConfig,
    progress: Callable[[BatchReport], None] | None = None,
    stream: DataFrame | None = None,
    notify: Callable[[str], None] | None = None,
) -> None:
    """Run the job to completion (``--once``) or until interrupted (``--continuous``).

    A service that goes away (:class:`~cdc_core.errors.UnavailableError`) restarts the query from its checkpoint
    within ``config.retry``'s bounds, each restart said to ``notify`` (default: the log); every failure that ends
    the run is raised as the project's typed error (:func:`cdc_spark.failures.typed`).
    """
    say = notify or _LOG.warning
    waits = config.retry.waits()
    retried = metrics_restarts = 0
    while True:
        query: StreamingQuery | None = None
        processor: BatchProcessor | None = None
        try:
            query, processor = _start(spark, config, progress, stream)
            query.awaitTermination()
            return
        except Exception as exc:
            failure = (processor.failure if processor is not None else None) or typed(exc)
            if metrics_restarts < _METRICS_RESTARTS and _kafka_metrics_failure(exc):
                # Spark 4.1.1's Kafka source fails its progress report after re-running, on restart, a batch the
                # checkpoint had planned but not committed (SPARK-55271): the batch itself was applied (exactly
                # once, by the sinks' batch ids), so the query is started again from its checkpoint.
                metrics_restarts += 1
                say(f"restarting the query after Spark's Kafka progress-report failure (SPARK-55271): {reason(exc)}")
                continue
            if processor is not None and processor.batches:
                waits, retried = config.retry.waits(), 0  # it had recovered: the count starts anew
            wait = next(waits, None) if fault_of(failure) is Fault.INFRASTRUCTURE else None
            if wait is None:
                if failure is exc:
                    raise
                raise failure  # noqa: B904 (its cause is Spark's error, set where it was typed)
            retried += 1
            say(f"retry {retried} of {config.retry.retries} in {wait:g} s, from the checkpoint, after: {failure}")
            time.sleep(wait)
        finally:
            _stop(query)


_METRICS_RESTARTS: Final = 3


def _stop(query: StreamingQuery | None) -> None:
    """Stop ``query`` if it still runs (one that failed may say so by raising its failure again)."""
    if query is None:
        return
    with contextlib.suppress(Exception):
        if query.isActive:
            query.stop()


def _kafka_metrics_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the Kafka source's null-offsets failure in its metrics (SPARK-55271)."""
    text = str(exc)
    stack = getattr(exc, "getStackTrace", None)
    trace = str(stack()) if callable(stack) else ""
    return '"scala.Option.get()" is null' in text and ("KafkaMicroBatchStream" in trace or "KafkaV2" in text)


def describe(report: BatchReport) -> str:
    tables = ", ".join(f"{name} +{count}" for name, count in sorted(report.applied.items())) or "no table changes"
    extra = [f"replayed (skipped): {', '.join(report.skipped)}"] if report.skipped else []
    if report.held:
        extra.append(f"held above watermark {report.watermark}: {report.held}")
    if report.dead_letters:
        extra.append(f"dead letters: {report.dead_letters}")
    if report.ddl:
        extra.append(f"ddl: {'; '.join(report.ddl)}")
    if report.decoded:
        extra.append(
            f"decoded: {report.decoded.get('jvm', 0):,} in the JVM, {report.decoded.get('codec', 0):,} by the codec"
        )
    suffix = "; " + "; ".join(extra) if extra else ""
    rate = ""
    if report.seconds > 0 and report.messages:
        per_second = report.messages / report.seconds
        rate = f", {per_second:,.0f} messages/s" if per_second >= 10 else f", {per_second:.1f} messages/s"
    timing = f"{report.seconds:.1f} s{rate}{_timing(report)}"
    return f"batch {report.batch_id}: {report.messages} messages -> {tables}{suffix} ({timing})"


def _timing(report: BatchReport) -> str:
    """``; decode 8.1 s (shapes 2.0, typing 4.7), apply 3.9 s``: where a batch's time went (empty when not
    measured)."""
    if not report.decode_seconds and not report.apply_seconds:
        return ""
    steps = ", ".join(f"{name} {seconds:.1f}" for name, seconds in report.decode_steps.items())
    within = f" ({steps})" if steps else ""
    return f"; decode {report.decode_seconds:.1f} s{within}, apply {report.apply_seconds:.1f} s"


def steady_rate(reports: Sequence[BatchReport]) -> float | None:
    """Messages per second over the batches after the first (which pays for JVM warm-up and table creation);
    None with fewer than two batches."""
    later = [r for r in reports[1:] if r.messages]
    seconds = sum(r.seconds for r in later)
    return sum(r.messages for r in later) / seconds if later and seconds > 0 else None
