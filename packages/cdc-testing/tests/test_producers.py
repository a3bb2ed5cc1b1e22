"""The comparison and replay logic the real-producer tests rely on: it must be able to fail."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cdc_core.events import DDLEvent, DDLType, Op, RowChange
from cdc_testing import databases
from cdc_testing.producers import same, same_stored, states_in_order


def test_same_is_strict_about_decimal_scale_zones_and_types() -> None:
    assert same(Decimal("1.50"), Decimal("1.50")) is None
    assert same(Decimal("1.50"), Decimal("1.5")) is not None  # the scale is part of the value
    assert same(dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) is not None
    assert (
        same(
            dt.datetime(2024, 1, 1, 5, tzinfo=dt.timezone(dt.timedelta(hours=5))),
            dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        )
        is None
    )
    assert same(9.9, 9.899999618530273) is not None
    assert same(float("nan"), float("nan")) is None
    assert same("1", 1) is not None
    assert same(b"\x01", "AQ==") is not None
    assert same(True, 1) is None and same(True, 2) is not None
    assert same(("a", "b"), ["a", "b"]) is None and same(("a", "b"), ("b", "a")) is not None
    assert same({"k": [1, Decimal("2.0")]}, {"k": [1, Decimal("2.00")]}) is not None


def test_same_stored_applies_the_target_type_mapping_only() -> None:
    assert same_stored(9.9, 9.899999618530273, float32=True) is None
    assert same_stored(9.9, 9.899999618530273) is not None
    assert same_stored(Decimal("1.10"), "1.10") is None  # DECIMAL beyond 38 digits is text on Spark
    assert same_stored(2**64 - 1, Decimal(2**64 - 1)) is None  # BIGINT UNSIGNED as decimal(20,0)
    assert same_stored({"a": 1}, '{"a": 1}') is None and same_stored({"a": 1}, '{"a": 2}') is not None
    assert same_stored(None, 0) is not None


def _row(op: str, before: dict[str, object] | None, after: dict[str, object] | None) -> RowChange:
    return RowChange(op=Op(op), database="d", table="t", before=before, after=after)


def _compare(table: str, column: str, want: object, have: object) -> str | None:
    return same(want, have)


def test_states_in_order_follows_every_state_and_reports_the_first_difference() -> None:
    events = [
        _row("insert", None, {"id": 1, "v": Decimal("1.0")}),
        _row("insert", None, {"id": 2, "v": Decimal("2.0")}),
        _row("update", {"id": 1, "v": Decimal("1.0")}, {"id": 10, "v": Decimal("1.0")}),  # a key change
        DDLEvent(ddl_type=DDLType.TRUNCATE, sql=None, database="d", table="t"),
        _row("insert", None, {"id": 3, "v": None}),
    ]
    states = [
        {1: {"id": 1, "v": Decimal("1.0")}, 2: {"id": 2, "v": Decimal("2.0")}},
        {10: {"id": 10, "v": Decimal("1.0")}, 2: {"id": 2, "v": Decimal("2.0")}},
        {},
        {3: {"id": 3, "v": None, "added": "x"}},  # a column added by DDL: the event need not carry it
    ]
    assert states_in_order(events, {"t": states}, _compare) == {}
    wrong = [*states[:1], {10: {"id": 10, "v": Decimal("1.00")}, 2: {"id": 2, "v": Decimal("2.0")}}, *states[2:]]
    missed = states_in_order(events, {"t": wrong}, _compare)
    assert "state 1" in missed["t"] and "column v" in missed["t"]
    assert states_in_order(events[:2], {"t": states}, _compare)  # the later states are never reached


def test_a_missing_server_binary_is_named_with_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(databases.shutil, "which", lambda _name: None)
    with pytest.raises(databases.DatabaseUnavailableError, match="mariadb-server"):
        databases._find(("mariadbd",), ("/nonexistent",), databases.MARIADB_PACKAGE)
    monkeypatch.setattr(databases, "_postgres_bindirs", list)
    reason = databases.missing_postgres()
    assert reason is not None and "initdb" in reason and "postgresql" in reason


def test_a_missing_part_skips_locally_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from cdc_testing.plugin import unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no mariadbd"):
        unavailable("no mariadbd")
    monkeypatch.setenv("CI", "true")
    failure = r"no mariadbd \(CI=true: a missing test dependency fails the run\)"
    with pytest.raises(pytest.fail.Exception, match=failure):
        unavailable("no mariadbd")
