"""Messages decoded by the protocol's own codec in the executors: the residue of the JVM path, or every message.

Messages are grouped by topic-partition and sorted by offset inside each task, so a stateful decoder (Simple's
schema cache, Avro's registry client) sees its partition in order. Two ``mapInArrow`` passes:

1. every message is decoded; the pass emits only control rows (DDL, watermark, bootstrap), dead letters, the
   newest schema of each table with its rank, the partition clock, and the runs of changes without a commit ts
   whose next timed message is older than the clock before them (:class:`~cdc_spark.partition_clock.NextTimed`,
   a tail sent again). The driver collects this small result
   (a dead letter as its coordinates and error: its payload is joined back from the messages in the executors).
   Where the driver holds every message already (samples, :meth:`PythonPath.run`), the pass runs there.
2. every message is decoded again with the tables' final schemas broadcast; each row change becomes one wide
   Arrow row with the common ``_cdc_*`` columns and a struct for its table, typed by :func:`spark_image`. It runs
   only where the first pass found row changes.

A message that decoded in the first pass and fails in the second (a registry that went away) fails the batch
with :class:`DecodeRetryError`, so Spark runs it again: it is never skipped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from cdc_core.canonical import schema_from_json, schema_to_json
from cdc_core.codec import Awaited, Decoder, SchemaHoldingDecoder
from cdc_core.errors import CdcError, Fault, UnavailableError
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_spark.batch_cache import persist_batch, table_rows
from cdc_spark.decoding.coordinates import join_on_coordinates
from cdc_spark.decoding.first_pass import FIRST_PASS, FIRST_PASS_NAMES, FirstPass, Rank
from cdc_spark.decoding.origins import Origins
from cdc_spark.decoding.spark_types import (
    CONTROL_SCHEMA,
    DEAD_LETTER_SCHEMA,
    ValueRangeError,
    change_schema,
    spark_image,
)
from cdc_spark.local_frames import arrow_frame, empty_frame, rows_frame
from cdc_spark.partition_clock import NextTimed, PartitionClock, PartitionKey, Run, merge_clocks, next_times

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

MESSAGE_COLUMNS: Final = ("key", "value", "topic", "partition", "offset", "timestamp")
COMMON: Final = (
    "__table int, _cdc_op string, _cdc_commit_ts bigint,"
    " _cdc_sequence struct<commit_ts:bigint,partition:int,offset:bigint,position:int>,"
    " _cdc_changed_columns array<string>, _cdc_database string, _cdc_table string, _cdc_schema_version bigint,"
    " _cdc_topic string, _cdc_partition int, _cdc_offset bigint, _cdc_zero_dates map<string,string>,"
    " key binary, value binary, error_type string, error string"
)
SEED_RANK: Final = (-2, 0, 0, 0)  # schemas of earlier batches: older than anything in this batch
NO_SCHEMA: Final = -1  # a change that could not be typed (no schema, a value out of range): a dead letter
_BATCH_ROWS: Final = 4096


class DecodeRetryError(CdcError, RuntimeError):
    """A message decoded in the first pass failed in the second: the batch fails (and is retried), nothing is lost."""

    fault = Fault.INFRASTRUCTURE  # what it decodes from changed under it (a registry that went away)


class Fields(Protocol):
    """A row of the Kafka source's columns by name: a Spark ``Row`` or an Arrow batch's row as a dict."""

    def __getitem__(self, name: str, /) -> Any: ...


def row_message(row: Fields) -> Message:
    """The message of a row of the Kafka source's columns (headers left out: no decoder reads them)."""
    stamp = row["timestamp"]
    return Message(
        value=row["value"],
        key=row["key"],
        topic=row["topic"],
        partition=row["partition"],
        offset=row["offset"],
        timestamp=None if stamp is None else int(stamp.timestamp() * 1000),
    )


def _messages(batches: Iterable[pa.RecordBatch]) -> Iterator[Message]:
    for batch in batches:
        for row in batch.to_pylist():
            yield row_message(row)


