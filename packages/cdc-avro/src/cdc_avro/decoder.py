"""TiCDC Avro messages to typed events (reference 4.4): key + value rows, tombstone deletes, and the DDL and
watermark messages of the testing switch. Writer schemas come from the registry (or Glue schema files)."""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from pathlib import Path
from typing import Any, Final

import fastavro

from cdc_avro import wire
from cdc_avro.checksum import row_checksum
from cdc_avro.ddl import ddl_type_of
from cdc_avro.names import PROTOCOL, TIDB_COMMIT_TS, TIDB_OP, TIDB_ROW_CHECKSUM
from cdc_avro.readers import RecordReader, WriterSchemaError, record_reader
from cdc_core.errors import ChecksumError, DecodeError
from cdc_core.events import DDLEvent, Event, Op, RowChange, Source, Watermark
from cdc_core.message import Message
from cdc_core.schema import Index, TableSchema
from cdc_core.schema_registry import FramingError, Registry, SchemaNotFoundError
from cdc_core.textual import TextFormError
from cdc_core.values import RowImage

_OPS: Final = {"c": Op.INSERT, "u": Op.UPDATE, "d": Op.DELETE}


class AvroDecoder:
    def __init__(self, *, registry: Registry | None, zone: dt.tzinfo, glue_dir: str = "") -> None:
        self.registry = registry
        self.zone = zone
        self.glue_dir = Path(glue_dir) if glue_dir else None
        self._by_id: dict[int, RecordReader] = {}
        self._by_glue: dict[uuid.UUID, RecordReader] = {}
        self._schemas: dict[tuple[int, int], TableSchema] = {}

    def decode(self, message: Message) -> list[Event]:
        key = message.key or None
        value = message.value or None
        if key is None:
            if value is None:
                return []
            if value[0] == wire.DDL_MAGIC:
                return [self._ddl(message, value)]
            if value[0] == wire.WATERMARK_MAGIC:
                return [self._watermark(message, value)]
            # A row of a table without handle key (TiCDC rejects those, but a value alone still decodes).
            reader, row, extension = self._read(message, value, "value")
            return [self._row(message, reader=reader, key_reader=None, row=row, extension=extension)]
        key_reader, key_row, _ = self._read(message, key, "key")
        if value is None or wire.is_delete_marker(value):
            # A tombstone carries no commit ts; new TiCDC's 0x03 marker (testing switch) does.
            commit_ts = wire.read_tso(value) if value is not None else None
            return [
                RowChange(
                    op=Op.DELETE,
                    database=key_reader.database,
                    table=key_reader.table,
                    before=key_row,
                    commit_ts=commit_ts,
                    schema=self._schema(key_reader, key_reader),
                    source=Source.of(message),
                )
            ]
        reader, row, extension = self._read(message, value, "value")
        return [self._row(message, reader=reader, key_reader=key_reader, row=row, extension=extension)]

    # ------------------------------------------------------------------------------------------ rows

    def _row(
        self,
        message: Message,
        *,
        reader: RecordReader,
        key_reader: RecordReader | None,
        row: RowImage,
        extension: dict[str, Any],
    ) -> RowChange:
        op_text = extension.get(TIDB_OP)
        op = _OPS.get(op_text, Op.INSERT) if op_text else Op.INSERT
        if op is Op.DELETE:
            raise DecodeError.at(
                message, PROTOCOL, "_tidb_op d in a value record (deletes are tombstones)", field=TIDB_OP
            )
        commit_ts = extension.get(TIDB_COMMIT_TS) if TIDB_COMMIT_TS in extension else None
        if isinstance(commit_ts, int) and commit_ts < 0:
            commit_ts += 1 << 64  # written as a signed long
        return RowChange(
            op=op,
            database=reader.database,
            table=reader.table,
            after=row,
            commit_ts=commit_ts,
            schema=self._schema(reader, key_reader),
            source=Source.of(message),
            meta={k: v for k, v in extension.items() if k not in (TIDB_OP, TIDB_COMMIT_TS)},
        )

    def _schema(self, reader: RecordReader, key_reader: RecordReader | None) -> TableSchema:
        cache_key = (id(reader), id(key_reader))
        schema = self._schemas.get(cache_key)
        if schema is None:
            key_names = tuple(f.name for f in key_reader.fields) if key_reader is not None else ()
            indexes = [Index(name="PRIMARY", columns=key_names, unique=True, primary=True)] if key_names else []
            columns = [f.column for f in reader.fields]
            names = {c.name for c in columns}
            indexes = indexes if all(n in names for n in key_names) else []
            schema = TableSchema(database=reader.database, table=reader.table, columns=columns, indexes=indexes)
            self._schemas[cache_key] = schema
        return schema

    def _read(self, message: Message, data: bytes, part: str) -> tuple[RecordReader, RowImage, dict[str, Any]]:
        try:
            framed = wire.unframe(data)
        except FramingError as exc:
            raise DecodeError.at(message, PROTOCOL, str(exc), field=f"{part}.header") from exc
        reader = self._reader(message, framed, part)
        stream = io.BytesIO(framed.datum)
        try:
            record = fastavro.schemaless_reader(stream, reader.parsed, None)
        except Exception as exc:  # truncated or corrupt datum: fastavro raises EOFError, ValueError, ...
            raise DecodeError.at(
                message,
                PROTOCOL,
                f"Avro datum does not match its writer schema: {type(exc).__name__}: {exc}",
                field=part,
            ) from exc
        if stream.tell() != len(framed.datum):
            raise DecodeError.at(
                message, PROTOCOL, f"{len(framed.datum) - stream.tell()} trailing bytes after the datum", field=part
            )
        if not isinstance(record, dict):
            raise DecodeError.at(message, PROTOCOL, "datum is not a record", field=part)
        row: RowImage = {}
        for field in reader.fields:
            datum = record.get(field.name)
            if datum is None:
                row[field.name] = None
                continue
            try:
                row[field.name] = field.read(datum)
            except (TextFormError, ValueError, TypeError, ArithmeticError) as exc:
                raise DecodeError.at(message, PROTOCOL, str(exc), field=f"{part}.{field.name}") from exc
        extension = {name: record.get(name) for name in reader.extension_fields}
        expected = extension.get(TIDB_ROW_CHECKSUM)
        if expected:  # "" means TiDB computed none
            self._verify(message, reader, record, str(expected))
        return reader, row, extension

    def _verify(self, message: Message, reader: RecordReader, record: dict[str, Any], expected: str) -> None:
        try:
            actual = row_checksum([record.get(f.name) for f in reader.fields], reader.contributions)
        except (ValueError, TypeError, OverflowError) as exc:
            raise DecodeError.at(
                message, PROTOCOL, f"row checksum not computable: {exc}", field=TIDB_ROW_CHECKSUM
            ) from exc
        if str(actual) != expected:
            raise ChecksumError.at(
                message,
                PROTOCOL,
                f"row checksum {actual} does not match {expected}",
                field=f"value.{TIDB_ROW_CHECKSUM}",
            )

    def _reader(self, message: Message, framed: wire.Framed, part: str) -> RecordReader:
        try:
            if framed.schema_id is not None:
                reader = self._by_id.get(framed.schema_id)
                if reader is None:
                    if self.registry is None:
                        raise SchemaNotFoundError("no schema-registry configured for Confluent-framed data")
                    reader = record_reader(self.registry.schema(framed.schema_id), self.zone)
                    self._by_id[framed.schema_id] = reader
                return reader
            assert framed.glue_version is not None
            glue_reader = self._by_glue.get(framed.glue_version)
            if glue_reader is None:
                glue_reader = record_reader(self._glue_schema(framed.glue_version), self.zone)
                self._by_glue[framed.glue_version] = glue_reader
            return glue_reader
        except SchemaNotFoundError as exc:
            raise DecodeError.at(message, PROTOCOL, str(exc), field=f"{part}.schema_id") from exc
        except WriterSchemaError as exc:
            raise DecodeError.at(message, PROTOCOL, f"writer schema: {exc}", field=f"{part}.schema") from exc

    def _glue_schema(self, version: uuid.UUID) -> str:
        if self.glue_dir is None:
            raise SchemaNotFoundError(f"Glue schema version {version}: set glue-schema-dir to read Glue-framed data")
        for suffix in (".avsc", ".json"):
            path = self.glue_dir / f"{version}{suffix}"
            if path.is_file():
                try:
                    return path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise SchemaNotFoundError(f"Glue schema version {version}: {exc}") from exc
        raise SchemaNotFoundError(f"Glue schema version {version}: no {version}.avsc in {self.glue_dir}")

    # ------------------------------------------------------------------------------------------ testing switch

    def _ddl(self, message: Message, value: bytes) -> DDLEvent:
        try:
            document = json.loads(value[1:])
        except ValueError as exc:
            raise DecodeError.at(message, PROTOCOL, f"DDL message is not JSON: {exc}", field="value") from exc
        if not isinstance(document, dict):
            raise DecodeError.at(message, PROTOCOL, "DDL message must be a JSON object", field="value")
        action, commit_ts = document.get("type"), document.get("commitTs")
        if not isinstance(action, int) or isinstance(action, bool):
            raise DecodeError.at(message, PROTOCOL, "DDL type must be an integer action code", field="value.type")
        if not isinstance(commit_ts, int) or isinstance(commit_ts, bool) or commit_ts < 0:
            raise DecodeError.at(message, PROTOCOL, "commitTs must be a non-negative integer", field="value.commitTs")
        texts = {}
        for name in ("query", "schema", "table"):
            text = document.get(name)
            if not isinstance(text, str):
                raise DecodeError.at(message, PROTOCOL, f"{name} must be a string", field=f"value.{name}")
            texts[name] = text
        return DDLEvent(
            ddl_type=ddl_type_of(action),
            sql=texts["query"],
            database=texts["schema"] or None,
            table=texts["table"] or None,
            commit_ts=commit_ts,
            source=Source.of(message),
            meta={"action": action},
        )

    def _watermark(self, message: Message, value: bytes) -> Watermark:
        try:
            ts = wire.read_tso(value)
        except FramingError as exc:
            raise DecodeError.at(message, PROTOCOL, str(exc), field="value") from exc
        return Watermark(ts=ts, source=Source.of(message))
