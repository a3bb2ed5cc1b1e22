"""Decode in the executors: Kafka-shaped rows in, the change-frame contract out (see docs/spark-source-decode.md).

Two passes of ``mapInArrow`` over the messages, grouped by topic-partition and in offset order inside each task
(a stateful decoder, such as Simple's schema cache, sees its partition's messages in order):

1. every message is decoded; the pass emits only control rows (DDL, watermark, bootstrap), dead letters, and per
   task the newest schema of each table. The driver collects this small result and keeps, per table, the schema
   with the highest commit ts (ties: the later message), the same rule as the driver-side decoder.
2. every message is decoded again with those schemas broadcast; each row change becomes one wide Arrow row with
   the common ``_cdc_*`` columns and a struct for its table, typed by the table's schema. ``table(db, t)`` selects
   that table's struct, so one decode serves every table of the batch.

The output equals :mod:`cdc_spark.driver_decode`'s row for row (a test checks it), without funnelling the batch
through the driver. The second pass is cached until :meth:`ExecutorDecodedChanges.release`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.canonical import schema_from_json, schema_to_json
from cdc_core.codec import Decoder, SchemaHoldingDecoder
from cdc_core.errors import CdcError, ConfigError
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_spark.driver_decode import CONTROL_SCHEMA, DEAD_LETTER_SCHEMA, ValueRangeError, change_schema, spark_image
from cdc_spark.partition_clock import PartitionClock, PartitionKey, merge_clocks
from cdc_spark.time_text import TimeAsText, check_time_as

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

FIRST_PASS: Final = (
    "kind string, database string, table string, commit_ts bigint, sql string, ddl_type string, schema_json string,"
    " topic string, partition int, offset bigint, position int, key binary, value binary, error_type string,"
    " error string"
)
COMMON: Final = (
    "__table int, _cdc_op string, _cdc_commit_ts bigint,"
    " _cdc_sequence struct<commit_ts:bigint,partition:int,offset:bigint,position:int>,"
    " _cdc_changed_columns array<string>, _cdc_database string, _cdc_table string, _cdc_schema_version bigint,"
    " _cdc_topic string, _cdc_partition int, _cdc_offset bigint, _cdc_zero_dates map<string,string>,"
    " key binary, value binary, error_type string, error string"
)


class DecodeRetryError(CdcError, RuntimeError):
    """A message decoded in the first pass failed in the second: the batch fails (and is retried), nothing is lost."""


NO_SCHEMA: Final = -1  # a change that could not be typed (no schema, a value out of range): a dead letter


def _messages(batches: Iterator[pa.RecordBatch]) -> Iterator[Message]:
    for batch in batches:
        for row in batch.to_pylist():
            stamp = row["timestamp"]
            yield Message(
                value=row["value"],
                key=row["key"],
                topic=row["topic"],
                partition=row["partition"],
                offset=row["offset"],
                timestamp=None if stamp is None else int(stamp.timestamp() * 1000),
            )


@attrs.define
class _Decoders:
    """One decoder per topic-partition within a task: decoder state follows the partition's own order."""

    protocol: str
    options: dict[str, object]
    primed_texts: list[str] = attrs.field(factory=list)  # schemas (canonical JSON) learned from earlier batches
    by_partition: dict[tuple[str | None, int | None], Decoder] = attrs.field(factory=dict)
    _primed: list[TableSchema] | None = attrs.field(default=None, init=False)  # parsed once, when first needed

    def decode(self, message: Message) -> list[Event]:
        where = (message.topic, message.partition)
        decoder = self.by_partition.get(where)
        if decoder is None:
            decoder = self.by_partition[where] = get_codec(self.protocol).decoder(self.options)
            if isinstance(decoder, SchemaHoldingDecoder):
                if self._primed is None:
                    self._primed = [schema_from_json(json.loads(text)) for text in self.primed_texts]
                for schema in self._primed:
                    decoder.prime(schema)
        return decoder.decode(message)

    def unreleased(self) -> list[tuple[Message, str]]:
        """Rows a decoder still holds at the end of the task: their schema never came; they are dead letters."""
        held: list[tuple[Message, str]] = []
        for decoder in self.by_partition.values():
            if isinstance(decoder, SchemaHoldingDecoder):
                held += decoder.unreleased()
        return held


