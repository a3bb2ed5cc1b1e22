"""Typed events to Debezium change events as Kafka Connect's Avro converter writes them.

Each event is first the Debezium JSON message TiCDC writes (`DebeziumEncoder`: key and value, each a Connect
schema with its payload); the converter's rules then make the Avro schema of each Connect schema
(`connect_schema.avro_schema`), register it under the converter's subject (``<topic>-key``, ``<topic>-value``)
and write the payload as a Confluent-framed Avro datum. A consumer with Connect's Avro converter (or any Confluent
deserializer) reads the same Connect records as from the JSON form.

TiCDC's source block carries ``commit_ts`` and ``cluster_id``, which its JSON schema does not declare (a Connect
converter would drop them); the Avro schema declares both as optional fields, so that the commit TSO survives.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import fastavro
import orjson

from cdc_core.codec import Options
from cdc_core.errors import EncodeError, SchemaError
from cdc_core.events import DDLEvent, Event, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.schema_registry import Registry, confluent_frame
from cdc_debezium.avro.connect_schema import avro_schema
from cdc_debezium.codec import OPTIONS as JSON_OPTIONS
from cdc_debezium.encoder import DebeziumEncoder
from cdc_debezium.names import AVRO_PROTOCOL, PROTOCOL

_NOT_TOPIC: Final = re.compile(r"[^A-Za-z0-9._-]")
_TICDC_SOURCE_EXTRAS: Final = (
    {"type": "int64", "optional": True, "field": "commit_ts"},
    {"type": "string", "optional": True, "field": "cluster_id"},
)
_CACHE_LIMIT: Final = 256
Datum = Callable[[Any], Any]


def _json_options(options: Options) -> Options:
    """The Debezium JSON encoder's options for the same events, always with schemas (Avro needs them)."""
    names = ("enable-tidb-extension", "output-old-value", "cluster-id", "time-zone")
    specs = [s for s in JSON_OPTIONS if s.for_encoder]
    return Options(specs, {name: options[name] for name in names}, protocol=PROTOCOL)


def topic_name(text: str) -> str:
    """``text`` with what Kafka refuses in a topic name replaced by ``_``, as Debezium's topic naming does."""
    return _NOT_TOPIC.sub("_", text)


class _Writer:
    """One Connect schema's Avro schema (text and parsed) and the converter of its payloads into datums."""

    __slots__ = ("datum", "parsed", "text")

    def __init__(self, connect: Mapping[str, Any]) -> None:
        document = avro_schema(connect)
        self.text = json.dumps(document, separators=(",", ":"))
        self.parsed = fastavro.parse_schema(document)
        self.datum = datum_converter(connect)


class DebeziumAvroEncoder:
    """``clock`` gives the payload ``ts_ms`` (as `DebeziumEncoder`'s); tests fix it to compare bytes."""

    def __init__(self, options: Options, *, registry: Registry, **json_encoder: Any) -> None:
        self.json = DebeziumEncoder(_json_options(options), **json_encoder)
        self.registry = registry
        self.prefix = topic_name(options["topic.prefix"] or options["cluster-id"])
        self._writers: dict[bytes, _Writer] = {}

    def encode(self, event: Event) -> list[Message]:
        messages = self.json.encode(event)
        topic, table = self._topic(event)
        return [self._avro(m, topic, table) for m in messages]

    def _topic(self, event: Event) -> tuple[str, str]:
        """The topic of ``event`` and the table its schema errors name."""
        if isinstance(event, RowChange):
            table = f"{event.database}.{event.table}"
            return topic_name(f"{self.prefix}.{table}"), table
        if isinstance(event, DDLEvent):
            return self.prefix, f"{event.database or ''}.{event.table or ''}"
        if isinstance(event, Watermark):
            return f"{self.prefix}.watermark", "watermark"
        return self.prefix, ""

    def _avro(self, message: Message, topic: str, table: str) -> Message:
        assert message.key is not None and message.value is not None
        key = self._part(message.key, f"{topic}-key", table, "key")
        value = self._part(message.value, f"{topic}-value", table, "value")
        return Message(key=key, value=value, topic=topic)

    def _part(self, data: bytes, subject: str, table: str, part: str) -> bytes:
        document = orjson.loads(data)
        schema = document["schema"]
        cache_key = orjson.dumps(schema)
        writer = self._writers.get(cache_key)
        if writer is None:
            try:
                writer = _Writer(_with_source_extras(schema))
            except (SchemaError, ValueError, KeyError, TypeError) as exc:
                raise EncodeError(AVRO_PROTOCOL, f"{part} schema: {exc}", table=table) from exc
            if len(self._writers) >= _CACHE_LIMIT:
                self._writers.clear()
            self._writers[cache_key] = writer
        schema_id = self.registry.register(subject, writer.text, table=table)
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, writer.parsed, writer.datum(document["payload"]))
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise EncodeError(AVRO_PROTOCOL, f"{part} does not fit its Avro schema: {exc}", table=table) from exc
        return confluent_frame(schema_id, out.getvalue())


def _with_source_extras(schema: dict[str, Any]) -> dict[str, Any]:
    """The envelope schema with TiCDC's undeclared source fields declared (see the module docstring)."""
    fields = schema.get("fields")
    if not isinstance(fields, list):
        return schema
    out = []
    for field in fields:
        if isinstance(field, dict) and field.get("field") == "source" and isinstance(field.get("fields"), list):
            have = {f.get("field") for f in field["fields"]}
            extras = [e for e in _TICDC_SOURCE_EXTRAS if e["field"] not in have]
            out.append({**field, "fields": [*field["fields"], *extras]})
        else:
            out.append(field)
    return {**schema, "fields": out}


# ------------------------------------------------------------------------------------------ payloads


def _as_is(value: Any) -> Any:
    return value


def _as_float(value: Any) -> Any:
    return float(value)


def _as_bytes(value: Any) -> Any:
    return base64.b64decode(value) if isinstance(value, str) else value


def datum_converter(connect: Mapping[str, Any]) -> Datum:
    """The converter of JsonConverter payloads of ``connect`` into what Avro writes: base64 text to bytes, numbers
    to floats where the schema has floats, structs, arrays and maps element by element."""
    kind = connect.get("type")
    if kind == "struct":
        fields = [(f["field"], datum_converter(f)) for f in connect.get("fields") or ()]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            return {name: convert(value.get(name)) for name, convert in fields}

        return struct
    if kind in ("array", "map"):
        element = datum_converter(connect["items"] if kind == "array" else connect["values"])

        def container(value: Any) -> Any:
            if value is None:
                return None
            if kind == "map":
                return {k: element(v) for k, v in value.items()}
            return [element(v) for v in value]

        return container
    plain = _as_bytes if kind == "bytes" else _as_float if kind in ("float", "double") else _as_is

    def scalar(value: Any) -> Any:
        return None if value is None else plain(value)

    return scalar
