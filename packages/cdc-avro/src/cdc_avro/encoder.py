"""Typed events to TiCDC Avro messages: Confluent-framed key and value, schemas registered per topic."""

from __future__ import annotations

import io
import json
from typing import Any, Final

import attrs
import fastavro

from cdc_avro import wire
from cdc_avro.checksum import Contribution, contribution_for, row_checksum
from cdc_avro.datum import Writer, writer_for
from cdc_avro.ddl import ACTION_FOR_TYPE
from cdc_avro.names import (
    PROTOCOL,
    TIDB_CHECKSUM_VERSION,
    TIDB_COMMIT_TS,
    TIDB_CORRUPTED,
    TIDB_OP,
    TIDB_PHYSICAL_TIME,
    TIDB_ROW_CHECKSUM,
    key_subject,
    value_subject,
)
from cdc_avro.schemagen import RecordPlan, SchemaOptions, key_record, value_record
from cdc_avro.tidbtypes import DecimalMode
from cdc_core.dispatch import partition_for_row
from cdc_core.errors import EncodeError, LimitExceededError, SchemaError
from cdc_core.events import DDLEvent, Event, LogicalMessage, Op, RowChange, Watermark
from cdc_core.fitting import FITTED, ChangeNotice, UnknownParameterMode, UnknownParameters, change_to_fit, notice_for
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.schema_registry import Registry
from cdc_core.textual import TextFormError
from cdc_core.tso import physical_ms
from cdc_core.types import DataType, LogicalType
from cdc_core.values import RowImage

_OPS: Final = {Op.INSERT: "c", Op.UPDATE: "u"}
_CACHE_LIMIT: Final = 256
_RECORD_OVERHEAD: Final = 36  # what TiCDC adds per record when it compares sizes with max-message-bytes


@attrs.frozen(kw_only=True)
class _FieldWriter:
    """How one column is written into its field, and who hears of a value changed to fit it."""

    field: str
    column: str
    nullable: bool
    write: Writer
    fitted: DataType | None  # the column's type where `change_to_fit` may find a value changed
    notice: ChangeNotice


@attrs.frozen(kw_only=True)
class _Record:
    """A registered record: its id, fastavro's parsed form and one writer per field."""

    schema_id: int
    parsed: Any
    plan: RecordPlan
    writers: tuple[_FieldWriter, ...]
    contributions: tuple[Contribution, ...]  # row checksum bytes per field


@attrs.frozen(kw_only=True)
class _TableState:
    schema: TableSchema
    topic: str
    key: _Record | None
    value: _Record


