"""The shared checks of the real-producer tests (decoding, spatial values, ``cdc apply`` targets) can fail."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_core.messagelines import parse_line
from cdc_core.registry import get_codec
from cdc_core.values import Geometry
from cdc_testing.producers import compare_with, decode_failures, decode_messages, stored_geometry
from cdc_testing.targets import DEAD_LETTERS, read_target_table, target_differences

CAPTURE = Path(__file__).parents[2] / "cdc-debezium" / "tests" / "captures" / "mdb-precise.jsonl"


def test_decode_messages_goes_on_past_a_bad_message_and_names_it() -> None:
    pytest.importorskip("cdc_debezium")
    good = parse_line(CAPTURE.read_text(encoding="utf-8").splitlines()[0], line=1)
    bad = Message(value=b"{not json", topic="t", partition=0, offset=7)
    events, errors = decode_messages(get_codec("debezium").decoder({}), [bad, good])
    assert events and len(errors) == 1 and errors[0].startswith("t@7: ")
    assert decode_failures(errors, 2).startswith("1 of 2 messages did not decode:\nt@7: ")


def test_stored_geometry_splits_the_srid_off_and_zero_is_none() -> None:
    wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")
    assert stored_geometry(b"\x00\x00\x00\x00" + wkb) == Geometry(wkb=wkb, srid=None)
    assert stored_geometry((4326).to_bytes(4, "little") + wkb) == Geometry(wkb=wkb, srid=4326)


def test_compare_with_checks_against_the_expected_form() -> None:
    compare = compare_with(lambda _table, column, value: Decimal(value) if column == "d" else value)
    assert compare("t", "d", "1.50", Decimal("1.50")) is None
    assert compare("t", "d", "1.50", Decimal("1.5")) is not None
    assert compare("t", "s", "x", "y") is not None


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    write_deltalake(str(path), pa.Table.from_pylist(rows))


def test_target_differences_reads_live_rows_and_reports_what_differs(tmp_path: Path) -> None:
    pytest.importorskip("deltalake")
    _write(
        tmp_path / "db" / "t",
        [
            {"id": 1, "v": 1.5, "note": None, "__cdc_deleted": False},
            {"id": 2, "v": 2.0, "note": "x", "__cdc_deleted": True},  # a tombstone: not a live row
        ],
    )
    assert read_target_table(tmp_path / "db" / "t") == [{"id": 1, "v": 1.5, "note": None}]
    states = {"t": [{1: {"id": 1, "v": 1.5}}, {1: {"id": 1, "v": 1.5, "note": "default"}}]}

    def expected(_table: str, _column: str, value: Any) -> Any:
        return value

    def no_float32(_table: str, _column: str) -> bool:
        return False

    # the added column's default reached the row by no event: null expected there
    assert target_differences(tmp_path, "db", states, expected, float32=no_float32, added={"note"}) is None
    found = target_differences(tmp_path, "db", states, expected, float32=no_float32)
    assert found is not None and "t row 1 column note" in found
    found = target_differences(tmp_path, "db", {"t": [{1: {"id": 1, "v": 1.25}}]}, expected, float32=no_float32)
    assert found is not None and "column v" in found
    found = target_differences(tmp_path, "db", {"t": [{3: {"id": 3}}]}, expected, float32=no_float32)
    assert found is not None and "keys [3] in the database, [1] in the target" in found
    _write(tmp_path / DEAD_LETTERS, [{"topic": "t", "offset": 9, "error": "bad value"}])
    found = target_differences(tmp_path, "db", {"t": [{1: {"id": 1, "v": 1.5}}]}, expected, float32=no_float32)
    assert found is not None and "t@9: bad value" in found
