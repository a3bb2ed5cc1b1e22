"""Debezium JSON messages (TiCDC, Debezium, dtle) to typed events.

Kinds: rows (``op`` c/u/d, ``r`` snapshot reads as inserts), truncate (``op`` t), TiCDC watermarks
(``op`` m with ``source.commit_ts``), PostgreSQL logical-decoding messages (``op`` m with ``message``), DDL
(a payload with ``ddl``, dtle's bare SchemaChangeTopic value included). Tombstones, transaction-metadata and
heartbeat messages carry no change and decode to no event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from cdc_core.codec import Options
from cdc_core.errors import DecodeError, SchemaError, json_kind
from cdc_core.events import DDLEvent, DDLType, Event, LogicalMessage, Op, RowChange, Source, Watermark
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.values import RowImage
from cdc_debezium import ddl
from cdc_debezium.column_readers import ColumnReader, binary_converter, reader_from_column, reader_from_field
from cdc_debezium.connector_modes import BinaryMode, DecimalMode, Modes, TimePrecisionMode
from cdc_debezium.jsonreader import JSONParseError, loads
from cdc_debezium.names import PROTOCOL, Logical, WireOp
from cdc_debezium.wire_values import CONVERSION_ERRORS, TEXT_TYPE, UNTYPED, Converter

_ROW_OPS: Final = {
    WireOp.CREATE.value: Op.INSERT,
    WireOp.READ.value: Op.INSERT,
    WireOp.UPDATE.value: Op.UPDATE,
    WireOp.DELETE.value: Op.DELETE,
}
# Source fields worth keeping for ordering and tracing (values copied as they are on the wire).
_SOURCE_META: Final = (
    "version",
    "connector",
    "name",
    "ts_ms",
    "ts_sec",
    "ts_us",
    "ts_ns",
    "snapshot",
    "server_id",
    "gtid",
    "file",
    "pos",
    "row",
    "thread",
    "query",
    "sequence",
    "cluster_id",
    "start_ts",
    "txId",
    "lsn",
)
# A schema with a Connect Decimal may carry its values as JSON numbers (JsonConverter decimal.format=NUMERIC):
# such payloads are parsed with exact fractions, never through float.
_CONNECT_DECIMAL_NAME: Final = Logical.CONNECT_DECIMAL.value.encode()
_CACHE_LIMIT: Final = 1024


class _Readers:
    """Compiled readers of one before/after struct (by field name), and the table schema they describe.

    ``renames`` maps field names to column names where they differ (``__debezium.source.column.name``).
    """

    __slots__ = ("by_name", "renames", "schema")

    def __init__(
        self, by_name: dict[str, Converter], schema: TableSchema | None, renames: dict[str, str] | None = None
    ) -> None:
        self.by_name = by_name
        self.schema = schema
        self.renames = renames


class DebeziumDecoder:
    """Stateless apart from a cache of compiled field schemas. ``schemas`` types schemaless streams."""

    def __init__(self, options: Options, *, schemas: Iterable[TableSchema] = ()) -> None:
        from cdc_core.textual import resolve_zone

        # A protocol whose messages always carry their schema (debezium-avro) has no decimal or time-precision
        # options: those only say how a schemaless stream was written.
        self.modes = Modes(
            decimal=DecimalMode(options.get("decimal.handling.mode", DecimalMode.DOUBLE.value)),
            binary=BinaryMode(options["binary.handling.mode"]),
            time_precision=TimePrecisionMode(
                options.get("time.precision.mode", TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS.value)
            ),
            zone=resolve_zone(options["time-zone"]),
        )
        self.user_schemas: dict[tuple[str, str], TableSchema] = {(s.database, s.table): s for s in schemas}
        path = options["table-schema"]
        if path:
            from cdc_debezium.schemafile import load_schemas

            for schema in load_schemas(path):
                self.user_schemas[(schema.database, schema.table)] = schema
        self.untyped_text = options.get("untyped-columns", "text") == "text"
        self._cache: dict[bytes, _Readers] = {}
        self._user_readers: dict[tuple[str, str], _Readers] = {}
        self._text_cache: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], _Readers] = {}
        # Parsed schema documents by their exact bytes: every message of a table repeats the same schema
        # (5 kB of the 7 kB of a 20-column row), so it is parsed once and its readers found by identity.
        self._schema_docs: dict[bytes, Any] = {}
        self._doc_readers: dict[tuple[int, str, str, tuple[str, ...]], tuple[Any, _Readers]] = {}

    # ------------------------------------------------------------------------------------------ entry

    def decode(self, message: Message) -> list[Event]:
        if message.is_tombstone:
            return []  # Debezium's tombstone after a delete: log compaction only, no change
        try:
            doc = self._parse(message.value or b"")
        except JSONParseError as exc:
            raise DecodeError.at(message, PROTOCOL, f"not valid JSON: {exc}", field="value") from exc
        if not isinstance(doc, dict):
            raise DecodeError.at(message, PROTOCOL, f"expected a JSON object, got {json_kind(doc)}", field="value")
        schema_doc: Any = None
        if "payload" in doc and (len(doc) == 1 or "schema" in doc):
            payload = doc["payload"]
            schema_doc = doc.get("schema")
            prefix = "payload"
        else:
            payload = doc  # schemas.enable=false, and dtle's schema-change value
            prefix = "value"
        if payload is None:
            return []  # JsonConverter's tombstone with schemas: {"schema": null, "payload": null}
        if not isinstance(payload, dict):
            raise DecodeError.at(message, PROTOCOL, f"expected an object, got {json_kind(payload)}", field=prefix)
        if schema_doc is not None and not isinstance(schema_doc, dict):
            raise DecodeError.at(message, PROTOCOL, f"expected an object, got {json_kind(schema_doc)}", field="schema")
        try:
            return self._dispatch(message, payload, schema_doc, prefix)
        except DecodeError as exc:
            raise exc.located(message) from None
        except SchemaError as exc:
            raise DecodeError.at(message, PROTOCOL, str(exc), field="schema") from exc

    def _parse(self, data: bytes) -> Any:
        """The message document; a schema seen before (same bytes) is reused instead of parsed again."""
        split = _split_envelope(data)
        if split is None:
            return loads(data, exact=_CONNECT_DECIMAL_NAME in data)
        payload_bytes, schema_bytes = split
        try:
            payload = loads(payload_bytes, exact=_CONNECT_DECIMAL_NAME in schema_bytes)
            schema = self._schema_docs.get(schema_bytes)
            if schema is None:
                schema = loads(schema_bytes)
                if len(self._schema_docs) >= _CACHE_LIMIT:
                    self._schema_docs.clear()
                    self._doc_readers.clear()
                self._schema_docs[schema_bytes] = schema
        except JSONParseError:
            # A schemaless payload with a column named "schema" splits wrongly (the cut half is never valid
            # JSON, since it ends inside the still-open payload object); so does a broken message. The whole
            # message then decides.
            return loads(data, exact=_CONNECT_DECIMAL_NAME in data)
        # Both halves parsed alone and the fixed frame around them: the whole message is valid JSON.
        return {"payload": payload, "schema": schema}

    def _dispatch(
        self, message: Message, payload: dict[str, Any], schema: dict[str, Any] | None, at: str
    ) -> list[Event]:
        op = payload.get("op")
        if op is not None:
            if not isinstance(op, str):
                raise DecodeError.at(message, PROTOCOL, f"expected a string, got {json_kind(op)}", field=f"{at}.op")
            row_op = _ROW_OPS.get(op)
            if row_op is not None:
                return [self._row(message, op, row_op, payload=payload, schema=schema, at=at)]
            if op == WireOp.MESSAGE:
                if "message" in payload:  # PostgreSQL logical-decoding message; TiCDC's watermark has none
                    return [self._logical_message(message, payload, schema, at)]
                return [self._watermark(message, payload, at)]
            if op == WireOp.TRUNCATE:
                return [self._truncate(message, payload, at)]
            raise DecodeError.at(
                message, PROTOCOL, f"unknown op {op!r} (expected c, u, d, r, t or m)", field=f"{at}.op"
            )
        if "ddl" in payload:
            return [self._ddl(message, payload, at)]
        if payload.get("status") in ("BEGIN", "END") and "id" in payload:
            return []  # transaction metadata (provide.transaction.metadata): boundaries, no change
        schema_name = schema.get("name") if schema else None
        if schema_name == "io.debezium.connector.common.Heartbeat" or set(payload) == {"ts_ms"}:
            return []  # heartbeat: keeps offsets moving, no change
        if isinstance(schema_name, str) and schema_name.endswith(("Key", "SchemaChangeKey")):
            reason = f"this is a key document ({schema_name}); pass it as the message key"
        elif set(payload) == {"databaseName"}:
            reason = "this is a schema-change key document; pass it as the message key"
        else:
            reason = "no 'op' and no 'ddl': not a change, DDL or watermark (a key document? pass it as the key)"
        raise DecodeError.at(message, PROTOCOL, reason, field=f"{at}.op")

    # ------------------------------------------------------------------------------------------- rows

    def _row(
        self, message: Message, op: str, row_op: Op, *, payload: dict[str, Any], schema: dict[str, Any] | None, at: str
    ) -> RowChange:
        source = _source(message, payload, at)
        database = _namespace(message, source, f"{at}.source")
        table = _str_field(message, source, "table", f"{at}.source")
        key = self._key_payload(message) if message.key else None
        key_columns = tuple(key) if key is not None else ()
        readers = self._readers(message, schema, database, table, key_columns)
        if readers is _NO_READERS:
            if not self.untyped_text:
                raise DecodeError.at(
                    message,
                    PROTOCOL,
                    f"table {database}.{table}: the message has no schema and option table-schema none for it "
                    "(untyped-columns=reject)",
                    field=f"{at}.after",
                )
            payload = _exact_payload(message, payload)
            readers = self._text_readers(database, table, key_columns, payload)
        before_raw = payload.get("before")
        after_raw = payload.get("after")
        before = self._image(message, readers, before_raw, f"{at}.before") if before_raw is not None else None
        after = self._image(message, readers, after_raw, f"{at}.after") if after_raw is not None else None
        key_only = False
        if row_op is Op.DELETE and before is None:
            # PostgreSQL (REPLICA IDENTITY DEFAULT/NOTHING) may send no old row: the key names the deleted row.
            if not key:
                raise DecodeError.at(
                    message, PROTOCOL, "a delete needs the deleted row: before is null and no key", field=f"{at}.before"
                )
            before = self._image(message, readers, key, "key.payload")
            key_only = True
        if row_op is not Op.DELETE and after is None:
            raise DecodeError.at(message, PROTOCOL, f"op {op!r} needs the new row", field=f"{at}.after")
        meta = _meta(source, payload)
        if op == WireOp.READ:
            meta["snapshot_read"] = True
        return RowChange(
            op=row_op,
            database=database,
            table=table,
            before=before,
            after=after,
            commit_ts=_commit_ts(message, source, at),
            schema=readers.schema,
            handle_key_only=key_only,
            source=Source.of(message),
            meta=meta,
        )

    def _image(self, message: Message, readers: _Readers, raw: Any, at: str) -> RowImage:
        if not isinstance(raw, dict):
            raise DecodeError.at(message, PROTOCOL, f"expected an object, got {json_kind(raw)}", field=at)
        by_name = readers.by_name
        renames = readers.renames
        image: RowImage = {}
        name = ""
        try:
            if renames:
                columns: dict[str, str] = renames
                for name, value in raw.items():
                    column: str = columns.get(name) or name
                    image[column] = None if value is None else by_name.get(name, UNTYPED)(value)
            else:
                for name, value in raw.items():
                    image[name] = None if value is None else by_name.get(name, UNTYPED)(value)
        except CONVERSION_ERRORS as exc:
            reason = f"{exc}" if str(exc) else type(exc).__name__
            raise DecodeError.at(message, PROTOCOL, reason, field=f"{at}.{name}") from exc
        return image

    def _key_payload(self, message: Message) -> dict[str, Any]:
        """The key's columns and values (``{"schema": ..., "payload": {...}}`` or the bare payload)."""
        try:
            doc = loads(message.key or b"")
        except JSONParseError as exc:
            raise DecodeError.at(message, PROTOCOL, f"key is not valid JSON: {exc}", field="key") from exc
        payload = doc.get("payload", doc) if isinstance(doc, dict) else None
        if not isinstance(payload, dict):
            raise DecodeError.at(
                message, PROTOCOL, f"key is not an object, got {json_kind(payload)}", field="key.payload"
            )
        return payload

    def _readers(
        self,
        message: Message,
        schema: dict[str, Any] | None,
        database: str,
        table: str,
        key_columns: tuple[str, ...],
    ) -> _Readers:
        user = self.user_schemas.get((database, table))
        fields = _row_fields(message, schema) if schema is not None else None
        if fields is None:
            if user is None:
                return _NO_READERS
            cached = self._user_readers.get((database, table))
            if cached is None:
                converters = {c.name: reader_from_column(c, self.modes).convert for c in user.columns}
                cached = self._user_readers[(database, table)] = _Readers(converters, user)
            return cached
        by_doc = self._doc_readers.get((id(schema), database, table, key_columns))
        if by_doc is not None and by_doc[0] is schema:
            return by_doc[1]
        cache_key = _fields_key(fields) + b"|" + "\x00".join((database, table, *key_columns)).encode()
        cached = self._cache.get(cache_key)
        if cached is None:
            cached = self._compile(message, fields, user=user, database=database, table=table, key_columns=key_columns)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[cache_key] = cached
        if len(self._doc_readers) >= _CACHE_LIMIT:
            self._doc_readers.clear()
        self._doc_readers[(id(schema), database, table, key_columns)] = (schema, cached)  # keeps `schema` alive
        return cached

    def _text_readers(
        self, database: str, table: str, key_columns: tuple[str, ...], payload: dict[str, Any]
    ) -> _Readers:
        """Every column as text (`wire_values.UNTYPED`): a schemaless row whose table has no user schema. One type per
        column however its values are written; the table schema lists the columns this row has."""
        names: dict[str, None] = {}
        for image in (payload.get("after"), payload.get("before")):
            if isinstance(image, dict):
                names.update(dict.fromkeys(image))
        cache_key = (database, table, tuple(names), key_columns)
        cached = self._text_cache.get(cache_key)
        if cached is not None:
            return cached
        keys = [k for k in key_columns if k in names]
        columns = [Column(name=n, data_type=TEXT_TYPE, nullable=n not in keys) for n in names]
        indexes = [Index(name="PRIMARY", columns=keys, unique=True, primary=True)] if keys else []
        schema = TableSchema(database=database, table=table, columns=columns, indexes=indexes)
        if len(self._text_cache) >= _CACHE_LIMIT:
            self._text_cache.clear()
        readers = self._text_cache[cache_key] = _Readers(dict.fromkeys(names, UNTYPED), schema)
        return readers

    def _compile(
        self,
        message: Message,
        fields: list[Any],
        *,
        user: TableSchema | None,
        database: str,
        table: str,
        key_columns: tuple[str, ...],
    ) -> _Readers:
        readers: list[tuple[str, ColumnReader]] = []
        for i, field in enumerate(fields):
            where = f"schema.fields.after.fields[{i}]"
            if not isinstance(field, dict):
                raise DecodeError.at(message, PROTOCOL, f"expected an object, got {json_kind(field)}", field=where)
            user_column = user.find_column(str(field.get("field"))) if user is not None else None
            try:
                readers.append((str(field.get("field")), reader_from_field(field, user_column, self.modes)))
            except SchemaError as exc:
                raise DecodeError.at(message, PROTOCOL, str(exc), field=where) from exc
        columns = [r.column for _, r in readers if r.column is not None]
        names = {c.name for c in columns}
        renames = {f: r.column.name for f, r in readers if r.column is not None and r.column.name != f}
        if user is not None:
            schema: TableSchema | None = user
        else:
            keys = [renames.get(k, k) for k in key_columns if renames.get(k, k) in names]
            indexes = [Index(name="PRIMARY", columns=keys, unique=True, primary=True)] if keys else []
            try:
                schema = TableSchema(database=database, table=table, columns=_unique(columns), indexes=indexes)
            except SchemaError as exc:
                raise DecodeError.at(message, PROTOCOL, str(exc), field="schema.fields.after") from exc
        by_name = {f: r.convert for f, r in readers if r.column is not None}
        return _Readers(by_name, schema, renames or None)

    # -------------------------------------------------------------------------------- other kinds

    def _watermark(self, message: Message, payload: dict[str, Any], at: str) -> Watermark:
        source = _source(message, payload, at)
        ts = _commit_ts(message, source, at)
        if ts is None:
            raise DecodeError.at(message, PROTOCOL, "a watermark needs commit_ts", field=f"{at}.source.commit_ts")
        return Watermark(ts=ts, source=Source.of(message))

    def _logical_message(
        self, message: Message, payload: dict[str, Any], schema: dict[str, Any] | None, at: str
    ) -> LogicalMessage:
        source = _source(message, payload, at)
        block = payload.get("message")
        if not isinstance(block, dict):
            raise DecodeError.at(
                message, PROTOCOL, f"expected an object, got {json_kind(block)}", field=f"{at}.message"
            )
        prefix = block.get("prefix")
        if not isinstance(prefix, str):
            raise DecodeError.at(
                message, PROTOCOL, f"expected a string, got {json_kind(prefix)}", field=f"{at}.message.prefix"
            )
        raw = block.get("content")
        content = b""
        if raw is not None:
            # bytes on the schema (binary.handling.mode=bytes) are base64 in JSON; string modes follow the option
            convert = binary_converter(self.modes, _content_kind(schema))
            try:
                content = convert(raw)
            except CONVERSION_ERRORS as exc:
                raise DecodeError.at(message, PROTOCOL, str(exc), field=f"{at}.message.content") from exc
        database = source.get("db")
        return LogicalMessage(
            prefix=prefix,
            content=content,
            database=database if isinstance(database, str) and database else None,
            transactional=source.get("txId") is not None,
            commit_ts=_commit_ts(message, source, at),
            source=Source.of(message),
            meta=_meta(source, payload),
        )

    def _truncate(self, message: Message, payload: dict[str, Any], at: str) -> DDLEvent:
        source = _source(message, payload, at)
        return DDLEvent(
            ddl_type=DDLType.TRUNCATE,
            sql=None,
            database=_namespace(message, source, f"{at}.source"),
            table=_str_field(message, source, "table", f"{at}.source"),
            commit_ts=_commit_ts(message, source, at),
            source=Source.of(message),
            meta=_meta(source, payload),
        )

    def _ddl(self, message: Message, payload: dict[str, Any], at: str) -> DDLEvent:
        sql = payload.get("ddl")
        # Optional in the schema-change schema: snapshot-time changes of SQL Server, Db2 and Informix carry
        # null (the table structure is in tableChanges); streaming SQL Server ones carry "N/A".
        if sql is not None and not isinstance(sql, str):
            raise DecodeError.at(message, PROTOCOL, f"expected a string, got {json_kind(sql)}", field=f"{at}.ddl")
        raw_source = payload.get("source")
        source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
        position = payload.get("position")  # dtle: binlog coordinates live here, not in source
        meta = _meta(source, payload)
        if isinstance(position, dict):
            meta.update({k: v for k, v in position.items() if v is not None})
        if "server" in source:
            meta["name"] = source["server"]
        database_name = payload.get("databaseName")
        database = (
            _schema_of(source)
            or source.get("db")
            or (database_name if isinstance(database_name, str) else None)
            or None
        )
        table = source.get("table") or None
        changes = payload.get("tableChanges")
        if changes is None:
            changes = []
        if not isinstance(changes, list):
            raise DecodeError.at(
                message, PROTOCOL, f"expected an array, got {json_kind(changes)}", field=f"{at}.tableChanges"
            )
        change_type: str | None = None
        ids: list[ddl.TableId] = []
        table_schema: TableSchema | None = None
        if changes:
            first = changes[0]
            if not isinstance(first, dict):
                raise DecodeError.at(message, PROTOCOL, "expected an object", field=f"{at}.tableChanges[0]")
            raw_type = first.get("type")
            change_type = raw_type if isinstance(raw_type, str) else None
            ids = _table_ids(message, first.get("id"), f"{at}.tableChanges[0].id")
            if ids:
                meta["table_ids"] = [str(i) for i in ids]
                if table is None:
                    database, table = ids[0].database or database, ids[0].table
            table_doc = first.get("table")
            if isinstance(table_doc, dict) and isinstance(table_doc.get("defaultCharsetName"), str):
                meta["default_charset"] = table_doc["defaultCharsetName"]
            if isinstance(table_doc, dict) and database is not None and table is not None:
                try:
                    table_schema = ddl.schema_from_table(database, table, table_doc)
                except SchemaError:
                    table_schema = None  # e.g. spatial types: the DDL still applies, its typed schema is unknown
        commit_ts = source.get("commit_ts")
        ddl_type = ddl.ddl_type_of(change_type, sql)
        pre_table_schema: TableSchema | None = None
        if ddl_type is DDLType.RENAME and table_schema is not None and len(ids) == 2:
            # id is "old","new": a rename keeps the columns, so the old table is the new one under its old name
            pre_table_schema = TableSchema(
                database=ids[0].database or table_schema.database,
                table=ids[0].table,
                columns=table_schema.columns,
                indexes=table_schema.indexes,
            )
        return DDLEvent(
            ddl_type=ddl_type,
            sql=sql,
            database=database if isinstance(database, str) else None,
            table=table if isinstance(table, str) else None,
            commit_ts=commit_ts if type(commit_ts) is int else None,
            table_schema=table_schema,
            pre_table_schema=pre_table_schema,
            source=Source.of(message),
            meta=meta,
        )