@attrs.define
class _Decoders:
    """One decoder per topic-partition within a task: decoder state follows the partition's own order."""

    protocol: str
    options: dict[str, object]
    primed_texts: list[str] = attrs.field(factory=list)  # schemas (canonical JSON) learned from earlier batches
    by_partition: dict[tuple[str | None, int | None], Decoder] = attrs.field(factory=dict)
    _primed: list[TableSchema] | None = attrs.field(default=None, init=False)  # parsed once, when first needed
    # the partitions whose decoder holds rows back: asked per message, and a protocol's isinstance takes 9-16 us
    _holding: set[tuple[str | None, int | None]] = attrs.field(factory=set, init=False)

    def decode(self, message: Message) -> list[Event]:
        where = (message.topic, message.partition)
        decoder = self.by_partition.get(where)
        if decoder is None:
            decoder = self.by_partition[where] = get_codec(self.protocol).decoder(self.options)
            if isinstance(decoder, SchemaHoldingDecoder):
                self._holding.add(where)
                if self._primed is None:
                    self._primed = [schema_from_json(json.loads(text)) for text in self.primed_texts]
                for schema in self._primed:
                    decoder.prime(schema)
        return decoder.decode(message)

    def holding(self, message: Message) -> bool:
        """Whether the decoder that read ``message`` holds rows back until their schema arrives."""
        return (message.topic, message.partition) in self._holding

    def unreleased(self) -> list[tuple[str, Awaited]]:
        """Rows a decoder still holds at the end of the task, each with the reason and the schema it waits for:
        their partition never brought it (another may have: :meth:`FirstPass.dead_rows`)."""
        held: list[tuple[str, Awaited]] = []
        for decoder in self.by_partition.values():
            if isinstance(decoder, SchemaHoldingDecoder):
                reasons = [reason for _, reason in decoder.unreleased()]
                held += zip(reasons, decoder.awaited(), strict=True)
        return held


def _schema_json(schema: TableSchema) -> str:
    return json.dumps(schema_to_json(schema))


def _first_pass(
    protocol: str, options: dict[str, object], primed: list[str], partition_ts: dict[PartitionKey, int]
) -> Any:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    parsed = _parse_datatype_string(FIRST_PASS)
    assert isinstance(parsed, StructType)
    schema = to_arrow_schema(parsed)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = _first_pass_rows(_messages(batches), protocol, options, primed, partition_ts)
        yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run


def _first_pass_rows(
    messages: Iterable[Message],
    protocol: str,
    options: dict[str, object],
    primed: list[str],
    partition_ts: Mapping[PartitionKey, int],
) -> list[dict[str, Any]]:
    """The first pass over ``messages`` (each topic-partition's in offset order): its rows (:data:`FIRST_PASS`).
    ``partition_ts``: the clock each topic-partition ended the last batch on."""
    decoders = _Decoders(protocol, options, primed)
    newest: dict[tuple[str, str], tuple[Rank, TableSchema, Message]] = {}
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
    later = NextTimed(partition_ts)
    origins = Origins()
    seen = 0
    changes: dict[tuple[str, str], int] = {}  # the second pass's rows by table
    for message in messages:
        seen += 1
        try:
            events = decoders.decode(message)
        except UnavailableError:
            raise  # a registry or store that is down: the batch fails, the message is never a dead letter
        except CdcError as exc:
            # coordinates only: the payload is joined back from the distributed messages, never collected
            out.append(row("dead", message, error_type=type(exc).__name__, error=str(exc)))
            continue
        clock.see((message.topic, message.partition), events)
        later.see((message.topic, message.partition), message.offset or 0, events)
        placed = origins.placed(message, events, holding=decoders.holding(message))
        for event, (origin, position) in zip(events, placed, strict=True):
            change = _change(event)
            if change is not None:
                changes[change[1], change[2]] = changes.get((change[1], change[2]), 0) + 1
            if isinstance(event, RowChange):
                if event.schema is not None:
                    learn(event.schema, event.commit_ts, origin, position)
            elif isinstance(event, Watermark):
                out.append(row("watermark", message, commit_ts=event.ts))
            elif isinstance(event, Bootstrap):
                learn(event.table_schema, None, message, position)
                out.append(row("bootstrap", message, database=event.database, table=event.table,
                               schema_json=_schema_json(event.table_schema)))  # fmt: skip
            elif isinstance(event, DDLEvent):
                text = None
                if event.table_schema is not None:
                    learn(event.table_schema, event.commit_ts, message, position)
                    text = _schema_json(event.table_schema)
                out.append(row("ddl", message, database=event.database, table=event.table,
                               commit_ts=event.commit_ts, sql=event.sql, ddl_type=event.ddl_type.value,
                               schema_json=text))  # fmt: skip
    for rank, table_schema, message in newest.values():
        out.append(row("schema", message, database=table_schema.database, table=table_schema.table,
                       commit_ts=rank[0], position=rank[3], schema_json=_schema_json(table_schema)))  # fmt: skip
    for reason, held in decoders.unreleased():
        out.append(row("held", held.message, database=held.database, table=held.table, schema_version=held.version,
                       commit_ts=held.commit_ts, error_type="SchemaError", error=reason))  # fmt: skip
    for (topic, partition), ts in clock.snapshot().items():
        out.append({"kind": "clock", "topic": topic, "partition": partition, "commit_ts": ts})
    for (topic, partition), first, last, ts in later.runs:
        out.append({"kind": "next", "topic": topic, "partition": partition, "offset": first, "last_offset": last,
                    "commit_ts": ts})  # fmt: skip
    for (database, table), count in changes.items():
        out.append({"kind": "changes", "database": database, "table": table, "offset": count})
    out.append({"kind": "seen", "offset": seen})
    return out


