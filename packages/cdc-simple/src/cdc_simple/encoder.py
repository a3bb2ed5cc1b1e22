"""Typed events to Simple messages (JSON in Go's encoding/json dialect, or Avro), with TiCDC's bootstrap rules
and large-message handling."""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from cdc_core import canonical
from cdc_core.claimcheck import ClaimCheckStorage
from cdc_core.codec import Options
from cdc_core.compression import compress, parse_compression
from cdc_core.dispatch import partition_for_row
from cdc_core.errors import ConfigError, EncodeError
from cdc_core.events import Bootstrap, DDLEvent, Event, LogicalMessage, Op, RowChange, Watermark
from cdc_core.gojson import ENCODING_JSON
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.types import NOT_IN_TIDB
from cdc_simple import avro, columns, tableschema
from cdc_simple.names import BOOTSTRAP, DML_NAMES, PROTOCOL, PROTOCOL_VERSION, RECORD_OVERHEAD, WATERMARK

INACTIVE_AFTER_S: Final = 30 * 60  # TiCDC forgets a table with no DML for 30 minutes (no bootstraps until its next)


@attrs.define
class _TableState:
    """Bootstrap bookkeeping for one table (TiCDC keys it by physical table ID)."""

    schema_key: tuple[str, str, int]
    last_bootstrap: float
    rows_since: int = 0
    last_row: float = 0.0


