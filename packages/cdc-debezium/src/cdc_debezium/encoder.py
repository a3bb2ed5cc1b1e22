"""Typed events to Debezium JSON messages, byte for byte as TiCDC writes them (reference section 2)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import attrs

from cdc_core.codec import Options
from cdc_core.errors import CdcError, EncodeError
from cdc_core.events import DDLEvent, DDLType, Event, LogicalMessage, Op, RowChange, Watermark
from cdc_core.fitting import Change, ChangeNotice, UnknownParameterMode, UnknownParameters, notice_for
from cdc_core.gojson import JSON_ITERATOR
from cdc_core.message import Message
from cdc_core.naming import sanitize_name
from cdc_core.schema import Column, TableSchema
from cdc_core.textual import TextFormError, resolve_zone
from cdc_core.tso import physical_ms
from cdc_core.types import LogicalType
from cdc_core.values import RowImage
from cdc_debezium import ddl
from cdc_debezium.envelope import (
    SCHEMA_CHANGE_KEY_SCHEMA,
    SCHEMA_CHANGE_VALUE_SCHEMA,
    SOURCE_SCHEMA,
    TRANSACTION_SCHEMA,
)
from cdc_debezium.names import DEBEZIUM_VERSION, PROTOCOL, TICDC_CONNECTOR, record_prefix
from cdc_debezium.outbound import CHANGES, WRITERS, field_schema, null_change, null_value

_OPS: Final = {Op.INSERT: "c", Op.UPDATE: "u", Op.DELETE: "d"}
_SCHEMA_CACHE_LIMIT: Final = 256
# The types whose unknown parameter shapes TiCDC's Debezium form: DATETIME (milliseconds or microseconds) and
# BIT (boolean or bytes of a width).
_NEEDED: Final = frozenset({LogicalType.DATETIME, LogicalType.BIT})


@attrs.frozen
class _Step:
    """One column of a row image: the column, the writer of its non-NULL values, and who hears of a changed one."""

    name: str
    column: Column
    write: Callable[[Any, Column, Any], Any]
    check: Callable[[Any, Any, Column], Change] | None
    notice: ChangeNotice


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class DebeziumEncoder:
    """``clock`` gives the payload ``ts_ms`` (TiCDC's encode time); tests fix it to compare bytes."""

    def __init__(self, options: Options, *, clock: Callable[[], int] = _wall_clock_ms) -> None:
        self.cluster: str = options["cluster-id"]
        self.tidb_extension: bool = options["enable-tidb-extension"]
        self.with_schema: bool = not options["debezium-disable-schema"]
        self.old_value: bool = options["output-old-value"]
        self.zone = resolve_zone(options["time-zone"])
        self.unknowns = UnknownParameters(PROTOCOL, UnknownParameterMode(options["unknown-parameters"]), _NEEDED)
        self.clock = clock
        # Schema documents per table schema object (by identity: hashing a frozen schema costs more than
        # building its document); bounded, since a long stream sees few schema versions at a time.
        self._schemas: dict[int, tuple[TableSchema, bytes | None, bytes | None]] = {}
        self._column_plans: dict[int, tuple[TableSchema, list[_Step], list[_Step]]] = {}

    def encode(self, event: Event) -> list[Message]:
        if isinstance(event, RowChange):
            return [self._row(event)]
        if isinstance(event, DDLEvent):
            return [self._ddl(event)]
        if isinstance(event, Watermark):
            # TiCDC writes watermarks only with the TiDB extension on; plain Debezium consumers know no op "m".
            return [self._watermark(event)] if self.tidb_extension else []
        if isinstance(event, LogicalMessage):
            raise EncodeError(PROTOCOL, "TiCDC's Debezium format has no logical-decoding message")
        return []  # Bootstrap: Debezium has no such message

    # ------------------------------------------------------------------------------------------ source

    def _source(self, database: str, table: str, commit_ts: int) -> dict[str, Any]:
        return {
            "version": DEBEZIUM_VERSION,
            "connector": TICDC_CONNECTOR,
            "name": self.cluster,
            "ts_ms": physical_ms(commit_ts),
            "snapshot": "false",
            "db": database,
            "table": table,
            "server_id": 0,
            "gtid": None,
            "file": "",
            "pos": 0,
            "row": 0,
            "thread": 0,
            "query": None,
            "commit_ts": commit_ts,
            "cluster_id": self.cluster,
        }

    def _message(self, key: dict[str, Any], value: dict[str, Any]) -> Message:
        return Message(key=JSON_ITERATOR.dumps(key), value=JSON_ITERATOR.dumps(value))

    # -------------------------------------------------------------------------------------------- rows

    def _row(self, event: RowChange) -> Message:
        if event.schema is None:
            raise EncodeError(PROTOCOL, "row events need their TableSchema", table=f"{event.database}.{event.table}")
        schema = self.unknowns.complete(event.schema, (event.before, event.after))
        stored, key_columns = self._plans(schema)
        payload: dict[str, Any] = {
            "source": self._source(event.database, event.table, event.commit_ts or 0),
            "ts_ms": self.clock(),
            "transaction": None,
            "op": _OPS[event.op],
        }
        if event.op is Op.INSERT:
            payload["before"] = None
            payload["after"] = self._image(event, stored, event.after)
        elif event.op is Op.DELETE:
            payload["after"] = None
            payload["before"] = self._image(event, stored, event.before)
        else:
            if self.old_value:
                # an update whose source carried no old image (TiCDC Avro) has before null, as Debezium's own
                # PostgreSQL connector writes one under its default replica identity
                payload["before"] = None if event.before is None else self._image(event, stored, event.before)
            payload["after"] = self._image(event, stored, event.after)
        key_schema, envelope_schema = self._schema_documents(event, schema)
        image = event.before if event.op is Op.DELETE else event.after
        key_payload = self._image(event, key_columns, image) if key_columns else {}
        # The schema documents repeat in every message of a table: serialized once, spliced in as bytes.
        return Message(key=_envelope(key_payload, key_schema), value=_envelope(payload, envelope_schema))

    def _schema_documents(self, event: RowChange, schema: TableSchema) -> tuple[bytes | None, bytes | None]:
        if not self.with_schema:
            return None, None
        cached = self._schemas.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1], cached[2]
        prefix = record_prefix(self.cluster, event.database, event.table)
        key_schema = {
            "type": "struct",
            "name": f"{prefix}.Key",
            "optional": False,
            "fields": [self._field(schema.column(n)) for n in schema.handle_key],
        }
        envelope_schema = self._envelope_schema(prefix, schema)
        key_bytes = JSON_ITERATOR.dumps(key_schema)
        envelope_bytes = JSON_ITERATOR.dumps(envelope_schema)
        if len(self._schemas) >= _SCHEMA_CACHE_LIMIT:
            self._schemas.clear()
        self._schemas[id(schema)] = (schema, key_bytes, envelope_bytes)
        return key_bytes, envelope_bytes

    def _plans(self, schema: TableSchema) -> tuple[list[_Step], list[_Step]]:
        """(stored columns, handle-key columns) of ``schema``, each with its value writer, built once."""
        cached = self._column_plans.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1], cached[2]
        stored = [self._step(schema, c) for c in schema.columns if not c.generated]
        keys = [self._step(schema, c) for c in map(schema.column, schema.handle_key)]
        if len(self._column_plans) >= _SCHEMA_CACHE_LIMIT:
            self._column_plans.clear()
        self._column_plans[id(schema)] = (schema, stored, keys)
        return stored, keys

    @staticmethod
    def _step(schema: TableSchema, column: Column) -> _Step:
        logical = column.data_type.logical
        notice = notice_for(PROTOCOL, schema.qualified_name, column.name)
        return _Step(name=column.name, column=column, write=WRITERS[logical], check=CHANGES[logical], notice=notice)

    def _image(self, event: RowChange, steps: list[_Step], image: RowImage | None) -> dict[str, Any]:
        if image is None:
            raise EncodeError(PROTOCOL, f"{event.op.value} without its row image", table=_name(event))
        out: dict[str, Any] = {}
        zone = self.zone
        for step in steps:
            name = step.name
            if name not in image:
                continue  # column-selectors may blank columns out; TiCDC then skips them
            value = image[name]
            try:
                if value is None:
                    wire = out[name] = null_value(step.column, zone)
                    change = null_change(step.column, wire)
                else:
                    wire = out[name] = step.write(value, step.column, zone)
                    change = None if step.check is None else step.check(value, wire, step.column)
                if change is not None:
                    step.notice(*change)
            except (TypeError, ValueError, TextFormError, OverflowError) as exc:
                if isinstance(exc, CdcError):
                    raise  # an EncodeError, or a changed value refused by a strict run, says where it is already
                raise EncodeError(PROTOCOL, str(exc), table=_name(event), field=name) from exc
        return out

    def _field(self, column: Column) -> dict[str, Any]:
        try:
            return field_schema(column, tidb_extension=self.tidb_extension, zone=self.zone)
        except (ValueError, TextFormError) as exc:
            if isinstance(exc, EncodeError):
                raise
            raise EncodeError(PROTOCOL, str(exc), field=column.name) from exc

    def _envelope_schema(self, prefix: str, schema: TableSchema) -> dict[str, Any]:
        ordered = [c for c in schema.columns if not c.generated] + [c for c in schema.columns if c.generated]
        fields = [self._field(c) for c in ordered]

        def image(which: str) -> dict[str, Any]:
            return {"type": "struct", "optional": True, "name": f"{prefix}.Value", "field": which, "fields": fields}

        return {
            "type": "struct",
            "optional": False,
            "name": f"{prefix}.Envelope",
            "version": 1,
            "fields": [
                image("before"),
                image("after"),
                SOURCE_SCHEMA,
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
                TRANSACTION_SCHEMA,
            ],
        }

    # ----------------------------------------------------------------------------------- other kinds

    def _watermark(self, event: Watermark) -> Message:
        cluster = sanitize_name(self.cluster)
        payload = {
            "source": self._source("", "", event.ts),
            "ts_ms": self.clock(),
            "transaction": None,
            "op": "m",
        }
        value: dict[str, Any] = {"payload": payload}
        key: dict[str, Any] = {"payload": {}}
        if self.with_schema:
            key["schema"] = {"type": "struct", "name": f"{cluster}.watermark.Key", "optional": False, "fields": []}
            value["schema"] = {
                "type": "struct",
                "optional": False,
                "name": f"{cluster}.watermark.Envelope",
                "version": 1,
                "fields": [
                    SOURCE_SCHEMA,
                    {"type": "string", "optional": False, "field": "op"},
                    {"type": "int64", "optional": True, "field": "ts_ms"},
                    TRANSACTION_SCHEMA,
                ],
            }
        return self._message(key, value)

    def _ddl(self, event: DDLEvent) -> Message:
        database = event.database or ""
        table = event.table or ""
        change = ddl.change_type(event)
        changes: list[dict[str, Any]] = []
        if change is not None:
            table_doc: dict[str, Any] | None = None
            if not (change == "DROP" and event.ddl_type is DDLType.ERASE) and event.table_schema is not None:
                charset = event.meta.get("default_charset", "")
                table_doc = ddl.table_object(event.table_schema, charset if isinstance(charset, str) else "")
            table_id = ddl.table_id(database, table)
            if event.ddl_type is DDLType.RENAME and event.pre_table_schema is not None:
                # TiCDC names the old table first: "oldDb"."oldTable","newDb"."newTable"
                old = event.pre_table_schema
                table_id = f"{ddl.table_id(old.database, old.table)},{table_id}"
            changes.append({"type": change, "id": table_id, "table": table_doc})
        payload = {
            "source": self._source(database, table, event.commit_ts or 0),
            "ts_ms": self.clock(),
            "databaseName": database,
            "schemaName": None,
            "ddl": event.sql or "",
            "tableChanges": changes,
        }
        key: dict[str, Any] = {"payload": {"databaseName": database}}
        value: dict[str, Any] = {"payload": payload}
        if self.with_schema:
            key["schema"] = SCHEMA_CHANGE_KEY_SCHEMA
            value["schema"] = SCHEMA_CHANGE_VALUE_SCHEMA
        return self._message(key, value)


def _envelope(payload: dict[str, Any], schema: bytes | None) -> bytes:
    body = JSON_ITERATOR.dumps(payload)
    if schema is None:
        return b'{"payload":' + body + b"}"
    return b'{"payload":' + body + b',"schema":' + schema + b"}"


def _name(event: RowChange) -> str:
    return f"{event.database}.{event.table}"
