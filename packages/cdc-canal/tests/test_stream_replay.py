"""A realistic stream (both flavours, partial old, deletes, DDL) replayed into an in-memory table keyed by pkNames."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from cdc_core.codec import decode_all
from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.values import Value

TYPES = '"mysqlType":{"id":"int","sku":"varchar","qty":"int unsigned","price":"decimal","note":"text"}'
SQL_TYPES = '"sqlType":{"id":4,"sku":12,"qty":4,"price":3,"note":2005}'
CANAL_TYPES = (
    '"mysqlType":{"id":"int(11)","sku":"varchar(32)","qty":"int(10) unsigned","price":"decimal(10,2)","note":"text"}'
)
HEAD = '{"id":0,"database":"shop","table":"orders","pkNames":["id"],"isDdl":false,'


def dml(kind: str, ts: int, data: str, old: str = "null", types: str = TYPES) -> str:
    return (
        f'{HEAD}"type":"{kind}","es":{ts >> 18},"ts":1,"sql":"",{SQL_TYPES},{types},"old":{old},"data":{data},'
        f'"_tidb":{{"commitTs":{ts}}}}}'
    )


def ddl(kind: str, sql: str, ts: int) -> str:
    return (
        f'{{"id":0,"database":"shop","table":"orders","pkNames":null,"isDdl":true,"type":"{kind}","es":0,"ts":1,'
        f'"sql":"{sql}","sqlType":null,"mysqlType":null,"data":null,"old":null,"_tidb":{{"commitTs":{ts}}}}}'
    )


def row(i: int, sku: str, qty: int, price: str, note: str | None = None) -> str:
    note_text = "null" if note is None else f'"{note}"'
    return f'{{"id":"{i}","sku":"{sku}","qty":"{qty}","price":"{price}","note":{note_text}}}'


STREAM = [
    ddl("CREATE", "create table orders (id int primary key, sku varchar(32), qty int unsigned, ...)", 100),
    dml("INSERT", 200, f"[{row(1, 'A-1', 2, '9.90')}]"),
    dml("INSERT", 210, f"[{row(2, 'B-7', 1, '120.00', 'gift')},{row(3, 'C-3', 5, '1.25')}]"),  # multi-row
    '{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,"type":"TIDB_WATERMARK","es":0,"ts":1,'
    '"sql":"","sqlType":null,"mysqlType":null,"data":null,"old":null,"_tidb":{"watermarkTs":215}}',
    # official Canal: only the changed columns in old, full type definitions
    dml("UPDATE", 220, f"[{row(1, 'A-1', 3, '9.90')}]", old='[{"qty":"2"}]', types=CANAL_TYPES),
    # TiCDC: full old image
    dml("UPDATE", 230, f"[{row(2, 'B-7', 1, '99.00', 'gift')}]", old=f"[{row(2, 'B-7', 1, '120.00', 'gift')}]"),
    dml("DELETE", 240, f"[{row(3, 'C-3', 5, '1.25')}]"),
    # a primary-key change arrives split into DELETE + INSERT with one commitTs
    dml("DELETE", 250, f"[{row(1, 'A-1', 3, '9.90')}]"),
    dml("INSERT", 250, f"[{row(10, 'A-1', 3, '9.90')}]"),
    ddl("ALTER", "alter table orders modify note text", 260),
    dml("UPDATE", 270, f"[{row(2, 'B-7', 4, '99.00')}]", old='[{"qty":"1","note":"gift"}]', types=CANAL_TYPES),
    dml("INSERT", 280, f"[{row(11, 'Z-9', 4294967295, '0.01', 'max qty')}]"),
]


def replay(events: list[Any]) -> tuple[dict[tuple[Value, ...], dict[str, Value]], list[Any]]:
    table: dict[tuple[Value, ...], dict[str, Value]] = {}
    others: list[Any] = []
    for event in events:
        if isinstance(event, RowChange):
            keys = event.schema.primary_key
            if event.before is not None:
                old_key = tuple(event.before[k] for k in keys)
                assert old_key in table, f"{event.op} of a row that is not there: {old_key}"
                if event.op is Op.UPDATE and event.changed_columns is not None:
                    # the completed before image must match what the table holds
                    assert table[old_key] == event.before
                del table[old_key]
            if event.after is not None:
                table[tuple(event.after[k] for k in keys)] = dict(event.after)
        elif isinstance(event, DDLEvent) and event.ddl_type is DDLType.TRUNCATE:
            table.clear()
        else:
            others.append(event)
    return table, others


def test_replayed_stream_final_state() -> None:
    messages = [Message(value=m.encode(), topic="orders", partition=0, offset=i) for i, m in enumerate(STREAM)]
    events = decode_all(get_codec("canal-json").decoder(), messages)
    table, others = replay(events)
    assert table == {
        (2,): {"id": 2, "sku": "B-7", "qty": 4, "price": Decimal("99.00"), "note": None},
        (10,): {"id": 10, "sku": "A-1", "qty": 3, "price": Decimal("9.90"), "note": None},
        (11,): {"id": 11, "sku": "Z-9", "qty": 4294967295, "price": Decimal("0.01"), "note": "max qty"},
    }
    assert [type(e).__name__ for e in others] == ["DDLEvent", "Watermark", "DDLEvent"]
    assert others[1] == Watermark(ts=215)
    updates = [e for e in events if isinstance(e, RowChange) and e.op is Op.UPDATE]
    assert [u.changed_columns for u in updates] == [("qty",), None, ("qty", "note")]
    assert all(e.commit_ts is not None for e in events if isinstance(e, RowChange))
    # truncate empties it
    truncate = ddl("TRUNCATE", "truncate table orders", 300).encode()
    table, _ = replay([*events, *get_codec("canal-json").decoder().decode(Message(value=truncate))])
    assert table == {}