class SimpleEncoder:
    """One changefeed's encoder. ``clock`` (seconds) drives the bootstrap interval and ``buildTs``.

    Bootstrap rules (TiCDC ``bootstraper.go``), enabled when both ``send-bootstrap-interval-in-sec`` and
    ``send-bootstrap-in-msg-count`` are positive: a BOOTSTRAP precedes a table's first DML, and is sent again
    before a DML once the interval has passed or that many rows were sent since the last one. TiCDC checks
    on a 5 s ticker; checking on each row sends at the same point or earlier. Differing from TiCDC on purpose, a
    row whose schema version was never announced (no DDL or BOOTSTRAP carried it) gets a BOOTSTRAP right away,
    so a consumer never waits a whole interval for a schema the producer already knows.
    """

    def __init__(self, options: Options, *, clock: Callable[[], float] = time.time) -> None:
        self.encoding: str = options["encoding-format"]
        self.avro = self.encoding == "avro"
        self.compression = parse_compression(options["large-message-handle-compression"])
        self.max_message_bytes: int = options["max-message-bytes"]
        self.large: str = options["large-message-handle-option"]
        uri: str = options["claim-check-storage-uri"]
        if self.large == "claim-check" and not uri:
            raise ConfigError(f"{PROTOCOL}: large-message-handle-option=claim-check needs claim-check-storage-uri")
        self.storage = ClaimCheckStorage(uri, raw_value=options["claim-check-raw-value"]) if uri else None
        self.checksum = options["integrity-check-level"] == "correctness"
        self.partitions: int = options["partition-num"]
        if self.partitions <= 0:
            raise ConfigError(f"{PROTOCOL}: partition-num must be positive, got {self.partitions}")
        self.interval: int = options["send-bootstrap-interval-in-sec"]
        self.every: int = options["send-bootstrap-in-msg-count"]
        self.bootstrap_all: bool = options["send-bootstrap-to-all-partition"]
        self.images = columns.ImageWriter(self.encoding, options["time-zone"])
        self.clock = clock
        self._tables: dict[tuple[str, str], _TableState] = {}
        self._announced: set[tuple[str, str, int]] = set()
        self._versions: dict[int, tuple[TableSchema, TableSchema]] = {}

    @property
    def bootstrap_enabled(self) -> bool:
        return self.interval > 0 and self.every > 0

    # ------------------------------------------------------------------------------------------ public

    def encode(self, event: Event) -> list[Message]:
        if isinstance(event, RowChange):
            return self._row(event)
        if isinstance(event, Watermark):
            doc = {"version": PROTOCOL_VERSION, "type": WATERMARK, "commitTs": event.ts, "buildTs": self._now_ms()}
            return self._everywhere(self._serialize(doc, "watermark"), range(self.partitions))
        if isinstance(event, Bootstrap):
            return self._passed_bootstrap(event)
        if isinstance(event, DDLEvent):
            return self._ddl(event)
        if isinstance(event, LogicalMessage):
            raise EncodeError(PROTOCOL, "Simple has no logical-decoding message")
        raise EncodeError(PROTOCOL, f"not an event: {type(event).__name__}")

    # ---------------------------------------------------------------------------------------- messages

    def _versioned(self, schema: TableSchema) -> TableSchema:
        """``schema`` with a version: a DML names its schema by version, so a schema from a protocol that carries
        none (Canal-JSON, Debezium, Avro) gets one derived from its content, the same for the same schema and
        another for a changed one (a consumer caches the first schema of a version)."""
        if schema.version:
            return schema
        cached = self._versions.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        text = json.dumps(canonical.schema_to_json(schema), sort_keys=True, separators=(",", ":"))
        versioned = attrs.evolve(schema, version=zlib.crc32(text.encode()) or 1)
        if len(self._versions) >= 256:
            self._versions.clear()
        self._versions[id(schema)] = (schema, versioned)
        return versioned

    def _now_ms(self) -> int:
        return round(self.clock() * 1000)

    def _schema_doc(self, schema: TableSchema) -> dict[str, Any]:
        _refuse_non_tidb_types(schema)
        return tableschema.to_avro(schema) if self.avro else tableschema.to_json(schema)

    def _serialize(self, doc: dict[str, Any], what: str, *, table: str | None = None) -> bytes:
        try:
            raw = avro.write(doc) if self.avro else ENCODING_JSON.dumps(doc)  # TiCDC: Go encoding/json
        except (ValueError, TypeError, OverflowError) as exc:
            raise EncodeError(PROTOCOL, f"{what}: {exc}", table=table) from exc
        return compress(self.compression, raw)

    def _fits(self, value: bytes) -> bool:
        return len(value) + RECORD_OVERHEAD <= self.max_message_bytes

    def _everywhere(self, value: bytes, partitions: range | list[int]) -> list[Message]:
        if not self._fits(value):
            raise EncodeError(PROTOCOL, f"message of {len(value)} bytes is over max-message-bytes")
        return [Message(value=value, partition=p) for p in partitions]

    def _bootstrap(self, schema: TableSchema, *, build_ts: int | None = None) -> list[Message]:
        doc = {
            "version": PROTOCOL_VERSION,
            "type": BOOTSTRAP,
            "commitTs": 0,
            "buildTs": self._now_ms() if build_ts is None else build_ts,
            "tableSchema": self._schema_doc(schema),
        }
        self._announced.add((schema.database, schema.table, schema.version or 0))
        targets = range(self.partitions) if self.bootstrap_all else [0]
        return self._everywhere(self._serialize(doc, "bootstrap", table=schema.qualified_name), targets)

    def _passed_bootstrap(self, event: Bootstrap) -> list[Message]:
        """A BOOTSTRAP the event stream carries (a decoded Simple stream): written, and counted as the table's
        last bootstrap, so that its next row does not bring a second one the source never sent."""
        schema = self._versioned(event.table_schema)
        messages = self._bootstrap(schema, build_ts=_meta_build_ts(event))
        if self.bootstrap_enabled:
            now = self.clock()
            key = (schema.database, schema.table, schema.version or 0)
            self._tables[(schema.database, schema.table)] = _TableState(key, last_bootstrap=now, last_row=now)
        return messages

    def _ddl(self, event: DDLEvent) -> list[Message]:
        doc: dict[str, Any] = {"version": PROTOCOL_VERSION, "type": event.ddl_type.value}
        if event.sql:
            doc["sql"] = event.sql
        doc["commitTs"] = event.commit_ts or 0
        doc["buildTs"] = _meta_build_ts(event) or self._now_ms()
        for key, given in (("tableSchema", event.table_schema), ("preTableSchema", event.pre_table_schema)):
            if given is not None:
                schema = self._versioned(given)
                doc[key] = self._schema_doc(schema)
                self._announced.add((schema.database, schema.table, schema.version or 0))
        return self._everywhere(
            self._serialize(doc, f"{event.ddl_type.value} DDL", table=event.table), range(self.partitions)
        )

    # -------------------------------------------------------------------------------------------- rows

    def _row(self, event: RowChange) -> list[Message]:
        if event.schema is None:
            raise EncodeError(PROTOCOL, "a Simple row needs its table schema (RowChange.schema)", table=event.table)
        if event.op is not Op.INSERT and event.before is None:
            # the old image is part of an UPDATE or DELETE (a source without one: TiCDC Avro's updates); refused
            # before a bootstrap is counted as sent
            raise EncodeError(PROTOCOL, f"{event.op.value} without its before image (old)", table=event.table)
        schema = self._versioned(event.schema)
        _refuse_non_tidb_types(schema)
        out: list[Message] = []
        if self.bootstrap_enabled:
            out += self._maybe_bootstrap(event, schema)
        value = self._row_value(event, schema)
        return [*out, Message(value=value, partition=partition_for_row(event, self.partitions))]

    def _maybe_bootstrap(self, event: RowChange, schema: TableSchema) -> list[Message]:
        now = self.clock()
        table = (event.database, event.table)
        key = (schema.database, schema.table, schema.version or 0)
        state = self._tables.get(table)
        due = (
            state is None
            or now - state.last_row >= INACTIVE_AFTER_S
            or (state.schema_key != key and key not in self._announced)
            or now - state.last_bootstrap >= self.interval
            or state.rows_since >= self.every
        )
        messages: list[Message] = []
        if due:
            messages = self._bootstrap(schema)
            state = _TableState(schema_key=key, last_bootstrap=now)
            self._tables[table] = state
        assert state is not None
        state.schema_key = key
        state.rows_since += 1
        state.last_row = now
        return messages

    def _row_doc(self, event: RowChange, schema: TableSchema, keys_only: tuple[str, ...] | None) -> dict[str, Any]:
        doc: dict[str, Any] = {"version": PROTOCOL_VERSION, "database": event.database, "table": event.table}
        if event.table_id:
            doc["tableID"] = event.table_id
        doc["type"] = DML_NAMES[event.op]
        doc["commitTs"] = event.commit_ts or 0
        doc["buildTs"] = _meta_build_ts(event) or self._now_ms()
        doc["schemaVersion"] = event.schema_version if event.schema_version is not None else (schema.version or 0)
        data = self.images.write(schema, event.after, keys_only) if event.after is not None else None
        same = None if data is None or event.after is None else (event.after, data)
        old = self.images.write(schema, event.before, keys_only, same) if event.before is not None else None
        if event.op is Op.INSERT:
            old = None
        elif event.op is Op.DELETE:
            data = None
        if keys_only is not None:
            doc["handleKeyOnly"] = True
        elif self.checksum:
            doc["checksum"] = {
                "version": 1,
                "corrupted": False,
                "current": columns.crc32(schema, data, "data") if data else 0,
                "previous": columns.crc32(schema, old, "old") if old else 0,
            }
        if data:
            doc["data"] = data
        if old:
            doc["old"] = old
        if self.avro:
            doc.setdefault("tableID", 0)
        return doc

    def _row_value(self, event: RowChange, schema: TableSchema) -> bytes:
        name = schema.qualified_name
        value = self._serialize(self._row_doc(event, schema, None), "row", table=name)
        if self._fits(value):
            return value
        if self.large == "none":
            raise EncodeError(
                PROTOCOL,
                f"row message of {len(value)} bytes is over max-message-bytes {self.max_message_bytes}",
                table=name,
            )
        keys = schema.handle_key
        if not keys:
            raise EncodeError(PROTOCOL, "large row of a table without a handle key", table=name)
        reduced = self._row_doc(event, schema, keys)
        if self.large == "claim-check":
            assert self.storage is not None
            location = self.storage.write(None, value)
            reduced = _with_location(reduced, location)
        small = self._serialize(reduced, "row", table=name)
        if not self._fits(small):
            raise EncodeError(PROTOCOL, "row is over max-message-bytes even reduced to its handle key", table=name)
        return small


def _with_location(doc: dict[str, Any], location: str) -> dict[str, Any]:
    """``claimCheckLocation`` goes right after ``schemaVersion`` (Go struct order)."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "handleKeyOnly":
            out["claimCheckLocation"] = location
        out[key] = value
    return out


def _meta_build_ts(event: Any) -> int | None:
    meta: Mapping[str, Any] = getattr(event, "meta", {}) or {}
    build = meta.get("build_ts")
    return build if isinstance(build, int) and not isinstance(build, bool) else None


def _refuse_non_tidb_types(schema: TableSchema) -> None:
    """Simple describes TiDB tables: a spatial or array column (read from Canal or Debezium) has no form in it."""
    for column in schema.columns:
        if column.data_type.mysql_type in NOT_IN_TIDB:
            raise EncodeError(
                PROTOCOL,
                f"TiDB has no {column.data_type.mysql_type.value} columns: the simple protocol cannot carry them",
                table=schema.qualified_name,
                field=column.name,
            )