def _first_pass(protocol: str, options: dict[str, object], primed: list[str]) -> Any:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    parsed = _parse_datatype_string(FIRST_PASS)
    assert isinstance(parsed, StructType)
    schema = to_arrow_schema(parsed)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        decoders = _Decoders(protocol, options, primed)
        newest: dict[tuple[str, str], tuple[tuple[int, int, int, int], TableSchema, Message]] = {}
        out: list[dict[str, Any]] = []

        def learn(table_schema: TableSchema, commit_ts: int | None, message: Message, position: int) -> None:
            name = (table_schema.database, table_schema.table)
            rank = (-1 if commit_ts is None else commit_ts, message.partition or 0, message.offset or 0, position)
            if name not in newest or rank >= newest[name][0]:
                newest[name] = (rank, table_schema, message)

        def row(kind: str, message: Message, **values: Any) -> dict[str, Any]:
            return {"kind": kind, "topic": message.topic, "partition": message.partition, "offset": message.offset,
                    **values}  # fmt: skip

        clock = PartitionClock()
        for message in _messages(batches):
            try:
                events = decoders.decode(message)
            except CdcError as exc:
                out.append(row("dead", message, key=message.key, value=message.value,
                               error_type=type(exc).__name__, error=str(exc)))  # fmt: skip
                continue
            clock.see((message.topic, message.partition), events)
            for position, event in enumerate(events):
                if isinstance(event, RowChange):
                    if event.schema is not None:
                        learn(event.schema, event.commit_ts, message, position)
                elif isinstance(event, Watermark):
                    out.append(row("watermark", message, commit_ts=event.ts))
                elif isinstance(event, Bootstrap):
                    learn(event.table_schema, None, message, position)
                    out.append(row("bootstrap", message, database=event.database, table=event.table,
                                   schema_json=json.dumps(schema_to_json(event.table_schema))))  # fmt: skip
                elif isinstance(event, DDLEvent):
                    text = None
                    if event.table_schema is not None:
                        learn(event.table_schema, event.commit_ts, message, position)
                        text = json.dumps(schema_to_json(event.table_schema))
                    out.append(row("ddl", message, database=event.database, table=event.table,
                                   commit_ts=event.commit_ts, sql=event.sql, ddl_type=event.ddl_type.value,
                                   schema_json=text))  # fmt: skip
        for rank, table_schema, message in newest.values():
            out.append(row("schema", message, database=table_schema.database, table=table_schema.table,
                           commit_ts=rank[0], position=rank[3],
                           schema_json=json.dumps(schema_to_json(table_schema))))  # fmt: skip
        for message, reason in decoders.unreleased():
            out.append(row("dead", message, key=message.key, value=message.value, error_type="SchemaError",
                           error=reason))  # fmt: skip
        for (topic, partition), ts in clock.snapshot().items():
            out.append({"kind": "clock", "topic": topic, "partition": partition, "commit_ts": ts})
        yield pa.RecordBatch.from_pylist(out, schema=schema)

    return run


def _wide_schema(tables: list[TableSchema]) -> StructType:
    from pyspark.sql import types as T

    wide = T._parse_datatype_string(COMMON)
    assert isinstance(wide, T.StructType)
    for index, table_schema in enumerate(tables):
        typed = change_schema(table_schema)
        keep = [f for f in typed.fields if not f.name.startswith("_cdc_") or f.name == "_cdc_before"]
        wide.add(f"__t{index}", T.StructType(keep), True)
    return wide


