"""A realistic generated changefeed and the source state it must produce (for the demo and end-to-end tests).

A small shop database (customers, orders, order items with a composite key) receives inserts, updates and
deletes in transactions with increasing TiDB commit timestamps, and one ``ALTER TABLE ... ADD COLUMN`` half way.
:func:`generate` returns the events in commit order together with the final rows per table, which is what the
target tables must equal after the pipeline has applied the changefeed, however it was delivered.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, Final

import attrs

from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text

DATABASE = "shop"


def _columns(spec: Sequence[tuple[str, str, bool]]) -> list[Column]:
    return [Column(name=n, data_type=parse_type_text(t), nullable=nullable) for n, t, nullable in spec]


def _primary(*names: str) -> Index:
    return Index(name="PRIMARY", columns=names, unique=True, primary=True)


CUSTOMER_COLUMNS = (
    ("id", "int", False),
    ("name", "varchar(64)", False),
    ("email", "varchar(128)", True),
    ("balance", "decimal(12,2)", True),
    ("points", "bigint", True),
    ("lifetime", "bigint unsigned", True),
    ("score", "double", True),
    ("vip", "tinyint", True),
    ("birthday", "date", True),
    ("signed_up", "datetime(3)", True),
    ("last_seen", "timestamp(6)", True),
    ("tier", "enum('bronze','silver','gold')", True),
    ("profile", "json", True),
    ("avatar", "blob", True),
    ("since_year", "year", True),
)
ORDER_COLUMNS = (
    ("order_id", "bigint", False),
    ("customer_id", "int", False),
    ("amount", "decimal(10,2)", False),
    ("status", "varchar(16)", False),
    ("note", "text", True),
    ("placed_at", "datetime", False),
)
ITEM_COLUMNS = (
    ("order_id", "bigint", False),
    ("sku", "varchar(32)", False),
    ("quantity", "smallint", False),
    ("unit_price", "decimal(8,2)", False),
)


# The TiDB schema version (a TSO) the tables have when the changefeed starts; a DDL moves its table to its own ts.
INITIAL_VERSION: Final = 449_000_000_000_000_000


def schemas(with_loyalty: bool = False, loyalty_version: int = INITIAL_VERSION + 1) -> dict[str, TableSchema]:
    customers = _columns(CUSTOMER_COLUMNS) + (_columns([("loyalty", "int", True)]) if with_loyalty else [])
    return {
        "customers": TableSchema(
            database=DATABASE,
            table="customers",
            columns=customers,
            indexes=[_primary("id")],
            table_id=101,
            version=loyalty_version if with_loyalty else INITIAL_VERSION,
        ),
        "orders": TableSchema(
            database=DATABASE,
            table="orders",
            columns=_columns(ORDER_COLUMNS),
            indexes=[_primary("order_id")],
            table_id=102,
            version=INITIAL_VERSION,
        ),
        "items": TableSchema(
            database=DATABASE,
            table="items",
            columns=_columns(ITEM_COLUMNS),
            indexes=[_primary("order_id", "sku")],
            table_id=103,
            version=INITIAL_VERSION,
        ),
    }


@attrs.frozen
class Changefeed:
    events: list[Event]
    state: dict[str, dict[tuple[Any, ...], dict[str, Any]]]  # table -> key -> row
    final_schemas: dict[str, TableSchema]

    @property
    def row_changes(self) -> int:
        return sum(1 for e in self.events if isinstance(e, RowChange))


def _customer(rng: random.Random, key: int, loyalty: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": key,
        "name": rng.choice(["Ana", "Bo", "Chen", "Dara", "Eli", "Fay"]) + f" {key}",
        "email": None if rng.random() < 0.2 else f"user{key}@example.com",
        "balance": Decimal(rng.randrange(-10_000, 10**8)) / 100,
        "points": rng.randrange(-(2**40), 2**40),
        "lifetime": rng.randrange(2**64),
        "score": round(rng.uniform(-1e6, 1e6), 6),
        "vip": rng.choice([0, 1, None]),
        "birthday": dt.date(1950, 1, 1) + dt.timedelta(days=rng.randrange(20_000)),
        "signed_up": dt.datetime(2020, 1, 1) + dt.timedelta(milliseconds=rng.randrange(10**11)),
        "last_seen": dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=rng.randrange(10**13)),
        "tier": rng.choice(["bronze", "silver", "gold"]),
        "profile": {"lang": rng.choice(["en", "zh", "es"]), "tags": rng.sample(["a", "b", "c", "d"], 2)},
        "avatar": None if rng.random() < 0.3 else rng.randbytes(rng.randrange(1, 24)),
        "since_year": rng.randrange(1990, 2026),
    }
    if loyalty:
        row["loyalty"] = rng.randrange(1000)
    return row


def generate(seed: int = 1, transactions: int = 120, start: dt.datetime | None = None) -> Changefeed:
    """Transactions of 1-4 row changes (one per key) over three tables, an ADD COLUMN after half of them."""
    rng = random.Random(seed)
    moment = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    current = schemas()
    state: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {name: {} for name in current}
    events: list[Event] = []
    next_order = 1000
    loyalty = False
    for number in range(transactions):
        moment += dt.timedelta(milliseconds=rng.randrange(1, 50))
        ts = compose(int(moment.timestamp() * 1000), number % 7)
        if number == transactions // 2:
            loyalty = True
            before, current = current["customers"], schemas(with_loyalty=True, loyalty_version=ts)
            events.append(
                DDLEvent(
                    ddl_type=DDLType.ALTER,
                    sql="ALTER TABLE `shop`.`customers` ADD COLUMN `loyalty` INT NULL",
                    database=DATABASE,
                    table="customers",
                    commit_ts=ts,
                    table_schema=current["customers"],
                    pre_table_schema=before,
                )
            )
            continue
        touched: set[tuple[str, tuple[Any, ...]]] = set()
        for _ in range(rng.randrange(1, 5)):
            table = rng.choice(["customers", "customers", "orders", "items"])
            rows = state[table]
            schema = current[table]
            key_names = schema.handle_key
            if table == "customers":
                fresh = _customer(rng, rng.randrange(1, 40), loyalty)
            elif table == "orders":
                next_order += 1
                fresh = {
                    "order_id": next_order if rng.random() < 0.6 else rng.randrange(1001, next_order + 1),
                    "customer_id": rng.randrange(1, 40),
                    "amount": Decimal(rng.randrange(100, 10**7)) / 100,
                    "status": rng.choice(["new", "paid", "shipped", "returned"]),
                    "note": None if rng.random() < 0.5 else "deliver after 6pm, ring twice",
                    "placed_at": moment.replace(tzinfo=None, microsecond=0),
                }
            else:
                fresh = {
                    "order_id": rng.randrange(1001, max(next_order, 1001) + 1),
                    "sku": rng.choice(("A-1", "B-2", "C-3")),
                    "quantity": rng.randrange(1, 100),
                    "unit_price": Decimal(rng.randrange(1, 10**6)) / 100,
                }
            key = tuple(fresh[k] for k in key_names)
            if (table, key) in touched:
                continue  # TiDB commits one net change per key per transaction, and TiCDC sends that one
            touched.add((table, key))
            if key in rows and rng.random() < 0.3:
                events.append(_change(Op.DELETE, schema, ts, before=rows.pop(key)))
            elif key in rows:
                old = rows[key]
                new = {**fresh, **{k: old[k] for k in key_names}}
                rows[key] = new
                events.append(_change(Op.UPDATE, schema, ts, before=old, after=new))
            else:
                rows[key] = fresh
                events.append(_change(Op.INSERT, schema, ts, after=fresh))
    return Changefeed(events=events, state=state, final_schemas=current)


def _change(
    op: Op, schema: TableSchema, ts: int, before: dict[str, Any] | None = None, after: dict[str, Any] | None = None
) -> RowChange:
    names = schema.column_names
    return RowChange(
        op=op,
        database=schema.database,
        table=schema.table,
        before=None if before is None else {n: before.get(n) for n in names},
        after=None if after is None else {n: after.get(n) for n in names},
        commit_ts=ts,
        table_id=schema.table_id,
        schema=schema,
    )


def encode(changefeed: Changefeed, protocol: str, options: dict[str, object] | None = None) -> Iterator[Message]:
    """The changefeed as the protocol's Kafka messages (DDL included where the protocol carries it)."""
    encoder = get_codec(protocol).encoder(options or {})
    for event in changefeed.events:
        yield from encoder.encode(event)


def schema_versions(
    messages: Iterable[Message], protocol: str, options: dict[str, object] | None = None
) -> list[TableSchema]:
    """Every schema the protocol's codec gives the row changes of ``messages``, in order of first appearance: the
    versions a stream's earlier batches would have brought (``known_versions`` of ``cdc_spark.decode``)."""
    decoder = get_codec(protocol).decoder(options or {})
    found = {e.schema: None for m in messages for e in decoder.decode(m) if isinstance(e, RowChange) and e.schema}
    return list(found)
