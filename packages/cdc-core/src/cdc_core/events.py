"""The typed change events every decoder produces and every encoder consumes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeAlias

import attrs

from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.values import RowImage


class Op(StrEnum):
    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


class DDLType(StrEnum):
    """TiCDC's DDL classes (Simple ``type``, Canal ``type`` for DDL); TRUNCATE also covers Debezium ``op: t``."""

    CREATE = "CREATE"
    ALTER = "ALTER"
    ERASE = "ERASE"
    RENAME = "RENAME"
    TRUNCATE = "TRUNCATE"
    CINDEX = "CINDEX"
    DINDEX = "DINDEX"
    QUERY = "QUERY"


@attrs.frozen(kw_only=True)
class Source:
    """Where an event was read from (all None for events not read from Kafka)."""

    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    timestamp: int | None = None  # Kafka record timestamp, epoch ms

    @classmethod
    def of(cls, message: Message) -> Source:
        return cls(topic=message.topic, partition=message.partition, offset=message.offset, timestamp=message.timestamp)


def _meta(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return {} if value is None else dict(value)


def _names(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen(kw_only=True)
class RowChange:
    """An inserted, updated or deleted row.

    ``before``/``after`` are row images keyed by column name in column order (None where the protocol has
    no such image). ``changed_columns`` lists the columns an update really changed when the protocol says
    so (Canal's partial ``old``). ``handle_key_only`` marks images reduced to the handle key (large-message
    handling); ``claim_check_location`` is set when the full message lives in external storage.
    ``meta`` holds protocol metadata that has no common field (e.g. Debezium's binlog file/pos/gtid).
    """

    op: Op = attrs.field(converter=Op)
    database: str
    table: str
    before: RowImage | None = None
    after: RowImage | None = None
    commit_ts: int | None = None
    table_id: int | None = None
    schema_version: int | None = None
    schema: TableSchema | None = attrs.field(default=None, eq=False)
    changed_columns: tuple[str, ...] | None = attrs.field(default=None, converter=_names)
    handle_key_only: bool = False
    claim_check_location: str | None = None
    source: Source | None = attrs.field(default=None, eq=False)
    meta: dict[str, Any] = attrs.field(factory=dict, converter=_meta, eq=False)

    kind = "row"

    @property
    def image(self) -> RowImage:
        """The row as it is after the change (the deleted row for deletes)."""
        image = self.before if self.op is Op.DELETE else self.after
        return image if image is not None else {}


@attrs.frozen(kw_only=True)
class DDLEvent:
    """A schema change. ``table_schema`` is the table after it, ``pre_table_schema`` before (when known)."""

    ddl_type: DDLType = attrs.field(converter=DDLType)
    sql: str | None
    database: str | None = None
    table: str | None = None
    commit_ts: int | None = None
    table_schema: TableSchema | None = None
    pre_table_schema: TableSchema | None = None
    source: Source | None = attrs.field(default=None, eq=False)
    meta: dict[str, Any] = attrs.field(factory=dict, converter=_meta, eq=False)

    kind = "ddl"


@attrs.frozen(kw_only=True)
class Watermark:
    """Every change with commit ts <= ``ts`` has been written to this partition (TiCDC resolved ts)."""

    ts: int
    source: Source | None = attrs.field(default=None, eq=False)

    kind = "watermark"


@attrs.frozen(kw_only=True)
class Bootstrap:
    """A table schema announced for consumers that start mid-stream (Simple); never a DDL to execute."""

    table_schema: TableSchema
    source: Source | None = attrs.field(default=None, eq=False)

    kind = "bootstrap"

    @property
    def database(self) -> str:
        return self.table_schema.database

    @property
    def table(self) -> str:
        return self.table_schema.table


@attrs.frozen(kw_only=True)
class LogicalMessage:
    """An application message written into the database log, outside any table (PostgreSQL's
    ``pg_logical_emit_message``, read by Debezium as ``op: m`` with ``message.prefix``/``message.content``).

    Not a row change and not a watermark: appliers skip it; ``transactional`` says whether it was emitted
    inside a transaction (None when the protocol does not say).
    """

    prefix: str
    content: bytes
    database: str | None = None
    transactional: bool | None = None
    commit_ts: int | None = None
    source: Source | None = attrs.field(default=None, eq=False)
    meta: dict[str, Any] = attrs.field(factory=dict, converter=_meta, eq=False)

    kind = "message"


Event: TypeAlias = RowChange | DDLEvent | Watermark | Bootstrap | LogicalMessage
