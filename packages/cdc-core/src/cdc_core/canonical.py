"""The canonical JSON form of events: the CLI's output and how protocols are compared with each other.

One JSON object per event. Values are rendered by their Python type (see `cdc_core.values`): integers
exact, DECIMAL as a string, bytes as ``{"$bytes": "<base64>"}``, DATE ``YYYY-MM-DD``, DATETIME ISO without
offset, TIMESTAMP ISO with offset, TIME ``[-]HH:MM:SS[.ffffff]``, ENUM its name, SET a list of names,
JSON the document itself, zero dates their MySQL text, unknown ENUM/SET members ``{"$enum_index": n}`` /
``{"$set_bits": n}``, GEOMETRY ``{"$geometry": {"wkb": "<base64>", "srid": n}}``, ARRAY a list of its elements'
forms. Reading it back types values from the event's ``schema`` when present.

A type parameter the source did not carry is left out of the schema (unknown, not MySQL's default); a temporal
value of a column whose fsp is unknown is written with the fraction digits it was read with (`own_fsp`), and
reading it back remembers them (`with_fsp`), so that ``cdc decode | cdc encode`` writes ``.000`` back as read.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

import cattrs

from cdc_core.errors import DataError
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, LogicalMessage, Op, RowChange, Source, Watermark
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.textual import (
    TextFormError,
    format_time,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_time,
)
from cdc_core.types import DataType, LogicalType, MySQLType, by_logical_type
from cdc_core.values import EnumIndex, Geometry, RowImage, SetBits, Value, ZeroTemporal, own_fsp, with_fsp

FORMAT_VERSION: Final = 1


class CanonicalFormError(DataError):
    """A canonical JSON document is malformed; says which field."""


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(omit_if_default=True)
    converter.register_unstructure_hook(MySQLType, lambda t: t.value)
    converter.register_structure_hook(MySQLType, lambda v, _: MySQLType(v))
    return converter


schema_converter: Final = _make_converter()
"""cattrs converter for `TableSchema`, `Column`, `Index` and `DataType` (defaults omitted)."""


def schema_to_json(schema: TableSchema) -> dict[str, Any]:
    result: dict[str, Any] = schema_converter.unstructure(schema)
    return result


def schema_from_json(document: object) -> TableSchema:
    try:
        return schema_converter.structure(document, TableSchema)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise CanonicalFormError(f"schema: {exc}") from exc


# ------------------------------------------------------------------------------------------------ values


def value_to_json(value: Value) -> Any:
    """The canonical JSON form of one typed value (type-driven, no schema needed)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dt.datetime):
        return _iso_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return format_time(value, None)
    if isinstance(value, ZeroTemporal):
        return value.text
    if isinstance(value, EnumIndex):
        return {"$enum_index": value.index}
    if isinstance(value, SetBits):
        return {"$set_bits": value.bits}
    if isinstance(value, Geometry):
        return {"$geometry": {"wkb": base64.b64encode(value.wkb).decode("ascii"), "srid": value.srid}}
    if isinstance(value, tuple):
        return [value_to_json(v) for v in value]
    if isinstance(value, list):
        return [value_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): value_to_json(v) for k, v in value.items()}
    raise CanonicalFormError(f"no canonical form for {type(value).__name__} value {value!r}")


def _iso_datetime(value: dt.datetime) -> str:
    """ISO 8601 with the value's own fraction digits (``isoformat()``'s 0 or 6, or those it was read with)."""
    text = value.isoformat(timespec="seconds")
    digits = own_fsp(value)
    if digits == 0:
        return text
    return text[:19] + "." + f"{value.microsecond:06d}"[:digits] + text[19:]


_FRACTION: Final = re.compile(r"\.(\d+)")


def _written(value: Value, document: str, data_type: DataType) -> Value:
    """A temporal value of a column whose fsp is unknown, remembering the fraction digits of its text."""
    if data_type.known_fsp is not None or not isinstance(value, dt.datetime | dt.timedelta):
        return value
    fraction = _FRACTION.search(document)
    return with_fsp(value, min(len(fraction[1]), 6) if fraction else 0)


def value_from_json(document: Any, data_type: DataType | None) -> Value:
    """Inverse of `value_to_json`, typed by the column when known."""
    if isinstance(document, dict) and len(document) == 1:
        ((tag, inner),) = document.items()
        if tag == "$bytes":
            return base64.b64decode(inner, validate=True)
        if tag == "$enum_index":
            return EnumIndex(int(inner))
        if tag == "$set_bits":
            return SetBits(int(inner))
        if tag == "$geometry":
            return _geometry_from(inner)
    if document is None or data_type is None:
        return document
    try:
        return _FROM_JSON[data_type.logical](document, data_type)
    except (TextFormError, TypeError, ValueError) as exc:
        if isinstance(exc, CanonicalFormError):
            raise
        raise CanonicalFormError(f"{document!r} is not a {data_type.type_text()} value: {exc}") from exc