def _image(table_schema: TableSchema, image: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, str]]:
    values, zeros = spark_image(table_schema, image)
    return dict(zip([c.name for c in table_schema.stored_columns], values, strict=True)), zeros


def _second_pass(
    protocol: str,
    options: dict[str, object],
    schema_texts: list[str],
    wide: StructType,
    *,
    partition_ts: dict[PartitionKey, int],
    first_pass_dead: frozenset[tuple[str | None, int | None, int | None]],
    primed: list[str],
) -> Any:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(wide)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tables = [schema_from_json(json.loads(text)) for text in schema_texts]
        index_of = {(t.database, t.table): i for i, t in enumerate(tables)}
        decoders = _Decoders(protocol, options, primed)
        clock = PartitionClock(partition_ts)
        out: list[dict[str, Any]] = []
        for message in _messages(batches):
            try:
                events = decoders.decode(message)
            except CdcError as exc:
                if (message.topic, message.partition, message.offset) in first_pass_dead:
                    continue  # a dead letter of the first pass
                # The first pass read this message: failing now is not the message's fault (a registry that went
                # away, say). Dropping the change would lose it; failing the batch makes Spark run it again.
                raise DecodeRetryError(
                    f"message {message.topic}[{message.partition}]@{message.offset} decoded in the first pass and "
                    f"failed in the second: {exc}"
                ) from exc
            where = (message.topic, message.partition)
            for position, event in enumerate(events):
                change = _change(event)
                if change is None:
                    continue
                op, database, table, before, after, changed, commit_ts, version = change
                common = {
                    "_cdc_op": op, "_cdc_commit_ts": commit_ts,
                    "_cdc_sequence": {"commit_ts": clock.order_ts(where, commit_ts), "partition": message.partition,
                                      "offset": message.offset, "position": position},
                    "_cdc_database": database, "_cdc_table": table, "_cdc_schema_version": version,
                    "_cdc_topic": message.topic, "_cdc_partition": message.partition, "_cdc_offset": message.offset,
                }  # fmt: skip
                index = index_of.get((database, table))
                dead = {**common, "__table": NO_SCHEMA, "key": message.key, "value": message.value}
                if index is None:
                    out.append({**dead, "error_type": "SchemaError",
                                "error": f"no schema known for table {database}.{table}"})  # fmt: skip
                    continue
                table_schema = tables[index]
                image = before if op == "delete" else after
                try:
                    values, zeros = _image(table_schema, image)
                    values["_cdc_before"] = None if before is None else _image(table_schema, before)[0]
                except ValueRangeError as exc:
                    out.append({**dead, "error_type": type(exc).__name__, "error": str(exc)})
                    continue
                names = [c.name for c in table_schema.stored_columns]
                if image is not None and changed is None and any(n not in image for n in names):
                    changed = tuple(n for n in names if n in image)  # an older, narrower schema
                out.append({**common, "__table": index, f"__t{index}": values,
                            "_cdc_changed_columns": None if changed is None else list(changed),
                            "_cdc_zero_dates": list(zeros.items()) or None})  # fmt: skip
            clock.see(where, events)  # after ordering them: a change without a ts follows the ones before it
            if len(out) >= 4096:
                yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)
                out = []
        yield pa.RecordBatch.from_pylist(out, schema=arrow_schema)

    return run


_Change = tuple[str, str, str, Mapping[str, Any] | None, Mapping[str, Any] | None, tuple[str, ...] | None,
                int | None, int | None]  # fmt: skip


def _change(event: Event) -> _Change | None:
    if isinstance(event, RowChange):
        return (event.op.value, event.database, event.table, event.before, event.after, event.changed_columns,
                event.commit_ts, event.schema_version)  # fmt: skip
    if isinstance(event, DDLEvent) and event.ddl_type is DDLType.TRUNCATE and event.database and event.table:
        return ("truncate", event.database, event.table, None, None, None, event.commit_ts, None)
    return None


