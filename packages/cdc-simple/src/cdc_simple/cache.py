"""The consumer-side schema lifecycle: schemas by (database, table, version), and rows held until theirs arrive.

Simple DML messages carry no types. A consumer that starts in the middle of a topic sees rows before the
BOOTSTRAP or DDL message that describes their schema version; those rows are held, in arrival order, and
released as soon as the schema is known. Rows of one table stay in order: once a row of a table is held, later
rows of that table are held behind it even if their own version is known. The hold is bounded (rows and bytes).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterator
from typing import Any, Final, TypeAlias

import attrs

from cdc_core.limits import Limits
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_simple.names import PROTOCOL

SchemaKey: TypeAlias = tuple[str, str, int]
TableKey: TypeAlias = tuple[str, str]

MAX_SCHEMAS: Final = 100_000  # distinct (database, table, version) entries kept; oldest dropped past this


class SchemaCache:
    """(database, table, version) -> TableSchema; the first schema stored under a key wins (as in TiCDC)."""

    def __init__(self, max_entries: int = MAX_SCHEMAS) -> None:
        self._schemas: dict[SchemaKey, TableSchema] = {}
        self.max_entries = max_entries

    @staticmethod
    def key_of(schema: TableSchema) -> SchemaKey:
        return (schema.database, schema.table, schema.version or 0)

    def add(self, schema: TableSchema) -> bool:
        """Store ``schema``; True when its key was new."""
        key = self.key_of(schema)
        if key in self._schemas:
            return False
        if len(self._schemas) >= self.max_entries:
            del self._schemas[next(iter(self._schemas))]
        self._schemas[key] = schema
        return True

    def get(self, key: SchemaKey) -> TableSchema | None:
        return self._schemas.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._schemas

    def __len__(self) -> int:
        return len(self._schemas)

    def keys(self) -> list[SchemaKey]:
        return list(self._schemas)


@attrs.frozen(kw_only=True)
class HeldRow:
    """A parsed DML message waiting for its schema."""

    key: SchemaKey
    document: dict[str, Any]
    message: Message
    size: int
    claim_check_location: str | None = None


@attrs.frozen(kw_only=True)
class HeldSummary:
    """What a decoder holds: totals and rows per (database, table, version)."""

    rows: int
    bytes: int
    by_schema: dict[SchemaKey, int]


class HeldRows:
    """Rows waiting for their schema, in arrival order, bounded by ``limits.max_held_rows``/``max_held_bytes``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._rows: deque[HeldRow] = deque()
        self._tables: Counter[TableKey] = Counter()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[HeldRow]:
        return iter(self._rows)

    def blocks(self, table: TableKey) -> bool:
        """True while a row of ``table`` is held (a later row of it must wait behind it)."""
        return self._tables[table] > 0

    def hold(self, row: HeldRow) -> None:
        """Hold one more row; HeldRowsLimitError (and nothing held) when that would pass the bound."""
        self.limits.check_held(len(self._rows) + 1, self.bytes + row.size, protocol=PROTOCOL)
        self._rows.append(row)
        self._tables[row.key[:2]] += 1
        self.bytes += row.size

    def release(self, cache: SchemaCache) -> list[tuple[HeldRow, TableSchema]]:
        """Rows whose schema is now cached, in order; a table's rows stop at its first still-unknown one."""
        released: list[tuple[HeldRow, TableSchema]] = []
        kept: deque[HeldRow] = deque()
        stuck: set[TableKey] = set()
        for row in self._rows:
            table = row.key[:2]
            schema = None if table in stuck else cache.get(row.key)
            if schema is None:
                stuck.add(table)
                kept.append(row)
                continue
            released.append((row, schema))
            self._tables[table] -= 1
            self.bytes -= row.size
        self._rows = kept
        self._tables = +self._tables
        return released

    def requeue(self, rows: list[HeldRow]) -> None:
        """Put released rows back at the front, in order (their release was interrupted by an error)."""
        for row in reversed(rows):
            self._rows.appendleft(row)
            self._tables[row.key[:2]] += 1
            self.bytes += row.size

    def summary(self) -> HeldSummary:
        return HeldSummary(
            rows=len(self._rows), bytes=self.bytes, by_schema=dict(Counter(row.key for row in self._rows))
        )