def _geometry_from(inner: Any) -> Geometry:
    if not isinstance(inner, dict) or not isinstance(inner.get("wkb"), str):
        raise CanonicalFormError(f"$geometry needs an object with a base64 'wkb', got {inner!r}")
    srid = inner.get("srid")
    if srid is not None and (not isinstance(srid, int) or isinstance(srid, bool)):
        raise CanonicalFormError(f"$geometry srid must be an integer or null, got {srid!r}")
    try:
        wkb = base64.b64decode(inner["wkb"], validate=True)
    except ValueError as exc:
        raise CanonicalFormError(f"$geometry wkb is not base64: {exc}") from exc
    return Geometry(wkb=wkb, srid=srid)


def _parse_aware(text: str) -> dt.datetime | ZeroTemporal:
    if text.startswith("0000") or "-00" in text[:10]:
        return ZeroTemporal(text)
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise TextFormError("TIMESTAMP needs an offset")
    return moment


def _array_from(document: Any, data_type: DataType) -> Value:
    if not isinstance(document, list):
        raise CanonicalFormError(f"{document!r} is not an array value")
    return [value_from_json(element, data_type.item) for element in document]


def _same(document: Any, _data_type: DataType) -> Any:
    return document


# PostgreSQL numeric's special values (Debezium decodes them): written as str() of the Decimal, read back exactly.
_SPECIAL_DECIMALS: Final = frozenset({"NaN", "Infinity", "-Infinity"})


def _decimal_from(document: Any, _data_type: DataType) -> Decimal:
    text = str(document)
    return Decimal(text) if text in _SPECIAL_DECIMALS else parse_decimal(text)


# How a canonical JSON value reads back per logical type (the rest are JSON-native already).
_FROM_JSON: Final[Mapping[LogicalType, Callable[[Any, DataType], Value]]] = by_logical_type(
    int=_same,
    float=lambda document, t: float(document),
    double=lambda document, t: float(document),
    decimal=_decimal_from,
    date=lambda document, t: parse_date(document),
    datetime=lambda document, t: _written(parse_datetime(document), document, t),
    timestamp=lambda document, t: _written(_parse_aware(document), document, t),
    time=lambda document, t: _written(parse_time(document), document, t),
    year=_same,
    string=_same,
    bytes=_same,
    enum=_same,
    set=lambda document, t: tuple(document),
    bit=_same,
    json=_same,
    vector=_same,
    geometry=_same,  # a Geometry comes tagged ($geometry) and is read above
    array=_array_from,
)


def image_to_json(image: RowImage | None) -> dict[str, Any] | None:
    return None if image is None else {name: value_to_json(v) for name, v in image.items()}


def image_from_json(document: Any, schema: TableSchema | None, field: str) -> RowImage | None:
    if document is None:
        return None
    if not isinstance(document, dict):
        raise CanonicalFormError(f"{field}: expected an object keyed by column name")
    out: RowImage = {}
    for name, raw in document.items():
        column = schema.find_column(name) if schema is not None else None
        try:
            out[name] = value_from_json(raw, column.data_type if column else None)
        except CanonicalFormError as exc:
            raise CanonicalFormError(f"{field}.{name}: {exc}") from exc
    return out


# ------------------------------------------------------------------------------------------------ events


def _source_json(source: Source | None) -> dict[str, Any] | None:
    if source is None:
        return None
    return {
        "topic": source.topic,
        "partition": source.partition,
        "offset": source.offset,
        "timestamp": source.timestamp,
    }


def to_canonical(event: Event, *, include_schema: bool = True) -> dict[str, Any]:
    """The canonical JSON object of ``event``."""
    if isinstance(event, RowChange):
        doc: dict[str, Any] = {
            "kind": "row",
            "op": event.op.value,
            "database": event.database,
            "table": event.table,
            "commit_ts": event.commit_ts,
            "before": image_to_json(event.before),
            "after": image_to_json(event.after),
            "table_id": event.table_id,
            "schema_version": event.schema_version,
        }
        if event.changed_columns is not None:
            doc["changed_columns"] = list(event.changed_columns)
        if event.handle_key_only:
            doc["handle_key_only"] = True
        if event.claim_check_location is not None:
            doc["claim_check_location"] = event.claim_check_location
        if include_schema and event.schema is not None:
            doc["schema"] = schema_to_json(event.schema)
        if event.meta:
            doc["meta"] = {k: value_to_json(v) for k, v in event.meta.items()}
    elif isinstance(event, DDLEvent):
        doc = {
            "kind": "ddl",
            "ddl_type": event.ddl_type.value,
            "database": event.database,
            "table": event.table,
            "commit_ts": event.commit_ts,
            "sql": event.sql,
        }
        if include_schema:
            doc["table_schema"] = schema_to_json(event.table_schema) if event.table_schema else None
            doc["pre_table_schema"] = schema_to_json(event.pre_table_schema) if event.pre_table_schema else None
        if event.meta:
            doc["meta"] = {k: value_to_json(v) for k, v in event.meta.items()}
    elif isinstance(event, Watermark):
        doc = {"kind": "watermark", "ts": event.ts, "commit_ts": event.ts}
    elif isinstance(event, LogicalMessage):
        doc = {
            "kind": "message",
            "database": event.database,
            "commit_ts": event.commit_ts,
            "prefix": event.prefix,
            "content": value_to_json(event.content),
            "transactional": event.transactional,
        }
        if event.meta:
            doc["meta"] = {k: value_to_json(v) for k, v in event.meta.items()}
    elif isinstance(event, Bootstrap):
        doc = {
            "kind": "bootstrap",
            "database": event.database,
            "table": event.table,
            "commit_ts": None,
            "table_schema": schema_to_json(event.table_schema),
        }
    else:
        raise CanonicalFormError(f"not an event: {type(event).__name__}")
    doc["source"] = _source_json(event.source)
    return doc


