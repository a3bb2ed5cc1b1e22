"""The consumer side: schemas cached by (database, table, version), rows held until theirs arrive, bounds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from cdc_core.codec import Decoder, SchemaHoldingDecoder
from cdc_core.errors import DecodeError, HeldRowsLimitError
from cdc_core.events import Bootstrap, DDLEvent, Event, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.values import SetBits
from cdc_simple import SimpleDecoder


def _msg(doc: dict[str, Any], offset: int) -> Message:
    return Message(value=json.dumps(doc).encode(), topic="t", partition=0, offset=offset)


def _column(name: str, mysql_type: str, **extra: Any) -> dict[str, Any]:
    data_type = {"mysqlType": mysql_type, "charset": "binary", "collate": "binary", **extra}
    return {"name": name, "dataType": data_type, "nullable": name != "id", "default": None}


V1_COLUMNS = [
    _column("id", "int", length=11),
    _column("color", "enum", elements=["red", "green", "blue"]),
    _column("flags", "set", elements=["a", "b", "c"]),
    _column("bits", "bit", length=12, unsigned=True),
    _column("blob", "blob"),
]
V2_COLUMNS = [*V1_COLUMNS, _column("price", "decimal", length=10, decimal=2)]


def _schema(version: int, cols: list[dict[str, Any]], table: str = "items") -> dict[str, Any]:
    primary = {"name": "primary", "unique": True, "primary": True, "nullable": False, "columns": ["id"]}
    return {"schema": "shop", "table": table, "tableID": 7, "version": version, "columns": cols, "indexes": [primary]}


def _bootstrap(version: int, cols: list[dict[str, Any]], table: str = "items") -> dict[str, Any]:
    schema = _schema(version, cols, table)
    return {"version": 1, "type": "BOOTSTRAP", "commitTs": 0, "buildTs": 1, "tableSchema": schema}


def _insert(version: int, commit_ts: int, data: dict[str, Any], table: str = "items") -> dict[str, Any]:
    return {
        "version": 1,
        "database": "shop",
        "table": table,
        "tableID": 7,
        "type": "INSERT",
        "commitTs": commit_ts,
        "buildTs": 2,
        "schemaVersion": version,
        "data": data,
    }


ALTER = {
    "version": 1,
    "type": "ALTER",
    "sql": "ALTER TABLE items ADD COLUMN price DECIMAL(10,2)",
    "commitTs": 300,
    "buildTs": 3,
    "tableSchema": _schema(200, V2_COLUMNS),
    "preTableSchema": _schema(100, V1_COLUMNS),
}
ROW_V1 = {"id": "1", "color": "2", "flags": "5", "bits": "4095", "blob": "AAEC/w=="}
ROW_V2 = {**ROW_V1, "id": "2", "price": "12.50"}


def _rows(events: list[Event]) -> list[RowChange]:
    return [e for e in events if isinstance(e, RowChange)]


def test_dml_before_its_bootstrap_is_held_then_released_with_types(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    assert isinstance(decoder, SimpleDecoder)
    assert decoder.decode(_msg(_insert(100, 150, ROW_V1), 0)) == []
    assert decoder.decode(_msg(_insert(100, 151, {**ROW_V1, "id": "3", "color": "0", "flags": "0"}), 1)) == []
    summary = decoder.held_summary()
    assert (summary.rows, summary.by_schema) == (2, {("shop", "items", 100): 2})
    assert summary.bytes > 0

    events = decoder.decode(_msg(_bootstrap(100, V1_COLUMNS), 2))
    assert isinstance(events[0], Bootstrap)
    first, second = _rows(events)
    assert first.after == {"id": 1, "color": "green", "flags": ("a", "c"), "bits": 4095, "blob": b"\x00\x01\x02\xff"}
    assert (first.commit_ts, second.commit_ts) == (150, 151)
    assert second.after is not None and (second.after["color"], second.after["flags"]) == ("", ())
    assert first.source is not None and first.source.offset == 0  # each row keeps its own coordinates
    assert decoder.held_summary().rows == 0


def test_a_primed_decoder_needs_no_bootstrap_and_reports_what_it_still_holds(
    make_decoder: Callable[..., Decoder],
) -> None:
    # A host that decodes in pieces (one Spark task per batch) learned version 100 from an earlier piece.
    learned = make_decoder()
    (bootstrap,) = learned.decode(_msg(_bootstrap(100, V1_COLUMNS), 0))
    assert isinstance(bootstrap, Bootstrap)

    decoder = make_decoder()
    assert isinstance(decoder, SchemaHoldingDecoder)
    decoder.prime(bootstrap.table_schema)
    (row,) = _rows(decoder.decode(_msg(_insert(100, 150, ROW_V1), 7)))
    assert row.after is not None and row.after["color"] == "green"

    assert decoder.decode(_msg(_insert(200, 400, ROW_V2), 8)) == []  # version 200 is unknown: held
    ((message, reason),) = decoder.unreleased()
    assert message.offset == 8
    assert "shop.items version 200" in reason
    ((awaited),) = decoder.awaited()  # what a host may have learned from another partition
    assert (awaited.message, awaited.database, awaited.table, awaited.version) == (message, "shop", "items", 200)
    assert awaited.commit_ts == 400


def test_mid_stream_start_after_ddl_decodes_each_row_with_its_own_version(
    make_decoder: Callable[..., Decoder],
) -> None:
    # Full topic: bootstrap v1, row v1, row v1, ALTER (v1 -> v2), row v2, watermark. The consumer starts at offset 2.
    topic = [
        _bootstrap(100, V1_COLUMNS),
        _insert(100, 150, ROW_V1),
        _insert(100, 160, {**ROW_V1, "id": "5"}),
        ALTER,
        _insert(200, 400, ROW_V2),
        {"version": 1, "type": "WATERMARK", "commitTs": 500, "buildTs": 5},
    ]
    decoder = make_decoder()
    events: list[Event] = []
    for offset in range(2, len(topic)):
        events += decoder.decode(_msg(topic[offset], offset))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["RowChange", "DDLEvent", "RowChange", "Watermark"]  # the held row precedes its DDL
    held, ddl, after, watermark = events
    assert isinstance(held, RowChange) and isinstance(ddl, DDLEvent) and isinstance(after, RowChange)
    assert held.schema_version == 100 and held.after is not None and "price" not in held.after
    assert held.after["id"] == 5
    assert after.schema_version == 200 and after.after is not None
    assert str(after.after["price"]) == "12.50"
    assert isinstance(watermark, Watermark) and watermark.ts == 500


def test_later_rows_of_a_held_table_wait_behind_it(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    assert isinstance(decoder, SimpleDecoder)
    decoder.decode(_msg(_bootstrap(200, V2_COLUMNS), 0))  # v2 known, v1 not yet
    assert decoder.decode(_msg(_insert(100, 150, ROW_V1), 1)) == []
    assert decoder.decode(_msg(_insert(200, 400, ROW_V2), 2)) == []  # known version, but must not overtake
    other = decoder.decode(_msg(_insert(100, 401, ROW_V1, table="other"), 3))
    assert other == []
    events = decoder.decode(_msg(ALTER, 4))
    rows = _rows(events)
    assert [(r.table, r.commit_ts) for r in rows] == [("items", 150), ("items", 400)]
    assert decoder.held_summary().by_schema == {("shop", "other", 100): 1}


def test_bootstrap_moves_no_watermark_and_is_not_a_ddl(make_decoder: Callable[..., Decoder]) -> None:
    events = make_decoder().decode(_msg(_bootstrap(100, V1_COLUMNS), 0))
    assert [type(e) for e in events] == [Bootstrap]
    assert not any(isinstance(e, DDLEvent | Watermark) for e in events)


def test_rename_keeps_version_so_the_name_is_part_of_the_key(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    decoder.decode(_msg(_bootstrap(100, V1_COLUMNS, table="renamed"), 0))
    assert decoder.decode(_msg(_insert(100, 150, ROW_V1), 1)) == []  # same version, other name: not the schema


def test_hold_is_bounded_with_a_typed_error(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder(**{"max-held-rows": 3})
    for offset in range(3):
        decoder.decode(_msg(_insert(100, 150 + offset, ROW_V1), offset))
    with pytest.raises(HeldRowsLimitError, match="3 rows"):
        decoder.decode(_msg(_insert(100, 160, ROW_V1), 3))
    assert isinstance(decoder, SimpleDecoder) and decoder.held_summary().rows == 3


def test_hold_is_bounded_by_bytes(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder(**{"max-held-bytes": 400})
    decoder.decode(_msg(_insert(100, 150, ROW_V1), 0))
    with pytest.raises(HeldRowsLimitError, match="bytes"):
        decoder.decode(_msg(_insert(100, 151, ROW_V1), 1))


def test_unknown_set_bits_and_enum_index_keep_their_numbers(make_decoder: Callable[..., Decoder]) -> None:
    decoder = make_decoder()
    decoder.decode(_msg(_bootstrap(100, V1_COLUMNS), 0))
    (row,) = decoder.decode(_msg(_insert(100, 150, {**ROW_V1, "flags": "8", "bits": 3}), 1))
    assert isinstance(row, RowChange) and row.after is not None
    assert row.after["flags"] == SetBits(8) and row.after["bits"] == 3


def test_avro_stream_joined_mid_way_after_a_schema_change() -> None:
    """The same lifecycle in Avro, with a stream the encoder wrote (bootstrap only before the first row)."""
    from cdc_core.events import DDLType, Op
    from cdc_simple import CODEC
    from cdc_testing.strategies import kitchen_sink_schema

    v1 = kitchen_sink_schema(version=100)
    v2 = kitchen_sink_schema(version=200)
    options = {"encoding-format": "avro"}
    encoder = CODEC.encoder({**options, "send-bootstrap-in-msg-count": 1000})

    def insert(schema: Any, i: int) -> RowChange:
        return RowChange(
            op=Op.INSERT,
            database="test",
            table="kitchen_sink",
            after={"id": i, "c_enum": "blue"},
            commit_ts=i,
            table_id=100,
            schema_version=schema.version,
            schema=schema,
        )

    stream = [m for i in range(1, 4) for m in encoder.encode(insert(v1, i))]
    ddl = DDLEvent(
        ddl_type=DDLType.TRUNCATE,
        sql="TRUNCATE TABLE kitchen_sink",
        database="test",
        table="kitchen_sink",
        commit_ts=10,
        table_schema=v2,
        pre_table_schema=v1,
    )
    stream += encoder.encode(ddl)
    stream += [m for i in range(11, 13) for m in encoder.encode(insert(v2, i))]
    assert len(stream) == 1 + 3 + 1 + 2  # one bootstrap, then no more: the DDL announced v2

    decoder = CODEC.decoder(options)
    events = [e for offset, m in enumerate(stream) if offset >= 2 for e in decoder.decode(m)]
    rows = _rows(events)
    assert [(r.commit_ts, r.schema_version) for r in rows] == [(2, 100), (3, 100), (11, 200), (12, 200)]
    assert all(r.after is not None and r.after["c_enum"] == "blue" for r in rows)
    assert isinstance(events[2], DDLEvent)  # the two held v1 rows come first


def test_a_bad_held_row_is_reported_at_its_own_offset_and_the_rest_stay_held(
    make_decoder: Callable[..., Decoder],
) -> None:
    decoder = make_decoder()
    assert isinstance(decoder, SimpleDecoder)
    decoder.decode(_msg(_insert(100, 150, {**ROW_V1, "bits": "many"}), 7))
    decoder.decode(_msg(_insert(100, 151, ROW_V1), 8))

    with pytest.raises(DecodeError) as caught:
        decoder.decode(_msg(_bootstrap(100, V1_COLUMNS), 9))
    assert (caught.value.offset, caught.value.field) == (7, "data.bits")
    assert decoder.held_summary().rows == 1
    assert decoder.decode(_msg({"version": 1, "type": "WATERMARK", "commitTs": 1}, 10))  # releases nothing
    assert decoder.held_summary().rows == 1
    (row,) = _rows(decoder.decode(_msg(_bootstrap(100, V1_COLUMNS), 11)))  # the next schema message does
    assert row.commit_ts == 151