def wide_schema(tables: Sequence[TableSchema]) -> StructType:
    """The second pass's rows: the common columns, then one struct per table (``__t<index>``)."""
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


_Change = tuple[str, str, str, Mapping[str, Any] | None, Mapping[str, Any] | None, tuple[str, ...] | None,
                int | None, int | None]  # fmt: skip


def _change(event: Event) -> _Change | None:
    if isinstance(event, RowChange):
        return (event.op.value, event.database, event.table, event.before, event.after, event.changed_columns,
                event.commit_ts, event.schema_version)  # fmt: skip
    if isinstance(event, DDLEvent) and event.ddl_type is DDLType.TRUNCATE and event.database and event.table:
        return ("truncate", event.database, event.table, None, None, None, event.commit_ts, None)
    return None


@attrs.frozen(eq=False)
class _SecondPass:
    """The second pass: ``mapInArrow``'s function over Arrow batches of messages in the executors, or :meth:`over`
    the messages the driver holds; one wide row per change (:func:`wide_schema`), typed by ``schema_texts``."""

    protocol: str
    options: dict[str, object]
    schema_texts: list[str]
    arrow_schema: pa.Schema
    partition_ts: dict[PartitionKey, int]
    first_pass_dead: frozenset[tuple[str | None, int | None, int | None]]
    primed: list[str]
    next_runs: tuple[Run, ...] = ()  # the first pass's NextTimed runs
    # rows the first pass held to its end, for a schema another partition brought: read here first
    first_pass_held: frozenset[tuple[str | None, int | None, int | None]] = frozenset()

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return self.over(_messages(batches))

    def over(self, messages: Iterable[Message]) -> Iterator[pa.RecordBatch]:
        """The wide rows of ``messages`` (each topic-partition's in offset order)."""
        import pyarrow as pa

        tables = [schema_from_json(json.loads(text)) for text in self.schema_texts]
        index_of = {(t.database, t.table): i for i, t in enumerate(tables)}
        decoders = _Decoders(self.protocol, self.options, self.primed)
        clock = PartitionClock(self.partition_ts)
        next_ts = next_times(self.next_runs)
        origins = Origins()
        out: list[dict[str, Any]] = []
        for message in messages:
            try:
                events = decoders.decode(message)
            except UnavailableError:
                raise
            except CdcError as exc:
                coordinates = (message.topic, message.partition, message.offset)
                if coordinates in self.first_pass_dead:
                    continue  # a dead letter of the first pass
                if coordinates in self.first_pass_held:  # its values read for the first time: bad data
                    out.append(_message_dead(message, type(exc).__name__, str(exc)))
                    continue
                raise DecodeRetryError(
                    f"message {message.topic}[{message.partition}]@{message.offset} decoded in the first pass and "
                    f"failed in the second: {exc}"
                ) from exc
            where = (message.topic, message.partition)
            placed = origins.placed(message, events, holding=decoders.holding(message))
            for event, (origin, position) in zip(events, placed, strict=True):
                change = _change(event)
                if change is None:
                    continue
                op, database, table, before, after, changed, commit_ts, version = change
                after_ts = None if commit_ts is not None else next_ts(where, origin.offset)
                order_ts = clock.order_ts(where, commit_ts, after_ts)
                common = {
                    "_cdc_op": op, "_cdc_commit_ts": commit_ts,
                    "_cdc_sequence": {"commit_ts": order_ts, "partition": origin.partition, "offset": origin.offset,
                                      "position": position},
                    "_cdc_database": database, "_cdc_table": table, "_cdc_schema_version": version,
                    "_cdc_topic": origin.topic, "_cdc_partition": origin.partition, "_cdc_offset": origin.offset,
                }  # fmt: skip
                index = index_of.get((database, table))
                dead = {**common, "__table": NO_SCHEMA, "key": origin.key, "value": origin.value}
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
            if len(out) >= _BATCH_ROWS:
                yield pa.RecordBatch.from_pylist(out, schema=self.arrow_schema)
                out = []
        # A row the first pass held for a schema another partition brought is still held here where an earlier row
        # of its table waits for a schema nothing brought (Simple keeps a table's rows in order): never dropped
        for reason, held in decoders.unreleased():
            at = held.message
            if (at.topic, at.partition, at.offset) not in self.first_pass_dead:
                error = (
                    f"held behind an earlier row of {held.database}.{held.table} that waits for its schema: {reason}"
                )
                out.append(_message_dead(at, "SchemaError", error))
        yield pa.RecordBatch.from_pylist(out, schema=self.arrow_schema)