@attrs.define
class ExecutorDecodedChanges:
    """The decode contract over DataFrames computed in the executors."""

    spark: SparkSession
    _wide: DataFrame
    _first: list[Any]
    _schemas: dict[tuple[str, str], TableSchema]
    _order: list[tuple[str, str]]
    _partition_ts: dict[PartitionKey, int] = attrs.field(factory=dict)

    def partition_commit_ts(self) -> dict[PartitionKey, int]:
        """The newest commit ts per topic-partition after this batch: the next batch's ``partition_ts``."""
        seen = {(r["topic"], r["partition"]): r["commit_ts"] for r in self._first if r["kind"] == "clock"}
        return merge_clocks(self._partition_ts, seen)

    def tables(self) -> list[tuple[str, str]]:

        present = {r["__table"] for r in self._wide.select("__table").distinct().collect()}
        return sorted(self._order[i] for i in present if i != NO_SCHEMA)

    def table(self, database: str, table: str) -> DataFrame:
        from pyspark.sql import functions as F

        index = self._order.index((database, table))
        table_schema = self._schemas[(database, table)]
        columns = [F.col(f"__t{index}").getField(c.name).alias(c.name) for c in table_schema.stored_columns]
        meta = [F.col(f"__t{index}").getField("_cdc_before").alias("_cdc_before")]
        ordered: list[Column | str] = [
            *columns, "_cdc_op", "_cdc_commit_ts", "_cdc_sequence", *meta, "_cdc_changed_columns", "_cdc_database",
            "_cdc_table", "_cdc_schema_version", "_cdc_topic", "_cdc_partition", "_cdc_offset", "_cdc_zero_dates",
        ]  # fmt: skip
        frame: DataFrame = self._wide.where(F.col("__table") == index).select(*ordered)
        return frame

    def schemas(self) -> dict[tuple[str, str], TableSchema]:
        return dict(self._schemas)

    def control(self) -> DataFrame:
        rows = [
            (r["kind"], r["database"], r["table"], r["commit_ts"], r["sql"], r["ddl_type"], r["schema_json"],
             r["partition"], r["offset"])
            for r in self._first if r["kind"] in ("ddl", "watermark", "bootstrap")
        ]  # fmt: skip
        frame: DataFrame = self.spark.createDataFrame(rows, CONTROL_SCHEMA)
        return frame

    def dead_letters(self) -> DataFrame:
        from pyspark.sql import functions as F

        decoded = [
            (r["topic"], r["partition"], r["offset"], r["key"], r["value"], r["error_type"], r["error"])
            for r in self._first if r["kind"] == "dead"
        ]  # fmt: skip
        undecoded: DataFrame = self.spark.createDataFrame(decoded, DEAD_LETTER_SCHEMA)
        unschematized = self._wide.where(F.col("__table") == NO_SCHEMA).select(
            F.col("_cdc_topic").alias("topic"), F.col("_cdc_partition").alias("partition"),
            F.col("_cdc_offset").alias("offset"), "key", "value", "error_type", "error",
        )  # fmt: skip
        frame: DataFrame = undecoded.unionByName(unschematized)
        return frame

    def release(self) -> None:
        """Drop the cached decode of this batch."""
        self._wide.unpersist()


PLANS: Final = ("executor", "native", "driver")


