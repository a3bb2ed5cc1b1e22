"""Simple messages (JSON or Avro) to typed events, with the schema cache and the bounded hold of early rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from cdc_core.claimcheck import ClaimCheckStorage
from cdc_core.codec import Awaited, Options
from cdc_core.compression import decompress, parse_compression
from cdc_core.errors import ChecksumError, DecodeError, LimitExceededError, StorageError
from cdc_core.events import Bootstrap, DDLEvent, Event, Op, RowChange, Source, Watermark
from cdc_core.limits import Limits, json_depth
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_simple import avro, columns, fields, tableschema
from cdc_simple.cache import HeldRow, HeldRows, HeldSummary, SchemaCache
from cdc_simple.fields import fail
from cdc_simple.names import BOOTSTRAP, DDL_TYPES, DML_TYPES, PROTOCOL, WATERMARK
from cdc_simple.resolver import HandleKeyResolver, load_resolver


class SimpleDecoder:
    """Decodes one consumer's stream (all partitions of its topics through one decoder, or one per partition).

    BOOTSTRAP messages and both schemas of every DDL fill the schema cache; a DML whose (database, table,
    schemaVersion) is not cached yet is held and released, in order, by the message that brings its schema.
    Rows released by a DDL come before the DDL event (they were written before it); rows released by a
    BOOTSTRAP come after the Bootstrap event. Bootstraps move no watermark and are not DDL.
    """

    def __init__(self, options: Options, *, resolver: HandleKeyResolver | None = None) -> None:
        self.avro = options["encoding-format"] == "avro"
        self.compression = parse_compression(options["large-message-handle-compression"])
        self.max_message_bytes: int = options["max-message-bytes"]
        self.limits = Limits(max_held_rows=options["max-held-rows"], max_held_bytes=options["max-held-bytes"])
        uri: str = options["claim-check-storage-uri"]
        self.storage = ClaimCheckStorage(uri, raw_value=options["claim-check-raw-value"]) if uri else None
        self.verify_checksum = options["integrity-check-level"] == "correctness"
        spec: str = options["handle-key-resolver"]
        self.resolver = resolver if resolver is not None else (load_resolver(spec) if spec else None)
        self.schemas = SchemaCache()
        self.held = HeldRows(self.limits)

    # ------------------------------------------------------------------------------------------ public

    def decode(self, message: Message) -> list[Event]:
        if message.is_tombstone:
            return []
        assert message.value is not None
        try:
            document = self._document(message.value)
            return self._dispatch(document, message)
        except DecodeError as exc:
            raise exc.located(message) from exc.__cause__
        except StorageError as exc:  # the same kind: a store that is down stays an infrastructure fault
            raise type(exc)(f"{PROTOCOL}: message {message.coordinates}: {exc}") from exc
        except RecursionError as exc:
            raise DecodeError.at(message, PROTOCOL, "value nested too deeply") from exc

    def held_summary(self) -> HeldSummary:
        """Rows held back because their schema has not arrived yet (count, bytes, per schema key)."""
        return self.held.summary()

    def prime(self, schema: TableSchema) -> None:
        """Know ``schema`` (learned by the host from earlier messages), as a BOOTSTRAP would teach it."""
        self.schemas.add(schema)

    def unreleased(self) -> list[tuple[Message, str]]:
        return [
            (row.message, f"{PROTOCOL}: no schema for {row.key[0]}.{row.key[1]} version {row.key[2]} arrived")
            for row in self.held
        ]

    def awaited(self) -> list[Awaited]:
        found = []
        for row in self.held:
            ts = row.document.get("commitTs")
            commit_ts = ts if isinstance(ts, int) and not isinstance(ts, bool) else None
            found.append(Awaited(message=row.message, database=row.key[0], table=row.key[1], version=row.key[2],
                                 commit_ts=commit_ts))  # fmt: skip
        return found

    def schema(self, database: str, table: str, version: int) -> TableSchema | None:
        return self.schemas.get((database, table, version))

    # ------------------------------------------------------------------------------------------- parse

    def _document(self, value: bytes) -> dict[str, Any]:
        if len(value) > self.max_message_bytes:
            raise LimitExceededError(
                f"{PROTOCOL}: value has {len(value)} bytes, over max-message-bytes {self.max_message_bytes}"
            )
        data = decompress(self.compression, value, protocol=PROTOCOL, max_bytes=self.limits.max_decompressed_bytes)
        if self.avro:
            return avro.read(data)
        limit = self.limits.max_nesting_depth
        # Counting brackets is C-speed; only a value with that many brackets can be nested that deep.
        if data.count(b"[") + data.count(b"{") > limit and json_depth(data, limit) > limit:
            raise fail(f"JSON nested deeper than {self.limits.max_nesting_depth}")
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise fail(f"not a JSON document: {exc}") from exc
        if not isinstance(document, dict):
            raise fail(f"expected a JSON object, got {type(document).__name__}")
        return document

    def _dispatch(self, doc: dict[str, Any], message: Message) -> list[Event]:
        kind = doc.get("type")
        if not isinstance(kind, str):
            raise fail("missing or non-string message type", "type")
        version = fields.integer(doc, "version", "", 1)
        if version != 1:
            raise fail(f"unsupported protocol version {version}", "version")
        source = Source.of(message)
        if kind in DML_TYPES:
            return self._dml(doc, message, source)
        if kind == WATERMARK:
            return [Watermark(ts=fields.integer(doc, "commitTs", ""), source=source)]
        if kind == BOOTSTRAP:
            return self._bootstrap(doc, source)
        if kind in DDL_TYPES:
            return self._ddl(doc, kind, source)
        raise fail(f"unknown message type {kind!r}", "type")

    def _table_schema(self, doc: Mapping[str, Any], key: str) -> TableSchema | None:
        raw = fields.opt_obj(doc, key, "")
        return None if raw is None else tableschema.decode(raw, key, avro=self.avro)

    # -------------------------------------------------------------------------------------- schema msgs

    def _bootstrap(self, doc: dict[str, Any], source: Source) -> list[Event]:
        schema = self._table_schema(doc, "tableSchema")
        if schema is None:
            raise fail("BOOTSTRAP without tableSchema", "tableSchema")
        self.schemas.add(schema)
        return [Bootstrap(table_schema=schema, source=source), *self._release()]

    def _ddl(self, doc: dict[str, Any], kind: str, source: Source) -> list[Event]:
        sql = fields.opt_string(doc, "sql", "") or ""
        commit_ts = fields.integer(doc, "commitTs", "")
        after = self._table_schema(doc, "tableSchema")
        before = self._table_schema(doc, "preTableSchema")
        for schema in (before, after):
            if schema is not None:
                self.schemas.add(schema)
        named = after or before
        event = DDLEvent(
            ddl_type=DDL_TYPES[kind],
            sql=sql,
            database=named.database if named else None,
            table=named.table if named else None,
            commit_ts=commit_ts,
            table_schema=after,
            pre_table_schema=before,
            source=source,
            meta=_build_ts(doc),
        )
        return [*self._release(), event]

    def _release(self) -> list[Event]:
        if not len(self.held):
            return []
        events: list[Event] = []
        released = self.held.release(self.schemas)
        for index, (row, schema) in enumerate(released):
            try:
                events.extend(self._row(row.document, schema, Source.of(row.message), row.claim_check_location))
            except DecodeError as exc:
                # The bad row is reported at its own coordinates; the rows behind it stay held for the next call.
                self.held.requeue([held for held, _ in released[index + 1 :]])
                raise exc.located(row.message) from exc.__cause__
        return events

    # ---------------------------------------------------------------------------------------------- dml

    def _dml(self, doc: dict[str, Any], message: Message, source: Source) -> list[Event]:
        claim: str | None = None
        location = fields.opt_string(doc, "claimCheckLocation", "")
        if location is not None and self.storage is not None:
            doc = self._claimed(location)
            claim = location
        database = fields.string(doc, "database", "")
        table = fields.string(doc, "table", "")
        key = (database, table, fields.integer(doc, "schemaVersion", "", 0))
        schema = self.schemas.get(key)
        if schema is None or self.held.blocks(key[:2]):
            size = len(message.value or b"")
            self.held.hold(HeldRow(key=key, document=doc, message=message, size=size, claim_check_location=claim))
            return []
        return self._row(doc, schema, source, claim)

    def _claimed(self, location: str) -> dict[str, Any]:
        """The full message behind a claim-check location: read by base name, unwrapped, decompressed, parsed."""
        assert self.storage is not None
        _key, value = self.storage.read(location)
        try:
            full = self._document(value)
        except DecodeError as exc:
            raise fail(f"claim-check file {location!r}: {exc.reason}", "claimCheckLocation") from exc
        if full.get("type") not in DML_TYPES or full.get("claimCheckLocation") is not None:
            raise fail(f"claim-check file {location!r} does not hold a full row message", "claimCheckLocation")
        return full

    def _row(
        self, doc: Mapping[str, Any], schema: TableSchema, source: Source | None, claim: str | None
    ) -> list[Event]:
        op = DML_TYPES[doc["type"]]
        data = fields.opt_obj(doc, "data", "")
        old = fields.opt_obj(doc, "old", "")
        if op is not Op.DELETE and data is None:
            raise fail(f"{doc['type']} without data", "data")
        if op is not Op.INSERT and old is None:
            raise fail(f"{doc['type']} without old", "old")
        reduced = fields.boolean(doc, "handleKeyOnly", "", False)
        if self.verify_checksum and not reduced:  # a checksum covers every column, not the handle key alone
            self._verify(doc, schema, data, old)
        handle_key_only = reduced and claim is None
        location = fields.opt_string(doc, "claimCheckLocation", "")
        after = columns.read_image(schema, data, "data") if op is not Op.DELETE and data is not None else None
        before = None
        if op is not Op.INSERT and old is not None:
            before = columns.read_image(schema, old, "old", None if after is None or data is None else (data, after))
        row = RowChange(
            op=op,
            database=schema.database,
            table=schema.table,
            before=before,
            after=after,
            commit_ts=fields.integer(doc, "commitTs", ""),
            table_id=fields.integer(doc, "tableID", "", 0),
            schema_version=schema.version,
            schema=schema,
            handle_key_only=handle_key_only or location is not None,
            claim_check_location=claim or location,
            source=source,
            meta=_build_ts(doc),
        )
        if row.handle_key_only and self.resolver is not None:
            resolved = self.resolver(row)
            if not isinstance(resolved, RowChange):
                raise fail(f"handle-key resolver returned {type(resolved).__name__}, not a RowChange")
            row = attrs.evolve(resolved, handle_key_only=False, source=source)
        return [row]

    def _verify(
        self, doc: Mapping[str, Any], schema: TableSchema, data: Mapping[str, Any] | None, old: Mapping[str, Any] | None
    ) -> None:
        checksum = fields.opt_obj(doc, "checksum", "")
        if checksum is None:
            return
        if fields.boolean(checksum, "corrupted", "checksum", False):
            raise ChecksumError(PROTOCOL, "TiCDC flagged this row as corrupted", field="checksum.corrupted")
        for image, name, path in ((data, "current", "data"), (old, "previous", "old")):
            expected = fields.integer(checksum, name, "checksum", 0)
            if image is None:
                continue
            actual = columns.crc32(schema, image, path)
            if actual != expected & 0xFFFFFFFF:
                raise ChecksumError(
                    PROTOCOL,
                    f"row checksum mismatch: message says {expected}, the {path} values give {actual}",
                    field=f"checksum.{name}",
                )


def _build_ts(doc: Mapping[str, Any]) -> dict[str, Any]:
    build = doc.get("buildTs")
    return {"build_ts": build} if isinstance(build, int) and not isinstance(build, bool) else {}
