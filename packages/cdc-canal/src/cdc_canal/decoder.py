"""Canal-JSON messages (TiCDC's and official Canal's flat messages) to typed events."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs
import orjson

from cdc_canal.inbound import Parser, TypeCache, TypeResolutionError
from cdc_canal.names import (
    DDL_TYPES,
    DML_TYPES,
    INIT_TYPE,
    PROTOCOL,
    ROWLESS_TYPES,
    ROWS_QUERY_TYPE,
    WATERMARK_TYPE,
)
from cdc_core.claimcheck import ClaimCheckStorage
from cdc_core.codec import Options
from cdc_core.compression import decompress, parse_compression
from cdc_core.errors import ConfigError, DecodeError, LimitExceededError
from cdc_core.events import DDLEvent, Event, Op, RowChange, Source, Watermark
from cdc_core.limits import Limits
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.statements import first_keyword
from cdc_core.textual import resolve_zone
from cdc_core.types import DataType, LogicalType
from cdc_core.values import Value

_OPS = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE, INIT_TYPE: Op.INSERT}
_MAX_TS = (1 << 64) - 1
_MAX_CACHED_TABLES = 1024  # distinct (table, column set, types) shapes kept; a hostile stream cannot grow it


def _fail(reason: str, field: str | None = None) -> DecodeError:
    return DecodeError(PROTOCOL, reason, field=field)


def _compile(pattern: str, option: str) -> re.Pattern[str] | None:
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{PROTOCOL}: option {option}: invalid regular expression: {exc}") from exc


class CanalDecoder:
    """Every Canal-JSON message carries its own column types; the decoder only caches what it derived from them
    (parsers per type text, schemas per table shape), in bounded caches.

    TIMESTAMP strings carry no zone; they are read as local time in option ``time-zone`` (the changefeed's
    ``--tz`` for TiCDC, the MySQL server zone for Canal).
    """

    def __init__(self, options: Options) -> None:
        self.zone = resolve_zone(options["time-zone"])
        self.types = TypeCache(self.zone)
        self._tables: dict[tuple[Any, ...], tuple[dict[str, tuple[DataType, Parser]], TableSchema]] = {}
        self.database_filter = _compile(options["database.include"], "database.include")
        self.table_filter = _compile(options["table.include"], "table.include")
        self.max_bytes: int = options["max-message-bytes"]
        uri = options["claim-check-storage-uri"]
        self.compression = parse_compression(options["large-message-handle-compression"])
        self.max_decompressed = Limits().max_decompressed_bytes
        self.claims = ClaimCheckStorage(uri, raw_value=options["claim-check-raw-value"]) if uri else None

    def decode(self, message: Message) -> list[Event]:
        if message.is_tombstone:
            return []
        assert message.value is not None
        if len(message.value) > self.max_bytes:
            raise LimitExceededError(
                f"{PROTOCOL}: message {message.coordinates} has {len(message.value)} bytes, "
                f"over max-message-bytes {self.max_bytes}"
            )
        try:
            return self._decode(message)
        except DecodeError as exc:
            raise exc.located(message) from exc.__cause__
        except RecursionError as exc:
            raise DecodeError.at(message, PROTOCOL, "value nested too deeply") from exc

    # ------------------------------------------------------------------------------------------- shape

    def _inflate(self, value: bytes) -> bytes:
        """The value as the producer wrote it before ``large-message-handle-compression`` (bounded)."""
        return decompress(self.compression, value, protocol=PROTOCOL, max_bytes=self.max_decompressed)

    def _decode(self, message: Message) -> list[Event]:
        assert message.value is not None
        source = Source.of(message)
        value = self._inflate(message.value)
        try:
            document = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            if b"\n" not in value:
                raise _fail(f"not a JSON document: {exc}") from exc
            return self._batch(value, source)
        if not isinstance(document, dict):
            raise _fail(f"expected a JSON object, got {type(document).__name__}")
        return self.decode_document(document, source)

    def _batch(self, value: bytes, source: Source) -> list[Event]:
        """Several messages joined by a line terminator (TiCDC's storage sink writes CRLF between them).

        JSON strings never hold a raw newline, so splitting on it cannot cut a message in two.
        """
        events: list[Event] = []
        for number, raw_line in enumerate(value.split(b"\n")):
            line = raw_line.strip()
            if not line:
                continue
            try:
                document = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise _fail(f"line {number + 1} is not a JSON document: {exc}") from exc
            if not isinstance(document, dict):
                raise _fail(f"line {number + 1}: expected a JSON object, got {type(document).__name__}")
            events.extend(self.decode_document(document, source))
        return events

    def decode_document(self, doc: dict[str, Any], source: Source | None = None) -> list[Event]:
        """Events of one already-parsed flat message."""
        kind = doc.get("type")
        if not isinstance(kind, str):
            raise _fail("missing or non-string type", "type")
        is_ddl = doc.get("isDdl", False)
        if not isinstance(is_ddl, bool):
            raise _fail(f"isDdl must be a boolean, got {type(is_ddl).__name__}", "isDdl")
        tidb = doc.get("_tidb")
        if tidb is not None and not isinstance(tidb, dict):
            raise _fail("_tidb must be an object", "_tidb")
        if is_ddl:
            return self._ddl(doc, kind, tidb, source)
        if kind == WATERMARK_TYPE:
            watermark = _ts(tidb, "watermarkTs")
            if watermark is None:
                raise _fail("a TIDB_WATERMARK message needs _tidb.watermarkTs", "_tidb.watermarkTs")
            return [Watermark(ts=watermark, source=source)]
        if kind in DML_TYPES or kind == INIT_TYPE:
            location = tidb.get("claimCheckLocation") if tidb is not None else None
            if isinstance(location, str) and self.claims is not None:
                return self._claimed(location, source)
            return self._rows(doc, kind, tidb, source)
        if kind in ROWLESS_TYPES:
            return []
        if kind == ROWS_QUERY_TYPE:
            # QUERY with isDdl false is a rows-query event (MariaDB's annotate_rows, MySQL's
            # binlog_rows_query_log_events: the text of the DML whose row messages follow, no change itself), or,
            # from Canal before 1.1.5, a DDL its parser did not classify (CREATE DATABASE, DROP DATABASE, CREATE
            # VIEW...), which those versions marked isDdl false: the statement's first word tells them apart
            sql = doc.get("sql")
            if not isinstance(sql, str) or first_keyword(sql) in ROWS_QUERY_KEYWORDS:
                return []
            return self._ddl(doc, kind, tidb, source)
        if kind in DDL_TYPES:
            raise _fail(f"type {kind} is a DDL type but isDdl is false", "isDdl")
        raise _fail(f"unknown event type {kind!r}", "type")

    def _claimed(self, location: str, source: Source | None) -> list[Event]:
        """The full row events of a claim-check message, read from the configured storage root."""
        assert self.claims is not None
        _, stored = self.claims.read(location)  # StorageError names the file; the location's base name only
        value = self._inflate(stored)
        try:
            full = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            raise _fail(str(exc), "_tidb.claimCheckLocation") from exc
        if not isinstance(full, dict) or full.get("type") not in DML_TYPES:
            raise _fail("claim-check file does not hold a row message", "_tidb.claimCheckLocation")
        tidb = full.get("_tidb")
        if isinstance(tidb, dict) and "claimCheckLocation" in tidb:
            raise _fail("claim-check file refers to another claim-check file", "_tidb.claimCheckLocation")
        events = self.decode_document(full, source)
        return [attrs.evolve(e, claim_check_location=location) for e in events if isinstance(e, RowChange)]

    def _names(self, doc: Mapping[str, Any], *, allow_empty_table: bool) -> tuple[str, str]:
        database = doc.get("database")
        table = doc.get("table")
        if not isinstance(database, str):
            raise _fail("missing or non-string database", "database")
        if not isinstance(table, str) or (not table and not allow_empty_table):
            raise _fail("missing or empty table", "table")
        return database, table

    def _wanted(self, database: str, table: str) -> bool:
        if self.database_filter is not None and not self.database_filter.fullmatch(database):
            return False
        return self.table_filter is None or not table or bool(self.table_filter.fullmatch(table))

    # --------------------------------------------------------------------------------------------- ddl

    def _ddl(
        self, doc: Mapping[str, Any], kind: str, tidb: Mapping[str, Any] | None, source: Source | None
    ) -> list[Event]:
        ddl_type = DDL_TYPES.get(kind)
        if ddl_type is None:
            raise _fail(f"unknown DDL type {kind!r}", "type")
        database, table = self._names(doc, allow_empty_table=True)
        if not self._wanted(database, table):
            return []
        sql = doc.get("sql")
        if not isinstance(sql, str):
            raise _fail("DDL without sql text", "sql")
        return [
            DDLEvent(
                ddl_type=ddl_type,
                sql=sql,
                database=database or None,
                table=table or None,
                commit_ts=_ts(tidb, "commitTs"),
                source=source,
                meta=_times(doc),
            )
        ]

    # -------------------------------------------------------------------------------------------- rows

    def _rows(
        self, doc: Mapping[str, Any], kind: str, tidb: Mapping[str, Any] | None, source: Source | None
    ) -> list[Event]:
        database, table = self._names(doc, allow_empty_table=False)
        if not self._wanted(database, table):
            return []
        op = _OPS[kind]
        # Canal 1.1.0-1.1.2 wrote no pkNames (the field came in 1.1.3): no key is known, as with null
        pk_names = doc.get("pkNames")
        if pk_names is None:
            pk_names = []
        if not isinstance(pk_names, list) or not all(isinstance(n, str) for n in pk_names):
            raise _fail("pkNames must be a list of column names", "pkNames")
        pk_names = list(dict.fromkeys(pk_names))  # Canal repeats the names on multi-row messages
        data = doc.get("data")
        if not isinstance(data, list) or not data:
            raise _fail("data must be a non-empty list of rows", "data")
        old = doc.get("old")
        if op is Op.UPDATE and (not isinstance(old, list) or len(old) != len(data)):
            raise _fail(f"UPDATE needs old as a list of {len(data)} row(s)", "old")
        mysql_types = _object_or_empty(doc, "mysqlType")
        sql_types = _object_or_empty(doc, "sqlType")
        commit_ts = _ts(tidb, "commitTs")
        handle_key_only = False
        claim_check: str | None = None
        if tidb is not None:
            only = tidb.get("onlyHandleKey", False)
            if not isinstance(only, bool):
                raise _fail("onlyHandleKey must be a boolean", "_tidb.onlyHandleKey")
            location = tidb.get("claimCheckLocation")
            if location is not None and not isinstance(location, str):
                raise _fail("claimCheckLocation must be a string", "_tidb.claimCheckLocation")
            claim_check = location
            handle_key_only = only or location is not None
        meta = _times(doc)
        events: list[Event] = []
        schema: TableSchema | None = None
        for i, row in enumerate(data):
            if not isinstance(row, dict):
                raise _fail("row must be an object", f"data[{i}]")
            columns, schema = self._table(
                database, table, row, mysql_types=mysql_types, sql_types=sql_types, pk_names=pk_names
            )
            image = _parse_row(row, columns, f"data[{i}]")
            before: dict[str, Value] | None = None
            after: dict[str, Value] | None = None
            changed: tuple[str, ...] | None = None
            if op is Op.UPDATE:
                old_row = old[i]  # type: ignore[index]
                if not isinstance(old_row, dict):
                    raise _fail("old row must be an object", f"old[{i}]")
                before, changed = _before(old_row, row, image, columns, f"old[{i}]")
                after = image
            elif op is Op.DELETE:
                before = image
            else:
                after = image
            events.append(
                RowChange(
                    op=op,
                    database=database,
                    table=table,
                    before=before,
                    after=after,
                    commit_ts=commit_ts,
                    schema=schema,
                    changed_columns=changed,
                    handle_key_only=handle_key_only,
                    claim_check_location=claim_check,
                    source=source,
                    meta=meta if kind != INIT_TYPE else {**meta, "canal_type": INIT_TYPE},
                )
            )
        return events

    def _table(
        self,
        database: str,
        table: str,
        row: Mapping[str, Any],
        *,
        mysql_types: Mapping[str, Any],
        sql_types: Mapping[str, Any],
        pk_names: list[str],
    ) -> tuple[dict[str, tuple[DataType, Parser]], TableSchema]:
        """Column parsers and the synthesized schema, cached per distinct (table, columns, types, keys)."""
        try:
            key = (
                database,
                table,
                tuple(row),
                tuple([mysql_types.get(name) for name in row]),
                tuple([sql_types.get(name) for name in row]),
                tuple(pk_names),
            )
            cached = self._tables.get(key)
        except TypeError:  # a list or object where a type belongs: resolved (and rejected) below
            key, cached = None, None
        if cached is not None:
            return cached
        columns = self._columns(row, mysql_types, sql_types)
        entry = (columns, _schema(database, table, columns, pk_names))
        if key is not None:
            if len(self._tables) >= _MAX_CACHED_TABLES:
                self._tables.clear()
            self._tables[key] = entry
        return entry

    def _columns(
        self, row: Mapping[str, Any], mysql_types: Mapping[str, Any], sql_types: Mapping[str, Any]
    ) -> dict[str, tuple[DataType, Parser]]:
        columns: dict[str, tuple[DataType, Parser]] = {}
        for name in row:
            try:
                columns[name] = self.types.lookup(mysql_types.get(name), sql_types.get(name))
            except TypeResolutionError as exc:
                raise _fail(str(exc), f"mysqlType.{name}") from exc
        return columns


def _before(
    old_row: Mapping[str, Any],
    new_row: Mapping[str, Any],
    after: Mapping[str, Value],
    columns: Mapping[str, tuple[DataType, Parser]],
    where: str,
) -> tuple[dict[str, Value], tuple[str, ...] | None]:
    unknown = [name for name in old_row if name not in columns]
    if unknown:
        raise _fail(f"old names columns missing from data: {unknown}", where)
    # A column whose old text equals its new text has the same value: reuse it instead of parsing again
    # (most columns of a full TiCDC old image). JSON documents are mutable, so they are parsed afresh.
    to_parse = {
        name: columns[name]
        for name, text in old_row.items()
        if text != new_row[name] or columns[name][0].logical is LogicalType.JSON
    }
    parsed = _parse_row(old_row, to_parse, where)
    before = {name: parsed[name] if name in parsed else after[name] for name in columns}
    if len(old_row) == len(columns):
        return before, None  # TiCDC's full old image: the protocol does not say what changed
    # Partial old (official Canal, only-output-updated-columns): exactly these columns changed.
    return before, tuple(name for name in columns if name in old_row)


def _parse_row(row: Mapping[str, Any], columns: Mapping[str, tuple[DataType, Parser]], where: str) -> dict[str, Value]:
    image: dict[str, Value] = {}
    for name, (data_type, parse) in columns.items():
        text = row[name]
        if text is None:
            image[name] = None
            continue
        if not isinstance(text, str):
            raise _fail(f"value must be a string or null, got {type(text).__name__}", f"{where}.{name}")
        try:
            image[name] = parse(text)
        except (ValueError, ArithmeticError) as exc:  # TextFormError, and anything a value parser lets through
            raise _fail(f"{data_type.type_text()}: {exc}", f"{where}.{name}") from exc
    return image


def _schema(
    database: str, table: str, columns: Mapping[str, tuple[DataType, Parser]], pk_names: list[str]
) -> TableSchema:
    indexes = []
    if pk_names and all(name in columns for name in pk_names):
        indexes.append(Index(name="PRIMARY", columns=pk_names, unique=True, primary=True))
    return TableSchema(
        database=database,
        table=table,
        columns=[
            Column(name=name, data_type=data_type, nullable=name not in pk_names)
            for name, (data_type, _) in columns.items()
        ],
        indexes=indexes,
    )


def _object_or_empty(doc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(f"{key} must be an object or null", key)
    return value


def _ts(tidb: Mapping[str, Any] | None, key: str) -> int | None:
    value = None if tidb is None else tidb.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _MAX_TS:
        raise _fail(f"{key} must be an unsigned 64-bit integer, got {value!r}", f"_tidb.{key}")
    return value


# the statements a rows-query event carries: DML (a statement-based binlog's DML comes the same way)
ROWS_QUERY_KEYWORDS: Final = frozenset(
    {"", "INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "CALL", "DO", "SELECT", "WITH"}
)


def _times(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``es`` (event time) and ``ts`` (write time), epoch ms, kept as metadata when they are integers."""
    meta: dict[str, Any] = {}
    for key in ("es", "ts"):
        value = doc.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            meta[key] = value
    return meta