def _message_dead(message: Message, error_type: str, error: str) -> dict[str, Any]:
    """A wide row that makes ``message`` a dead letter of the second pass."""
    return {"__table": NO_SCHEMA, "_cdc_topic": message.topic, "_cdc_partition": message.partition,
            "_cdc_offset": message.offset, "key": message.key, "value": message.value, "error_type": error_type,
            "error": error}  # fmt: skip


@attrs.define
class PythonPath:
    """The codec decode of a set of messages: the first pass on construction, typed rows on demand."""

    protocol: str
    options: dict[str, object]
    spark: SparkSession
    source: Callable[[], DataFrame]  # the messages, built where a later step reads them
    primed: list[str]
    first: FirstPass
    _grouped: DataFrame | None = None
    # every message, in topic-partition and offset order, where the driver holds them: the second pass and the
    # dead letters' payloads are made there too, as local relations (no job, no Python worker)
    held: tuple[Message, ...] | None = None

    @property
    def messages(self) -> DataFrame:
        """The messages grouped by topic-partition, in offset order within each task."""
        if self._grouped is None:
            self._grouped = _grouped(self.source())
        return self._grouped

    @classmethod
    def run(
        cls,
        messages: DataFrame | Callable[[], DataFrame],
        protocol: str,
        options: Mapping[str, object],
        known_versions: Sequence[TableSchema] = (),
        held: Sequence[Message] | None = None,
        *,
        spark: SparkSession | None = None,
        partition_ts: Mapping[PartitionKey, int] | None = None,
    ) -> PythonPath:
        """Group ``messages`` by topic-partition in offset order and run the first pass (one collected job). Where
        the driver holds every one of them already (``held``: the samples of shapes of one or two messages, such as
        Simple's schema messages, or a small residue), the first pass runs there, over them, in the same order: no
        job, and ``messages`` given as a function (with ``spark``) is not even built unless a later step reads them
        (a second pass, a dead letter's payload). ``partition_ts``: the clock each topic-partition ended the last
        batch on."""
        codec_options = dict(options)
        clock = dict(partition_ts or {})
        primed = [_schema_json(t) for t in known_versions]
        source = messages if callable(messages) else functools.partial(_same, messages)
        if held is not None:
            session = spark if spark is not None else source().sparkSession
            ordered = sorted(held, key=lambda m: (m.topic or "", m.partition or 0, m.offset or 0))
            rows_here = _first_pass_rows(ordered, protocol, codec_options, primed, clock)
            found = [{n: r.get(n) for n in FIRST_PASS_NAMES} for r in rows_here]
            return cls(protocol, codec_options, session, source, primed, FirstPass(found), held=tuple(ordered))
        grouped = _grouped(source())
        rows = grouped.mapInArrow(_first_pass(protocol, codec_options, primed, clock), FIRST_PASS).collect()
        return cls(protocol, codec_options, grouped.sparkSession, source, primed, FirstPass(rows), grouped)

    def _second_pass(
        self, tables: Sequence[TableSchema], partition_ts: Mapping[PartitionKey, int], wide: StructType
    ) -> _SecondPass:
        from pyspark.sql.pandas.types import to_arrow_schema

        return _SecondPass(
            self.protocol,
            self.options,
            [_schema_json(t) for t in tables],
            to_arrow_schema(wide),
            partition_ts=dict(partition_ts),
            first_pass_dead=self.first.dead_coordinates(),
            primed=[*self.primed, *self.first.primed_later()],
            next_runs=self.first.next_runs(),
            first_pass_held=self.first.held_coordinates(),
        )

    def typed(self, tables: Sequence[TableSchema], partition_ts: Mapping[PartitionKey, int]) -> DataFrame:
        """The second pass in the executors: one wide row per change, typed by ``tables`` (the batch's final
        schemas)."""
        wide = wide_schema(tables)
        return self.messages.mapInArrow(self._second_pass(tables, partition_ts, wide), wide)

    def typed_here(
        self, tables: Sequence[TableSchema], partition_ts: Mapping[PartitionKey, int], indices: Iterable[int]
    ) -> TypedHere:
        """The second pass on the driver, over the messages it holds: a local relation per table (of ``indices``
        into ``tables``) with the common columns and that table's struct only, and one of the changes it could not
        type. One wide relation read per table would have Spark filter every table's rows on the driver for each
        of them, in every query that reads a table (50 tables: seconds a query)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark.sql.types import StructType

        wide = wide_schema(tables)
        second = self._second_pass(tables, partition_ts, wide)
        assert self.held is not None
        rows = pa.Table.from_batches(list(second.over(self.held)), schema=second.arrow_schema)
        common = [f for f in wide.fields if f.name not in {_struct(i) for i in range(len(tables))}]

        def relation(index: int, fields: list[Any]) -> tuple[DataFrame, int]:
            schema = StructType(fields)
            mine = rows.filter(pc.equal(rows.column("__table"), index)).select(schema.fieldNames())
            return arrow_frame(self.spark, mine.to_batches(), schema), mine.num_rows

        untyped, untyped_count = relation(NO_SCHEMA, common)
        parts = {index: relation(index, [*common, wide[_struct(index)]])[0] for index in indices}
        return TypedHere(parts, untyped, untyped_count)


@attrs.frozen
class TypedHere:
    """What the driver's second pass gave: per table index its rows, and the changes it could not type."""

    parts: dict[int, DataFrame]
    untyped: DataFrame
    untyped_count: int


