"""The schema cache and the rows held for their schema, driven directly: keys, eviction, order and accounting."""

from __future__ import annotations

import pytest

from cdc_core.errors import HeldRowsLimitError
from cdc_core.limits import Limits
from cdc_core.message import Message
from cdc_core.schema import Column, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_simple.cache import HeldRow, HeldRows, SchemaCache


def schema(table: str, version: int | None) -> TableSchema:
    column = Column(name="id", data_type=DataType(mysql_type=MySQLType.BIGINT), nullable=False)
    return TableSchema(database="shop", table=table, columns=[column], version=version)


def row(table: str, version: int, size: int, offset: int) -> HeldRow:
    message = Message(value=b"{}", topic="orders", partition=0, offset=offset)
    return HeldRow(key=("shop", table, version), document={"offset": offset}, message=message, size=size)


def test_keys_are_database_table_version_and_a_missing_version_is_zero() -> None:
    assert SchemaCache.key_of(schema("orders", 449)) == ("shop", "orders", 449)
    assert SchemaCache.key_of(schema("orders", None)) == ("shop", "orders", 0)


def test_the_first_schema_under_a_key_wins() -> None:
    cache = SchemaCache()
    first, again = schema("orders", 7), schema("orders", 7)
    assert cache.add(first) is True
    assert cache.add(again) is False
    assert cache.get(("shop", "orders", 7)) is first
    assert ("shop", "orders", 7) in cache
    assert ("shop", "orders", 8) not in cache
    assert cache.keys() == [("shop", "orders", 7)]


def test_past_max_entries_the_oldest_schema_is_dropped() -> None:
    cache = SchemaCache(max_entries=2)
    for version in (1, 2, 3):
        assert cache.add(schema("orders", version)) is True
    assert len(cache) == 2
    assert cache.keys() == [("shop", "orders", 2), ("shop", "orders", 3)]


def test_held_rows_count_rows_and_bytes() -> None:
    held = HeldRows(Limits())
    assert (len(held), held.bytes, held.blocks(("shop", "orders"))) == (0, 0, False)
    held.hold(row("orders", 1, 100, 1))
    held.hold(row("orders", 2, 30, 2))
    assert (len(held), held.bytes) == (2, 130)
    summary = held.summary()
    assert (summary.rows, summary.bytes) == (2, 130)
    assert summary.by_schema == {("shop", "orders", 1): 1, ("shop", "orders", 2): 1}


def test_release_stops_a_table_at_its_first_unknown_row_and_keeps_its_count() -> None:
    held = HeldRows(Limits())
    for offset, (table, version, size) in enumerate(
        [("orders", 1, 10), ("orders", 1, 20), ("orders", 2, 40), ("orders", 1, 80), ("items", 5, 160)]
    ):
        held.hold(row(table, version, size, offset))
    cache = SchemaCache()
    cache.add(schema("orders", 1))
    cache.add(schema("items", 5))
    released = held.release(cache)
    # orders v1 twice, then v2 is unknown: the later v1 row waits behind it; items is another table
    assert [(r.message.offset, s.table) for r, s in released] == [(0, "orders"), (1, "orders"), (4, "items")]
    assert [r.message.offset for r in held] == [2, 3]
    assert held.bytes == 120
    assert held.blocks(("shop", "orders"))
    assert not held.blocks(("shop", "items"))
    cache.add(schema("orders", 2))
    assert [r.message.offset for r, _ in held.release(cache)] == [2, 3]
    assert (len(held), held.bytes, held.blocks(("shop", "orders"))) == (0, 0, False)


def test_an_unknown_row_of_one_table_does_not_stop_another() -> None:
    held = HeldRows(Limits())
    held.hold(row("orders", 9, 10, 1))
    held.hold(row("items", 5, 20, 2))
    cache = SchemaCache()
    cache.add(schema("items", 5))
    assert [r.message.offset for r, _ in held.release(cache)] == [2]
    assert [r.message.offset for r in held] == [1]
    assert held.bytes == 10


def test_requeued_rows_go_back_in_front_with_their_counts() -> None:
    held = HeldRows(Limits())
    held.hold(row("orders", 1, 10, 1))
    held.hold(row("orders", 2, 20, 2))
    held.hold(row("items", 3, 40, 3))
    cache = SchemaCache()
    cache.add(schema("orders", 1))
    cache.add(schema("orders", 2))
    released = [r for r, _ in held.release(cache)]
    assert (held.bytes, held.blocks(("shop", "orders"))) == (40, False)
    held.requeue(released)
    assert [r.message.offset for r in held] == [1, 2, 3]
    assert held.bytes == 70
    # the release was interrupted and orders v2 is not known after all: one orders row still blocks its table
    only_v1 = SchemaCache()
    only_v1.add(schema("orders", 1))
    assert [r.message.offset for r, _ in held.release(only_v1)] == [1]
    assert held.blocks(("shop", "orders"))
    only_v1.add(schema("orders", 2))
    only_v1.add(schema("items", 3))
    assert [r.message.offset for r, _ in held.release(only_v1)] == [2, 3]
    assert (held.bytes, held.blocks(("shop", "orders")), held.blocks(("shop", "items"))) == (0, False, False)


def test_hold_past_the_bound_is_a_typed_error_naming_the_protocol_and_holds_nothing() -> None:
    held = HeldRows(Limits(max_held_rows=10, max_held_bytes=100))
    held.hold(row("orders", 1, 60, 1))
    with pytest.raises(HeldRowsLimitError, match=r"^simple: 2 rows \(101 bytes\)"):
        held.hold(row("orders", 1, 41, 2))
    assert (len(held), held.bytes) == (1, 60)
    held.hold(row("orders", 1, 40, 3))  # exactly at the bound is allowed
    assert held.bytes == 100