def dumps(event: Event, *, include_schema: bool = True) -> str:
    """One canonical JSON line (keys in the documented order, UTF-8 text)."""
    return json.dumps(to_canonical(event, include_schema=include_schema), ensure_ascii=False, separators=(",", ":"))


def _require(doc: dict[str, Any], key: str, kinds: type | tuple[type, ...]) -> Any:
    if key not in doc:
        raise CanonicalFormError(f"missing field {key!r}")
    value = doc[key]
    if not isinstance(value, kinds):
        raise CanonicalFormError(f"field {key!r}: unexpected {type(value).__name__}")
    return value


def _source_from(doc: dict[str, Any]) -> Source | None:
    raw = doc.get("source")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise CanonicalFormError("field 'source': expected an object")
    return Source(
        topic=raw.get("topic"), partition=raw.get("partition"), offset=raw.get("offset"), timestamp=raw.get("timestamp")
    )


def _optional_schema(doc: dict[str, Any], key: str) -> TableSchema | None:
    raw = doc.get(key)
    return None if raw is None else schema_from_json(raw)


def from_canonical(doc: object, *, schema: TableSchema | None = None) -> Event:
    """An event from its canonical JSON object. ``schema`` types row values when the document has none."""
    if not isinstance(doc, dict):
        raise CanonicalFormError("an event must be a JSON object")
    kind = _require(doc, "kind", str)
    source = _source_from(doc)
    try:
        if kind == "row":
            row_schema = _optional_schema(doc, "schema") or schema
            return RowChange(
                op=Op(_require(doc, "op", str)),
                database=_require(doc, "database", str),
                table=_require(doc, "table", str),
                commit_ts=doc.get("commit_ts"),
                before=image_from_json(doc.get("before"), row_schema, "before"),
                after=image_from_json(doc.get("after"), row_schema, "after"),
                table_id=doc.get("table_id"),
                schema_version=doc.get("schema_version"),
                schema=row_schema,
                changed_columns=doc.get("changed_columns"),
                handle_key_only=bool(doc.get("handle_key_only", False)),
                claim_check_location=doc.get("claim_check_location"),
                source=source,
                meta=doc.get("meta"),
            )
        if kind == "ddl":
            return DDLEvent(
                ddl_type=DDLType(_require(doc, "ddl_type", str)),
                sql=doc.get("sql"),
                database=doc.get("database"),
                table=doc.get("table"),
                commit_ts=doc.get("commit_ts"),
                table_schema=_optional_schema(doc, "table_schema"),
                pre_table_schema=_optional_schema(doc, "pre_table_schema"),
                source=source,
                meta=doc.get("meta"),
            )
        if kind == "watermark":
            return Watermark(ts=_require(doc, "ts", int), source=source)
        if kind == "bootstrap":
            return Bootstrap(table_schema=schema_from_json(_require(doc, "table_schema", dict)), source=source)
        if kind == "message":
            content = value_from_json(_require(doc, "content", dict), None)
            if not isinstance(content, bytes):
                raise CanonicalFormError("field 'content': expected {\"$bytes\": ...}")
            transactional = doc.get("transactional")
            return LogicalMessage(
                prefix=_require(doc, "prefix", str),
                content=content,
                database=doc.get("database"),
                transactional=transactional if isinstance(transactional, bool) else None,
                commit_ts=doc.get("commit_ts"),
                source=source,
                meta=doc.get("meta"),
            )
    except ValueError as exc:
        if isinstance(exc, CanonicalFormError):
            raise
        raise CanonicalFormError(str(exc)) from exc
    raise CanonicalFormError(f"unknown event kind {kind!r}")


def loads(line: str | bytes, *, schema: TableSchema | None = None) -> Event:
    try:
        doc = json.loads(line)
    except ValueError as exc:
        raise CanonicalFormError(f"not JSON: {exc}") from exc
    return from_canonical(doc, schema=schema)


__all__ = [
    "CanonicalFormError",
    "Column",
    "Index",
    "dumps",
    "from_canonical",
    "loads",
    "schema_converter",
    "schema_from_json",
    "schema_to_json",
    "to_canonical",
    "value_from_json",
    "value_to_json",
]