def _struct(index: int) -> str:
    """The wide row's column of table ``index``'s values."""
    return f"__t{index}"


def table_part(wide: DataFrame, index: int, table_schema: TableSchema) -> DataFrame:
    """One table's change frame out of the second pass's wide rows."""
    from pyspark.sql import functions as F

    return table_columns(table_rows(wide, index, "__table").where(F.col("__table") == index), index, table_schema)


def table_columns(rows: DataFrame, index: int, table_schema: TableSchema) -> DataFrame:
    """Table ``index``'s change frame out of second-pass rows of that table only."""
    from pyspark.sql import functions as F

    struct = F.col(_struct(index))
    columns: list[Column | str] = [struct.getField(c.name).alias(c.name) for c in table_schema.stored_columns]
    ordered: list[Column | str] = [
        *columns, "_cdc_op", "_cdc_commit_ts", "_cdc_sequence", struct.getField("_cdc_before").alias("_cdc_before"),
        "_cdc_changed_columns", "_cdc_database", "_cdc_table", "_cdc_schema_version", "_cdc_topic", "_cdc_partition",
        "_cdc_offset", "_cdc_zero_dates",
    ]  # fmt: skip
    frame: DataFrame = rows.select(*ordered)
    return frame


def untyped_dead_letters(wide: DataFrame) -> DataFrame:
    """Second-pass changes that could not be typed (no schema, a value beyond its Spark type)."""
    from pyspark.sql import functions as F

    frame: DataFrame = wide.where(F.col("__table") == NO_SCHEMA).select(
        F.col("_cdc_topic").alias("topic"), F.col("_cdc_partition").alias("partition"),
        F.col("_cdc_offset").alias("offset"), "key", "value", "error_type", "error",
    )  # fmt: skip
    return frame


def newest(
    candidates: Mapping[tuple[str, str], Sequence[tuple[Rank, TableSchema]]],
) -> dict[tuple[str, str], tuple[Rank, TableSchema]]:
    """Per table the schema of highest rank (ties: the later candidate)."""
    found: dict[tuple[str, str], tuple[Rank, TableSchema]] = {}
    for name, ranked in candidates.items():
        for rank, schema in ranked:
            if name not in found or rank >= found[name][0]:
                found[name] = (rank, schema)
    return found


def _same(frame: DataFrame) -> DataFrame:
    return frame


def held_messages(frame: DataFrame) -> list[Message]:
    """Every message of ``frame`` collected to the driver (one job, as Arrow): for a batch known to be small."""
    return list(_messages(frame.select(*MESSAGE_COLUMNS).toArrow().to_batches()))


