"""The realistic message every codec benchmark measures: one 20-column row of mixed types, as an UPDATE.

Shared so that the per-protocol ratios compare like with like, and one helper for the rate statistic that
codec and baseline both use.
"""

from __future__ import annotations

import datetime as dt
import timeit
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from cdc_core.events import Op, RowChange
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text

COLUMNS = {
    "id": "bigint(20)",
    "name": "varchar(64)",
    "email": "varchar(128)",
    "age": "tinyint(3) unsigned",
    "balance": "decimal(12,2)",
    "score": "double",
    "ratio": "float",
    "created_at": "datetime(3)",
    "updated_at": "timestamp(6)",
    "birthday": "date",
    "active": "tinyint(1)",
    "status": "enum('new','active','closed')",
    "tags": "set('a','b','c')",
    "payload": "json",
    "avatar": "varbinary(64)",
    "note": "text",
    "counter": "int(10) unsigned",
    "big": "bigint(20) unsigned",
    "duration": "time(3)",
    "born_year": "year(4)",
}
SCHEMA = TableSchema(
    database="shop",
    table="customers",
    columns=[Column(name=n, data_type=parse_type_text(t), nullable=n != "id") for n, t in COLUMNS.items()],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    table_id=88,
    version=compose(1_709_000_000_000),
)
ROW: dict[str, Any] = {
    "id": 123456789,
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "age": 36,
    "balance": Decimal("10450.25"),
    "score": 98.125,
    "ratio": 0.5,
    "created_at": dt.datetime(2024, 3, 1, 12, 30, 45, 123000),
    "updated_at": dt.datetime(2024, 3, 2, 8, 0, 0, 654321, tzinfo=dt.UTC),
    "birthday": dt.date(1815, 12, 10),
    "active": 1,
    "status": "active",
    "tags": ("a", "c"),
    "payload": {"plan": "gold", "limits": [10, 20], "beta": True},
    "avatar": bytes(range(32)),
    "note": "prefers analytical engines",
    "counter": 4000000000,
    "big": 18446744073709551615,
    "duration": dt.timedelta(hours=1, minutes=2, seconds=3, milliseconds=456),
    "born_year": 2024,
}
EVENT = RowChange(
    op=Op.UPDATE,
    database="shop",
    table="customers",
    before={**ROW, "counter": 1},
    after=ROW,
    commit_ts=compose(1_709_280_000_000),
    table_id=88,
    schema_version=SCHEMA.version,
    schema=SCHEMA,
)


def rate(function: Callable[..., Any], *arguments: Any, number: int = 2000) -> float:
    """Calls per second, best of 5 repeats: the same statistic for codec and baseline."""
    best = min(timeit.repeat(lambda: function(*arguments), number=number, repeat=5))
    return number / best
