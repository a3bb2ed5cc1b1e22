"""Debezium change events as Kafka Connect's Avro converter writes them, to typed events.

Key and value are Confluent-framed (magic byte 0, 4-byte schema id, Avro datum). Each writer schema is fetched
from the registry once, turned back into the Connect schema it was written from (`connect_schema`), and the
datum read with Avro's logical types left raw; from there on a message is what the JsonConverter would have
written for the same change, and the Debezium JSON decoder's rules (ops, tombstones, keys, DDL, every logical
type) apply unchanged, so both forms of one change decode to the same events.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any, Final, Protocol

import attrs
import fastavro

from cdc_core.codec import Options
from cdc_core.errors import DecodeError, SchemaError
from cdc_core.events import Event
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.schema_registry import FramingError, SchemaNotFoundError, confluent_unframe
from cdc_debezium.avro.connect_schema import connect_schema, without_logical_types
from cdc_debezium.decoder import DebeziumDecoder
from cdc_debezium.names import AVRO_PROTOCOL

_CACHE_LIMIT: Final = 1024


class SchemaSource(Protocol):
    """Where writer schemas come from: the registry client, or a captured copy of what it holds."""

    def schema(self, schema_id: int) -> str:
        """The schema text of ``schema_id``; raises `SchemaNotFoundError` or `RegistryUnavailableError`."""
        ...


@attrs.frozen
class _Writer:
    """One writer schema: fastavro's parsed form (logical types raw) and the Connect schema it maps."""

    parsed: Any
    connect: dict[str, Any]


class DebeziumAvroDecoder(DebeziumDecoder):
    """The Debezium decoder over Avro records; ``schemas`` gives the writer schemas by id."""

    def __init__(self, options: Options, *, schemas: SchemaSource, tables: Iterable[TableSchema] = ()) -> None:
        super().__init__(options, schemas=tables)
        self.source = schemas
        self._writers: dict[int, _Writer] = {}

    def decode(self, message: Message) -> list[Event]:
        if message.is_tombstone:
            return []  # the tombstone after a delete: log compaction only, no change
        assert message.value is not None
        try:
            payload, schema = self._record(message, message.value, "value")
            if not isinstance(payload, dict):
                raise DecodeError.at(message, AVRO_PROTOCOL, "the value is not an Avro record", field="value")
            return self._dispatch(message, payload, schema, "value")
        except DecodeError as exc:
            exc.protocol = AVRO_PROTOCOL  # raised by the shared Debezium rules, which name the JSON protocol
            raise exc.located(message) from None
        except SchemaError as exc:
            raise DecodeError.at(message, AVRO_PROTOCOL, str(exc), field="value.schema") from exc

    def _key_payload(self, message: Message) -> dict[str, Any]:
        payload, _ = self._record(message, message.key or b"", "key")
        if not isinstance(payload, dict):
            raise DecodeError.at(message, AVRO_PROTOCOL, "the key is not an Avro record", field="key")
        return payload

    def _record(self, message: Message, data: bytes, part: str) -> tuple[Any, dict[str, Any]]:
        """The datum of Confluent-framed ``data`` and the Connect schema of its writer."""
        try:
            schema_id, datum = confluent_unframe(data)
        except FramingError as exc:
            raise DecodeError.at(message, AVRO_PROTOCOL, str(exc), field=f"{part}.header") from exc
        writer = self._writer(message, schema_id, part)
        stream = io.BytesIO(datum)
        try:
            record = fastavro.schemaless_reader(stream, writer.parsed, None)
        except Exception as exc:  # truncated or corrupt datum: fastavro raises EOFError, ValueError, IndexError...
            raise DecodeError.at(
                message,
                AVRO_PROTOCOL,
                f"Avro datum does not match writer schema {schema_id}: {type(exc).__name__}: {exc}",
                field=part,
            ) from exc
        if stream.tell() != len(datum):
            raise DecodeError.at(
                message, AVRO_PROTOCOL, f"{len(datum) - stream.tell()} trailing bytes after the datum", field=part
            )
        return record, writer.connect

    def _writer(self, message: Message, schema_id: int, part: str) -> _Writer:
        writer = self._writers.get(schema_id)
        if writer is not None:
            return writer
        try:
            text = self.source.schema(schema_id)  # RegistryUnavailableError passes: a fault to retry, not bad data
        except SchemaNotFoundError as exc:
            raise DecodeError.at(message, AVRO_PROTOCOL, str(exc), field=f"{part}.schema_id") from exc
        try:
            document = json.loads(text)
            connect = connect_schema(document)
            parsed = fastavro.parse_schema(without_logical_types(document))
        except SchemaError as exc:
            raise DecodeError.at(
                message, AVRO_PROTOCOL, f"writer schema {schema_id}: {exc}", field=f"{part}.schema"
            ) from exc
        except Exception as exc:  # not JSON, or fastavro refuses it (it raises several unrelated types)
            raise DecodeError.at(
                message, AVRO_PROTOCOL, f"writer schema {schema_id} does not parse: {exc}", field=f"{part}.schema"
            ) from exc
        if len(self._writers) >= _CACHE_LIMIT:
            self._writers.clear()
        writer = self._writers[schema_id] = _Writer(parsed, connect)
        return writer