def _grouped(messages: DataFrame) -> DataFrame:
    """``messages`` by topic-partition, each task's in offset order: the order a stateful decoder needs."""
    grouped = messages.select(*MESSAGE_COLUMNS).repartition("topic", "partition")
    return grouped.sortWithinPartitions("topic", "partition", "offset")


def _dead_letters(spark: SparkSession, python: PythonPath) -> DataFrame:
    """The first pass's dead letters with their payloads taken from the distributed messages (not the driver), or
    from the messages the driver holds."""
    errors = [(r["topic"], r["partition"], r["offset"], r["error_type"], r["error"]) for r in python.first.dead_rows()]
    if not errors:
        return empty_frame(spark, DEAD_LETTER_SCHEMA)
    if python.held is not None:
        return _held_dead_letters(spark, python.held, errors)
    found = rows_frame(spark, errors, "topic string, partition int, offset bigint, error_type string, error string")
    frame: DataFrame = join_on_coordinates(python.messages, found, "inner").select(
        "topic", "partition", "offset", "key", "value", "error_type", "error"
    )
    return frame


def _held_dead_letters(
    spark: SparkSession, held: Sequence[Message], errors: Sequence[tuple[str, int, int, str, str]]
) -> DataFrame:
    """The first pass's dead letters with their payloads taken from the messages the driver holds."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    by_place = {(m.topic, m.partition, m.offset): m for m in held}
    rows = []
    for topic, partition, offset, error_type, error in errors:
        message = by_place[topic, partition, offset]
        rows.append({"topic": topic, "partition": partition, "offset": offset, "key": message.key,
                     "value": message.value, "error_type": error_type, "error": error})  # fmt: skip
    schema = _parse_datatype_string(DEAD_LETTER_SCHEMA)
    assert isinstance(schema, StructType)
    return arrow_frame(spark, [pa.RecordBatch.from_pylist(rows, schema=to_arrow_schema(schema))], schema)


@attrs.frozen
class PythonResult:
    """What the codec path contributes to a batch's :class:`~cdc_spark.decoding.contract.DecodedChanges`."""

    parts: dict[tuple[str, str], DataFrame]
    control: DataFrame
    dead: list[DataFrame]
    clock: dict[PartitionKey, int]
    cached: tuple[DataFrame, ...]  # to release with the batch
    messages: int  # decoded by the codec
    dead_count: int | None = None  # how many rows ``dead`` has, where the driver decoded every message


def assemble(
    python: PythonPath, tables: Sequence[TableSchema], partition_ts: Mapping[PartitionKey, int]
) -> PythonResult:
    """Type the path's rows by ``tables`` (the batch's final schemas): per-table parts, control, dead letters."""
    spark = python.spark
    present = python.first.changed_tables()
    rows = python.first.control_rows()
    control = rows_frame(spark, rows, CONTROL_SCHEMA)
    dead = [_dead_letters(spark, python)]
    clock = merge_clocks(partition_ts, python.first.clock())
    dead_count = len(python.first.dead_rows()) if python.held is not None else None
    if not present:  # no row changes (DDL, bootstrap, watermarks, dead letters): no second pass
        return PythonResult({}, control, dead, clock, (), python.first.messages(), dead_count)
    indices = {index: schema for index, schema in enumerate(tables) if (schema.database, schema.table) in present}
    if dead_count is not None:  # the driver holds every message: their rows are typed there
        here = python.typed_here(tables, partition_ts, indices)
        parts = {(s.database, s.table): table_columns(here.parts[i], i, s) for i, s in indices.items()}
        dead.append(untyped_dead_letters(here.untyped))
        return PythonResult(parts, control, dead, clock, (), python.first.messages(), dead_count + here.untyped_count)
    # cached when an output first reads it: the first pass knows the tables already (a job less per batch)
    wide = persist_batch(python.typed(tables, partition_ts))
    parts = {(s.database, s.table): table_part(wide, i, s) for i, s in indices.items()}
    dead.append(untyped_dead_letters(wide))
    return PythonResult(parts, control, dead, clock, (wide,), python.first.messages())


__all__ = [
    "DecodeRetryError",
    "FirstPass",
    "PythonPath",
    "PythonResult",
    "Rank",
    "assemble",
    "held_messages",
    "newest",
    "row_message",
    "table_columns",
    "table_part",
    "untyped_dead_letters",
    "wide_schema",
]
