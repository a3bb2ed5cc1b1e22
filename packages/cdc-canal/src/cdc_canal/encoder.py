"""Typed events to Canal-JSON exactly as TiCDC writes it (or in official Canal's flavour)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from typing import Any

import attrs

from cdc_canal.names import PROTOCOL, WATERMARK_TYPE, sql_type_code
from cdc_canal.outbound import Formatter, make_formatter, mysql_type_text
from cdc_core.claimcheck import ClaimCheckStorage
from cdc_core.codec import Options
from cdc_core.compression import compress, parse_compression
from cdc_core.errors import ConfigError, EncodeError, LimitExceededError
from cdc_core.events import Bootstrap, DDLEvent, Event, LogicalMessage, Op, RowChange, Watermark
from cdc_core.fitting import FITTED, ChangeNotice, change_to_fit, notice_for
from cdc_core.gojson import EASYJSON
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.textual import resolve_zone
from cdc_core.tso import physical_ms
from cdc_core.types import DataType, MySQLType
from cdc_core.values import RowImage


@attrs.frozen
class _ColumnCodec:
    name: str
    format: Formatter
    mysql_type: MySQLType
    unsigned: bool
    data_type: DataType
    notice: ChangeNotice  # told of a value rounded or cut to the column's known scale or fsp
    checked: bool  # whether values can be (DECIMAL, temporal types with a known parameter)


@attrs.frozen
class _Layout:
    """How one table schema is written: column codecs, pkNames and the mysqlType object."""

    schema: TableSchema
    columns: tuple[_ColumnCodec, ...]
    pk_names: list[str]
    mysql_types: dict[str, str]


RECORD_OVERHEAD = 36  # sarama's per-record overhead TiCDC adds to key and value before comparing with the limit


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class CanalEncoder:
    """``clock`` gives the ``ts`` field (encode time, epoch ms); tests fix it to compare bytes.

    Flavour ``ticdc`` writes what TiCDC writes under the given options. Flavour ``canal`` writes official
    Canal's flat message: full ``mysqlType`` definitions, only changed columns in ``old``, ENUM/SET as
    member names, no ``_tidb``.
    """

    def __init__(self, options: Options, *, clock: Callable[[], int] = _wall_clock_ms) -> None:
        self.canal_flavour = options["flavour"] == "canal"
        self.extension = options["enable-tidb-extension"] and not self.canal_flavour
        self.content_compatible = options["content-compatible"] or self.canal_flavour
        self.only_updated = options["only-output-updated-columns"] or self.content_compatible
        self.delete_handle_only = options["delete-only-output-handle-key-columns"]
        self.partitions: int = options["partition-num"]
        if self.partitions < 1:
            raise ConfigError(f"{PROTOCOL}: option partition-num must be at least 1, got {self.partitions}")
        self.zone = resolve_zone(options["time-zone"])
        self.max_message_bytes: int = options["max-message-bytes"]
        self.large_option: str = options["large-message-handle-option"]
        self.compression = parse_compression(options["large-message-handle-compression"])
        claim_uri: str = options["claim-check-storage-uri"]
        self.claims: ClaimCheckStorage | None = None
        if self.large_option != "none" and not self.extension:
            raise ConfigError(f"{PROTOCOL}: large-message-handle-option needs enable-tidb-extension (flavour ticdc)")
        if self.large_option == "claim-check":
            if not claim_uri:
                raise ConfigError(f"{PROTOCOL}: large-message-handle-option=claim-check needs claim-check-storage-uri")
            self.claims = ClaimCheckStorage(claim_uri, raw_value=options["claim-check-raw-value"])
        self.clock = clock
        self._layouts: dict[tuple[int, bool], _Layout] = {}

    def encode(self, event: Event) -> list[Message]:
        if isinstance(event, RowChange):
            return [self._row(event)]
        if isinstance(event, DDLEvent):
            return [self._ddl(event)]
        if isinstance(event, Watermark):
            return self._watermark(event)
        if isinstance(event, Bootstrap):
            return []  # Canal-JSON has no schema announcements
        if isinstance(event, LogicalMessage):
            raise EncodeError(PROTOCOL, "Canal-JSON has no logical-decoding message")
        raise EncodeError(PROTOCOL, f"unsupported event {type(event).__name__}")

    # -------------------------------------------------------------------------------------------- rows

    def _row(self, event: RowChange) -> Message:
        name = f"{event.database}.{event.table}"
        location = event.claim_check_location
        reduced = event.handle_key_only or location is not None
        value = compress(self.compression, self._row_value(event, reduced=reduced, location=location))
        if len(value) + RECORD_OVERHEAD > self.max_message_bytes and self.large_option != "none":
            if self.large_option == "claim-check":  # the file holds the full message as sent: compressed
                assert self.claims is not None
                location = self.claims.write(None, value)
            value = compress(self.compression, self._row_value(event, reduced=True, location=location))
        if len(value) + RECORD_OVERHEAD > self.max_message_bytes:
            raise LimitExceededError(
                f"{PROTOCOL}: message for {name} has {len(value)} bytes, over max-message-bytes "
                f"{self.max_message_bytes} (large-message-handle-option={self.large_option})"
            )
        return Message(value=value, key=None, partition=self._partition(event))

    def _row_value(self, event: RowChange, *, reduced: bool, location: str | None) -> bytes:
        schema = event.schema
        name = f"{event.database}.{event.table}"
        if schema is None:
            raise EncodeError(PROTOCOL, "a row change needs its table schema (column types)", table=name)
        image = event.before if event.op is Op.DELETE else event.after
        if image is None:
            raise EncodeError(PROTOCOL, f"{event.op.value} without its row image", table=name)
        layout = self._layout(schema, reduced or (event.op is Op.DELETE and self.delete_handle_only), name)
        data_row = self._values(layout, image, name)
        old: list[dict[str, str | None]] | None = None
        if event.op is Op.UPDATE:
            if event.before is None:
                raise EncodeError(PROTOCOL, "update without its before image", table=name)
            old_row = self._values(layout, event.before, name)
            if self.only_updated:
                old_row = {k: v for k, v in old_row.items() if data_row[k] != v}
            old = [old_row]
        document: dict[str, Any] = {
            "id": 0,
            "database": event.database,
            "table": event.table,
            "pkNames": layout.pk_names,
            "isDdl": False,
            "type": event.op.name,
            "es": self._es(event.commit_ts, event.meta),
            "ts": self.clock(),
            "sql": "",
            "sqlType": {c.name: sql_type_code(c.mysql_type, c.unsigned, image[c.name]) for c in layout.columns} or None,
            "mysqlType": layout.mysql_types,
            "old": old,
            "data": [data_row],
        }
        if self.extension:
            tidb: dict[str, Any] = {"commitTs": self._commit_ts(event.commit_ts, name)}
            if location is not None:
                tidb["claimCheckLocation"] = location
            elif reduced:
                tidb["onlyHandleKey"] = True
            document["_tidb"] = tidb
        elif reduced:
            raise EncodeError(PROTOCOL, "handle-key-only and claim-check need enable-tidb-extension", table=name)
        return EASYJSON.dumps(document)

    def _layout(self, schema: TableSchema, key_only: bool, name: str) -> _Layout:
        """Per-schema formatters and type texts, built once (the schema is kept in the entry, so its id is stable)."""
        key = (id(schema), key_only)
        cached = self._layouts.get(key)
        if cached is not None and cached.schema is schema:
            return cached
        columns = schema.stored_columns
        if key_only:
            keys = set(schema.handle_key)
            if not keys:
                raise EncodeError(PROTOCOL, "the table has no handle key to reduce the row to", table=name)
            columns = tuple(c for c in columns if c.name in keys)
        primary = set(schema.primary_key)
        codecs = tuple(
            _ColumnCodec(
                name=c.name,
                format=make_formatter(c.data_type, self.zone, member_names=self.canal_flavour),
                mysql_type=c.data_type.mysql_type,
                unsigned=c.data_type.unsigned,
                data_type=c.data_type,
                notice=notice_for(PROTOCOL, name, c.name),
                checked=c.data_type.logical in FITTED,
            )
            for c in columns
        )
        layout = _Layout(
            schema=schema,
            columns=codecs,
            pk_names=[c.name for c in schema.stored_columns if c.name in primary],
            mysql_types={c.name: mysql_type_text(c.data_type, full=self.content_compatible) for c in columns},
        )
        if len(self._layouts) >= 1024:
            self._layouts.clear()
        self._layouts[key] = layout
        return layout

    def _values(self, layout: _Layout, image: RowImage, name: str) -> dict[str, str | None]:
        row: dict[str, str | None] = {}
        for column in layout.columns:
            try:
                value = image[column.name]
            except KeyError:
                missing = [c.name for c in layout.columns if c.name not in image]
                raise EncodeError(PROTOCOL, f"row image lacks columns {missing}", table=name) from None
            if value is None:
                row[column.name] = None
                continue
            try:
                row[column.name] = column.format(value)
            except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:  # TextFormError included
                raise EncodeError(PROTOCOL, str(exc), table=name, field=column.name) from exc
            if column.checked:
                change = change_to_fit(value, column.data_type)
                if change is not None:
                    column.notice(*change)
        return row

    def _partition(self, event: RowChange) -> int:
        # TiCDC's default dispatcher: CRC-32 of schema and table names, modulo the partition count.
        return zlib.crc32((event.database + event.table).encode()) % self.partitions

    # ------------------------------------------------------------------------------ ddl and watermark

    def _ddl(self, event: DDLEvent) -> Message:
        name = f"{event.database}.{event.table}"
        document: dict[str, Any] = {
            "id": 0,
            "database": event.database or "",
            "table": event.table or "",
            "pkNames": None,
            "isDdl": True,
            "type": event.ddl_type.value,
            "es": self._es(event.commit_ts, event.meta),
            "ts": self.clock(),
            "sql": event.sql or "",
            "sqlType": None,
            "mysqlType": None,
            "data": None,
            "old": None,
        }
        if self.extension:
            document["_tidb"] = {"commitTs": self._commit_ts(event.commit_ts, name)}
        value = compress(self.compression, EASYJSON.dumps(document))
        return Message(value=value, key=None, partition=0)  # DDL goes to partition 0 only

    def _watermark(self, event: Watermark) -> list[Message]:
        if not self.extension:
            return []  # TiCDC sends watermarks only with enable-tidb-extension
        document: dict[str, Any] = {
            "id": 0,
            "database": "",
            "table": "",
            "pkNames": None,
            "isDdl": False,
            "type": WATERMARK_TYPE,
            "es": physical_ms(event.ts),
            "ts": self.clock(),
            "sql": "",
            "sqlType": None,
            "mysqlType": None,
            "data": None,
            "old": None,
            "_tidb": {"watermarkTs": event.ts},
        }
        value = compress(self.compression, EASYJSON.dumps(document))
        return [Message(value=value, key=None, partition=p) for p in range(self.partitions)]

    @staticmethod
    def _es(commit_ts: int | None, meta: dict[str, Any]) -> int:
        if commit_ts is not None:
            return physical_ms(commit_ts)
        es = meta.get("es")
        return es if isinstance(es, int) else 0

    @staticmethod
    def _commit_ts(commit_ts: int | None, name: str) -> int:
        if commit_ts is None:
            raise EncodeError(
                PROTOCOL, "enable-tidb-extension writes _tidb.commitTs but the event has none", table=name
            )
        return commit_ts