def decode(
    df: DataFrame,
    protocol: str,
    options: Mapping[str, object] | None = None,
    schemas: Mapping[tuple[str, str], TableSchema] | None = None,
    *,
    plan: str = "executor",
    time_as: str = "interval",
    partition_ts: Mapping[PartitionKey, int] | None = None,
    known_versions: Sequence[TableSchema] = (),
) -> Any:
    """Decode ``df`` (Kafka source columns) into the change-frame contract.

    ``partition_ts``: the previous batch's ``partition_commit_ts()``, the newest commit ts per topic-partition, so
    that changes without one (TiCDC Avro's tombstone deletes) are ordered after what preceded them
    (:mod:`cdc_spark.partition_clock`). ``known_versions``: every schema version earlier batches brought
    (BOOTSTRAP, DDL), to prime decoders that hold rows until their version is known (TiCDC Simple).

    ``time_as``: ``interval`` (TIME as ``interval day to second``) or ``string`` (TiDB's text, see
    :mod:`cdc_spark.time_text`).

    ``plan``: ``executor`` (default) decodes with the protocol's codec in the executors; ``native`` reads
    Canal-JSON with Spark's own ``from_json`` and casts (:mod:`cdc_spark.native_canal`; other protocols use the
    executor plan); ``driver`` decodes on the driver (:mod:`cdc_spark.driver_decode`, for small batches).
    All three give the same rows.
    """
    if plan not in PLANS:
        raise ConfigError(f"decode plan {plan!r}: expected one of {', '.join(PLANS)}")
    check_time_as(time_as)
    decoded: Any
    if plan == "driver":
        from cdc_spark import driver_decode

        decoded = driver_decode.decode(
            df, protocol, options, schemas, partition_ts=partition_ts, known_versions=known_versions
        )
    elif plan == "native" and protocol == "canal-json":
        from cdc_spark import native_canal

        decoded = native_canal.decode(df, protocol, options, schemas, partition_ts=partition_ts)
    else:
        decoded = decode_in_executors(
            df, protocol, options, schemas, partition_ts=partition_ts, known_versions=known_versions
        )
    return TimeAsText(decoded) if time_as == "string" else decoded


def decode_in_executors(
    df: DataFrame,
    protocol: str,
    options: Mapping[str, object] | None = None,
    schemas: Mapping[tuple[str, str], TableSchema] | None = None,
    *,
    partition_ts: Mapping[PartitionKey, int] | None = None,
    known_versions: Sequence[TableSchema] = (),
) -> ExecutorDecodedChanges:
    """Decode ``df`` (Kafka source columns) with the ``protocol`` codec in the executors.

    ``partition_ts``: the previous batch's :meth:`~ExecutorDecodedChanges.partition_commit_ts`, so that a change
    without a commit ts (an Avro tombstone) at the start of this batch is ordered (:mod:`cdc_spark.partition_clock`).
    """
    codec_options = dict(options or {})
    get_codec(protocol).decoder(codec_options)  # fail fast on the driver: unknown protocol or option
    grouped = df.select("key", "value", "topic", "partition", "offset", "timestamp").repartition("topic", "partition")
    grouped = grouped.sortWithinPartitions("topic", "partition", "offset")
    primed = [json.dumps(schema_to_json(t)) for t in [*known_versions, *(schemas or {}).values()]]
    first = grouped.mapInArrow(_first_pass(protocol, codec_options, primed), FIRST_PASS).collect()

    known: dict[tuple[str, str], TableSchema] = dict(schemas or {})
    ranks: dict[tuple[str, str], tuple[int, int, int, int]] = {}
    for row in first:
        if row["kind"] == "schema":
            name = (row["database"], row["table"])
            rank = (row["commit_ts"], row["partition"] or 0, row["offset"] or 0, row["position"] or 0)
            if name not in ranks or rank >= ranks[name]:
                ranks[name] = rank
                known[name] = schema_from_json(json.loads(row["schema_json"]))
    order = sorted(known)
    tables = [known[name] for name in order]
    wide_schema = _wide_schema(tables)
    texts = [json.dumps(schema_to_json(t)) for t in tables]
    seed = dict(partition_ts or {})
    dead = frozenset((r["topic"], r["partition"], r["offset"]) for r in first if r["kind"] == "dead")
    second = _second_pass(
        protocol, codec_options, texts, wide_schema, partition_ts=seed, first_pass_dead=dead, primed=primed
    )
    wide = grouped.mapInArrow(second, wide_schema).persist()
    return ExecutorDecodedChanges(df.sparkSession, wide, first, known, order, seed)


__all__ = ["ExecutorDecodedChanges", "decode", "decode_in_executors"]