class AvroEncoder:
    def __init__(
        self,
        *,
        registry: Registry,
        schema_options: SchemaOptions,
        zone: Any,
        topic_template: str,
        partitions: int,
        dispatcher: str,
        enable_watermark: bool,
        max_message_bytes: int = 10 * 1024 * 1024,
        unknown_parameters: UnknownParameterMode = UnknownParameterMode.DERIVE,
    ) -> None:
        self.max_message_bytes = max_message_bytes
        self.registry = registry
        self.schema_options = schema_options
        self.zone = zone
        self.topic_template = topic_template
        self.partitions = partitions
        self.dispatcher = dispatcher
        self.enable_watermark = enable_watermark and schema_options.tidb_extension
        # a precise DECIMAL's Avro type needs its precision and scale
        needed = frozenset({LogicalType.DECIMAL}) if schema_options.decimal_mode is DecimalMode.PRECISE else frozenset()
        self.unknowns = UnknownParameters(PROTOCOL, unknown_parameters, needed)
        self._tables: dict[int, _TableState] = {}
        self._topics: set[str] = set()

    # ------------------------------------------------------------------------------------------ events

    def encode(self, event: Event) -> list[Message]:
        if isinstance(event, RowChange):
            return [self._row(event)]
        if isinstance(event, DDLEvent):
            return self._ddl(event) if self.enable_watermark else []
        if isinstance(event, Watermark):
            return self._watermark(event) if self.enable_watermark else []
        if isinstance(event, LogicalMessage):
            raise EncodeError(PROTOCOL, "TiCDC's Avro format has no logical-decoding message")
        return []  # Bootstrap: the registry is the schema channel

    def topic_for(self, database: str, table: str) -> str:
        return self.topic_template.replace("{schema}", database).replace("{table}", table)

    def _row(self, event: RowChange) -> Message:
        if event.schema is None:
            raise EncodeError(
                PROTOCOL, "the event carries no table schema (Avro needs column types)", table=event.table
            )
        state = self._state(self.unknowns.complete(event.schema, (event.before, event.after)))
        self._topics.add(state.topic)
        if event.op is Op.DELETE:
            if state.key is None:
                raise EncodeError(PROTOCOL, "a delete of a table without handle key has no key", table=event.table)
            key_image = event.before if event.before is not None else event.after
            # TiCDC's testing switch sends the delete's commit ts (0x03 + TSO); otherwise a Kafka tombstone
            value = wire.delete_marker(event.commit_ts or 0) if self.enable_watermark else None
        else:
            key_image = event.after
            extension: dict[str, Any] = {}
            if state.value.plan.extension:
                commit_ts = event.commit_ts or 0
                extension = {
                    TIDB_OP: _OPS[event.op],
                    TIDB_COMMIT_TS: commit_ts,
                    TIDB_PHYSICAL_TIME: physical_ms(commit_ts),
                }
                if state.value.plan.checksum:
                    # TiDB's checksum when the event carries it, else computed here from the written data
                    given = event.meta.get("checksum")
                    extension[TIDB_ROW_CHECKSUM] = None if given is None else str(given)
                    extension[TIDB_CORRUPTED] = bool(event.meta.get("corrupted", False))
                    extension[TIDB_CHECKSUM_VERSION] = int(event.meta.get("checksum_version", 0))
            value = self._datum(state.value, event.after, extension, event)
        key = self._datum(state.key, key_image, {}, event) if state.key is not None else None
        partition = partition_for_row(event, self.partitions, self.dispatcher) if self.partitions > 1 else 0
        size = len(key or b"") + len(value or b"") + _RECORD_OVERHEAD
        if size > self.max_message_bytes:
            # Avro has no large-message handling in TiCDC: the changefeed fails on such a row.
            raise LimitExceededError(
                f"avro: row of table {event.database}.{event.table} is {size} bytes with Kafka record overhead, "
                f"over max-message-bytes {self.max_message_bytes}"
            )
        return Message(value=value, key=key, topic=state.topic, partition=partition)

    def _datum(self, record: _Record, image: RowImage | None, extension: dict[str, Any], event: RowChange) -> bytes:
        if image is None:
            raise EncodeError(PROTOCOL, f"{event.op} event has no row image", table=event.table)
        datum: dict[str, Any] = {}
        for writer in record.writers:
            value = image.get(writer.column)
            if value is None:
                if not writer.nullable:
                    raise EncodeError(PROTOCOL, "NULL in a NOT NULL column", table=event.table, field=writer.column)
                datum[writer.field] = None
                continue
            try:
                datum[writer.field] = writer.write(value)
            except (TextFormError, ArithmeticError, ValueError, TypeError, AttributeError) as exc:
                raise EncodeError(PROTOCOL, str(exc), table=event.table, field=writer.column) from exc
            if writer.fitted is not None:
                change = change_to_fit(value, writer.fitted)
                if change is not None:
                    writer.notice(*change)
        datum.update(extension)
        if record.plan.checksum and datum.get(TIDB_ROW_CHECKSUM) is None:
            values = [datum[w.field] for w in record.writers]
            datum[TIDB_ROW_CHECKSUM] = str(row_checksum(values, record.contributions))
        buffer = io.BytesIO()
        try:
            fastavro.schemaless_writer(buffer, record.parsed, datum)
        except (ValueError, TypeError, OverflowError, AttributeError) as exc:
            raise EncodeError(PROTOCOL, f"Avro write failed: {exc}", table=event.table) from exc
        return wire.confluent(record.schema_id, buffer.getvalue())

    # ------------------------------------------------------------------------------------------ schemas

    def _state(self, schema: TableSchema) -> _TableState:
        state = self._tables.get(id(schema))
        if state is not None and state.schema is schema:
            return state
        topic = self.topic_for(schema.database, schema.table)
        try:
            key_plan = key_record(schema, self.schema_options)
            value_plan = value_record(schema, self.schema_options)
        except SchemaError as exc:
            raise EncodeError(PROTOCOL, str(exc), table=schema.qualified_name) from exc
        table = schema.qualified_name
        key = self._register(key_subject(topic), key_plan, table) if key_plan is not None else None
        value = self._register(value_subject(topic), value_plan, table)
        state = _TableState(schema=schema, topic=topic, key=key, value=value)
        if len(self._tables) >= _CACHE_LIMIT:
            self._tables.clear()
        self._tables[id(schema)] = state
        return state

    def _register(self, subject: str, plan: RecordPlan, table: str) -> _Record:
        names = [f.name for f in plan.fields]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:  # sanitizing maps e.g. "a-b" and "a_b" (or two non-ASCII names) to one field name
            raise EncodeError(PROTOCOL, f"columns collide after name sanitizing: {', '.join(duplicates)}", table=table)
        try:  # validated before it is registered, so the registry never holds a schema no one can use
            parsed = fastavro.parse_schema(json.loads(plan.schema_json))
        except (ValueError, TypeError, fastavro.schema.SchemaParseException) as exc:
            raise EncodeError(PROTOCOL, f"generated schema does not parse: {exc}", table=table) from exc
        schema_id = self.registry.register(subject, plan.schema_json, table=table)
        options = self.schema_options
        writers = tuple(
            _FieldWriter(
                field=f.name,
                column=f.column.name,
                nullable=f.nullable,
                write=writer_for(f.column.data_type, f.primitive, options.decimal_mode, options.bigint_mode, self.zone),
                fitted=f.column.data_type if f.column.data_type.logical in FITTED else None,
                notice=notice_for(PROTOCOL, table, f.column.name),
            )
            for f in plan.fields
        )
        contributions = tuple(contribution_for(f.column) for f in plan.fields)
        return _Record(schema_id=schema_id, parsed=parsed, plan=plan, writers=writers, contributions=contributions)

    # ------------------------------------------------------------------------------------------ testing switch

    def _ddl(self, event: DDLEvent) -> list[Message]:
        document = {
            "query": event.sql or "",
            "type": int(event.meta.get("action", ACTION_FOR_TYPE[event.ddl_type])),
            "schema": event.database or "",
            "table": event.table or "",
            "commitTs": event.commit_ts or 0,
        }
        value = bytes((wire.DDL_MAGIC,)) + json.dumps(document, separators=(",", ":")).encode()
        topic = self.topic_for(event.database or "", event.table or "")
        return [Message(value=value, key=None, topic=topic, partition=p) for p in range(self.partitions)]

    def _watermark(self, event: Watermark) -> list[Message]:
        value = wire.watermark(event.ts)
        return [
            Message(value=value, key=None, topic=t, partition=p)
            for t in sorted(self._topics)
            for p in range(self.partitions)
        ]
