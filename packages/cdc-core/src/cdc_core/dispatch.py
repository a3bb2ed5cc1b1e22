"""Partition selection as TiCDC's Kafka sink does it, so that encoders place messages where TiCDC would.

The hash is TiCDC's "position inertia": XOR of CRC-32 (IEEE) over the concatenated bytes of each write, modulo
the partition count. Rules (``dispatchers.partition``): ``default``/``table`` hash the schema and table names;
``ts`` takes the commit ts; ``index-value`` (alias ``rowid``) also hashes each handle-key column's name and value
text; ``columns`` hashes the listed columns instead. Unknown rules fall back to ``table``, as TiCDC's Kafka sink.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Sequence
from decimal import Decimal
from typing import Final

from cdc_core.errors import ConfigError, EncodeError
from cdc_core.events import RowChange
from cdc_core.textual import format_float64
from cdc_core.values import Value

RULES: Final = ("default", "table", "ts", "index-value", "rowid", "columns")


class PositionInertia:
    """TiCDC's hash: each write XORs the CRC-32 of its concatenated arguments into the state."""

    def __init__(self) -> None:
        self.value = 0

    def write(self, *parts: bytes) -> None:
        self.value ^= zlib.crc32(b"".join(parts))

    def partition(self, partitions: int) -> int:
        return self.value % partitions


def value_text(value: Value) -> str | None:
    """TiDB's ColumnValueString: integers in decimal, floats shortest 'f', text and bytes raw; None for NULL."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | Decimal | str):
        return str(value)
    if isinstance(value, float):
        return format_float64(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def _row_columns(event: RowChange, names: Sequence[str]) -> list[tuple[str, str | None]]:
    image = event.after if event.after is not None else event.before
    if image is None:
        raise EncodeError("dispatch", "a row event without images has no values to hash", table=event.table)
    return [(name, value_text(image.get(name))) for name in names]


def partition_for_row(
    event: RowChange, partitions: int, rule: str = "default", *, columns: Sequence[str] | None = None
) -> int:
    """The partition TiCDC's Kafka sink sends ``event`` to."""
    if partitions <= 0:
        raise ConfigError(f"partition count must be positive, got {partitions}")
    hasher = PositionInertia()
    if rule == "ts":
        if event.commit_ts is None:
            raise EncodeError("dispatch", "rule ts needs the commit ts", table=event.table)
        return event.commit_ts % partitions
    hasher.write(event.database.encode(), event.table.encode())
    if rule in ("index-value", "rowid", "columns"):
        if rule == "columns":
            if not columns:
                raise ConfigError("dispatch rule columns needs the column names")
            names: Sequence[str] = columns
        else:
            names = event.schema.handle_key if event.schema is not None else ()
            if not names:
                raise EncodeError("dispatch", "rule index-value needs the table's handle key", table=event.table)
        for name, text in _row_columns(event, names):
            if text is not None:  # NULL is skipped (new TiCDC); tiflow hashed the text "null"
                hasher.write(name.encode(), text.encode())
    return hasher.partition(partitions)


def partition_for_table(database: str, table: str, partitions: int) -> int:
    """The ``table`` rule alone (DDL topics, Simple bootstrap placement)."""
    hasher = PositionInertia()
    hasher.write(database.encode(), table.encode())
    return hasher.partition(partitions)