_NO_READERS: Final = _Readers({}, None)
_PAYLOAD_FIRST: Final = b'{"payload":'
_SCHEMA_FIRST: Final = b'{"schema":'


def _split_envelope(data: bytes) -> tuple[bytes, bytes] | None:
    """(payload bytes, schema bytes) of a compact ``{"payload":P,"schema":S}`` or ``{"schema":S,"payload":P}``.

    An unescaped ``"payload":``/``"schema":`` can only be an object key (quotes inside strings are escaped); a
    schema document has neither key, so the last ``,"schema":`` (TiCDC's order) and the first ``,"payload":``
    (Kafka Connect's order) are the top-level members. None for anything else (pretty-printed, schemaless).
    """
    if not data.endswith(b"}"):
        return None
    if data.startswith(_PAYLOAD_FIRST):
        middle = data.rfind(b',"schema":')
        if middle > 0:
            return data[len(_PAYLOAD_FIRST) : middle], data[middle + 10 : -1]
    elif data.startswith(_SCHEMA_FIRST):
        middle = data.find(b',"payload":')
        if middle > 0:
            return data[middle + 11 : -1], data[len(_SCHEMA_FIRST) : middle]
    return None


def _exact_payload(message: Message, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload again with every number exactly as written (text columns keep its digits), when it has any
    fraction or exponent; schemaless payloads are their message's whole document."""
    data = message.value or b""
    try:
        document = loads(data, exact=True)
    except JSONParseError:
        return payload  # parsed once already: cannot fail now
    if isinstance(document, dict) and "op" not in document and isinstance(document.get("payload"), dict):
        document = document["payload"]
    return document if isinstance(document, dict) else payload


def _unique(columns: list[Column]) -> list[Column]:
    seen: set[str] = set()
    out = []
    for column in columns:
        if column.name not in seen:
            seen.add(column.name)
            out.append(column)
    return out


def _fields_key(fields: list[Any]) -> bytes:
    """Bytes identifying a field-schema list (Decimal and 64+-bit numbers appear after an exact parse)."""
    try:
        return orjson.dumps(fields, default=str)
    except orjson.JSONEncodeError:
        return json.dumps(fields, default=str).encode("utf-8", "surrogatepass")


def _row_fields(message: Message, schema: dict[str, Any]) -> list[Any] | None:
    fields = schema.get("fields")
    if not isinstance(fields, list):
        raise DecodeError.at(message, PROTOCOL, f"expected an array, got {json_kind(fields)}", field="schema.fields")
    for candidate in ("after", "before"):
        for entry in fields:
            if isinstance(entry, dict) and entry.get("field") == candidate:
                inner = entry.get("fields")
                if not isinstance(inner, list):
                    raise DecodeError.at(
                        message,
                        PROTOCOL,
                        f"expected an array, got {json_kind(inner)}",
                        field=f"schema.fields.{candidate}.fields",
                    )
                return inner
    return None


def _content_kind(schema: dict[str, Any] | None) -> str:
    """The Connect type of ``message.content`` in a logical-message value schema ("string" when unknown)."""
    for entry in (schema or {}).get("fields") or ():
        if isinstance(entry, dict) and entry.get("field") == "message":
            for inner in entry.get("fields") or ():
                if isinstance(inner, dict) and inner.get("field") == "content" and inner.get("type") == "bytes":
                    return "bytes"
    return "string"


def _table_ids(message: Message, raw: object, at: str) -> list[ddl.TableId]:
    if raw is None:
        return []
    ids = ddl.parse_ids(raw) if isinstance(raw, str) else None
    if ids is None:
        reason = f"expected table ids of one to three parts, quoted or not, separated by commas, got {raw!r}"
        raise DecodeError.at(message, PROTOCOL, reason, field=at)
    return ids


def _source(message: Message, payload: Mapping[str, Any], at: str) -> Mapping[str, Any]:
    if "source" not in payload:  # e.g. Flink's debezium-json writes only before, after and op
        raise DecodeError.at(message, PROTOCOL, "missing: expected an object naming db and table", field=f"{at}.source")
    source = payload.get("source")
    if not isinstance(source, dict):
        raise DecodeError.at(message, PROTOCOL, f"expected an object, got {json_kind(source)}", field=f"{at}.source")
    return source


def _str_field(message: Message, obj: Mapping[str, Any], key: str, at: str) -> str:
    value = obj.get(key)
    if key not in obj:
        raise DecodeError.at(message, PROTOCOL, "missing: expected a string", field=f"{at}.{key}")
    if not isinstance(value, str):
        raise DecodeError.at(message, PROTOCOL, f"expected a string, got {json_kind(value)}", field=f"{at}.{key}")
    return value


def _commit_ts(message: Message, source: Mapping[str, Any], at: str) -> int | None:
    value = source.get("commit_ts")
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise DecodeError.at(
            message, PROTOCOL, f"expected a TSO integer, got {value!r}", field=f"{at}.source.commit_ts"
        )
    return value


def _schema_of(source: Mapping[str, Any]) -> str | None:
    """``source.schema`` where the connector names one (PostgreSQL, Oracle, SQL Server, Db2): what holds the
    table, as MySQL's database does, their ``db`` being the catalog (kept in ``meta["catalog"]``). Debezium names
    their topics and Flink CDC their tables the same way (``schema.table``): two tables of one name in two schemas
    of one database stay two tables."""
    schema = source.get("schema")
    return schema if isinstance(schema, str) and schema else None


def _namespace(message: Message, source: Mapping[str, Any], at: str) -> str:
    """An event's database: the schema that holds the table (:func:`_schema_of`), else ``source.db``."""
    return _schema_of(source) or _str_field(message, source, "db", at)


def _meta(source: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
    meta = {key: source[key] for key in _SOURCE_META if source.get(key) is not None}
    catalog = source.get("db")
    if _schema_of(source) is not None and isinstance(catalog, str):
        meta["catalog"] = catalog  # the database named by db, where the event's database is the schema
    if "ts_ms" in meta:
        meta["source_ts_ms"] = meta.pop("ts_ms")
    ts_ms = payload.get("ts_ms")
    if ts_ms is not None:
        meta["ts_ms"] = ts_ms
    if "name" in meta:
        meta["cluster"] = meta.pop("name")
    transaction = payload.get("transaction")
    if transaction is not None:
        meta["transaction"] = transaction
    return meta
