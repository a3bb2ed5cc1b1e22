"""apply_changes on a local SparkSession into real Delta tables (deltalake), on change frames in the contract shape."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.apply import SchemaEvolutionError, apply_changes
from cdc_spark.sinks import BatchInfo
from cdc_spark.sinks.delta import DeltaSink

pytestmark = pytest.mark.spark

SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
CHANGED = "_cdc_changed_columns array<string>"
SCHEMA = f"id int, name string, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}, {CHANGED}"


def change(
    op: str, ts: int, key: int, name: str | None = None, amount: str | None = None, changed: Any = None
) -> tuple:
    return (key, name, None if amount is None else Decimal(amount), op, (ts, 0, ts, 0), changed)


def frame(spark: Any, rows: list[tuple], schema: str = SCHEMA) -> Any:
    return spark.createDataFrame(rows, schema)


def live(path: Path) -> dict[int, tuple]:
    rows = DeltaSink.for_path(str(path)).live_arrow("t").to_pylist()
    return {r["id"]: (r["name"], r["amount"]) for r in rows}


def test_shuffled_duplicates_and_out_of_order_batches_end_in_source_state(spark: Any, tmp_path: Path) -> None:
    rng = random.Random(7)
    state: dict[int, tuple] = {}
    events: list[tuple] = []
    for ts in range(1, 301):
        key = rng.randrange(25)
        if key in state and rng.random() < 0.25:
            events.append(change("delete", ts, key))
            del state[key]
        else:
            name, amount = f"n{ts}", f"{rng.randrange(10**6)}.{rng.randrange(100):02d}"
            events.append(change("update" if key in state else "insert", ts, key, name, amount))
            state[key] = (name, Decimal(amount))
    replayed = events + rng.sample(events, 90)  # at-least-once: replays of earlier messages
    rng.shuffle(replayed)
    for index, part in enumerate((replayed[:120], replayed[120:250], replayed[250:])):
        apply_changes(frame(spark, part), str(tmp_path), keys=["id"], batch=BatchInfo(app_id="t", batch_id=index))
    assert live(tmp_path) == state


def test_late_older_upsert_does_not_resurrect_a_deleted_row(spark: Any, tmp_path: Path) -> None:
    apply_changes(
        frame(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")]), str(tmp_path), ["id"]
    )
    apply_changes(frame(spark, [change("delete", 10, 1)]), str(tmp_path), ["id"])
    apply_changes(
        frame(spark, [change("update", 5, 1, "stale", "9.00"), change("update", 1, 2, "old", "0.00")]),
        str(tmp_path),
        ["id"],
    )
    assert live(tmp_path) == {2: ("b", Decimal("2.00"))}


def test_tombstones_expire_after_the_retention(spark: Any, tmp_path: Path) -> None:
    clock = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
    sink = DeltaSink(path=str(tmp_path), clock=lambda: clock[0])
    retention = dt.timedelta(hours=1)
    apply_changes(
        frame(spark, [change("insert", 1, 1, "a", "1.00"), change("delete", 2, 2)]),
        sink,
        ["id"],
        tombstone_retention=retention,
    )
    stored = sink.read_target(spark, "t")
    assert stored is not None and stored.where("__cdc_deleted").count() == 1
    clock[0] += dt.timedelta(hours=2)
    apply_changes(frame(spark, [change("update", 3, 1, "b", "2.00")]), sink, ["id"], tombstone_retention=retention)
    stored = sink.read_target(spark, "t")
    assert stored is not None and stored.where("__cdc_deleted").count() == 0
    assert live(tmp_path) == {1: ("b", Decimal("2.00"))}


def test_partial_updates_keep_untouched_columns(spark: Any, tmp_path: Path) -> None:
    apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), str(tmp_path), ["id"])
    batch = [
        change("update", 2, 1, None, "5.00", ["amount"]),  # name not carried: must survive
        change("update", 3, 1, "z", None, ["name"]),
        change("update", 4, 2, "new", None, ["name"]),
    ]
    apply_changes(frame(spark, batch), str(tmp_path), ["id"])
    assert live(tmp_path) == {1: ("z", Decimal("5.00")), 2: ("new", None)}


def test_a_replayed_older_change_cannot_overwrite_columns_in_a_later_batch(spark: Any, tmp_path: Path) -> None:
    first = [
        change("insert", 1, 1, "a", "1.00"),
        change("update", 2, 1, None, "2.00", ["amount"]),
        change("update", 3, 1, "b", None, ["name"]),
    ]
    apply_changes(frame(spark, first), str(tmp_path), ["id"])
    # A newer partial update and, re-delivered, the original insert: the row moves to sequence 4 (name "c"),
    # while the replay's amount (sequence 1) is older than the stored row and must not replace 2.00.
    second = [change("update", 4, 1, "c", None, ["name"]), change("insert", 1, 1, "a", "1.00")]
    apply_changes(frame(spark, second), str(tmp_path), ["id"])
    assert live(tmp_path) == {1: ("c", Decimal("2.00"))}


def test_truncate_removes_earlier_rows_and_keeps_later_ones(spark: Any, tmp_path: Path) -> None:
    apply_changes(
        frame(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")]), str(tmp_path), ["id"]
    )
    batch = [change("insert", 3, 3, "c", "3.00"), change("truncate", 4, 0), change("insert", 5, 4, "d", "4.00")]
    apply_changes(frame(spark, batch), str(tmp_path), ["id"])
    apply_changes(frame(spark, [change("update", 3, 5, "late", "0.00")]), str(tmp_path), ["id"])
    assert live(tmp_path) == {4: ("d", Decimal("4.00"))}


def test_replayed_batch_is_a_noop(spark: Any, tmp_path: Path) -> None:
    first = BatchInfo(app_id="job", batch_id=0, offsets='{"t":{"0":3}}')
    assert apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), str(tmp_path), ["id"], batch=first)
    assert apply_changes(
        frame(spark, [change("update", 2, 1, "b", "2.00")]),
        str(tmp_path),
        ["id"],
        batch=BatchInfo(app_id="job", batch_id=1),
    )
    assert not apply_changes(
        frame(spark, [change("update", 9, 1, "replayed", "9.00")]), str(tmp_path), ["id"], batch=first
    )
    assert live(tmp_path) == {1: ("b", Decimal("2.00"))}
    from deltalake import DeltaTable

    history = DeltaTable(str(tmp_path)).history()
    assert any(h.get("cdc.offsets") == '{"t":{"0":3}}' for h in history)


def test_scd2_history_of_a_key_updated_deleted_and_reinserted(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path)
    # delivered out of order across two batches, with a duplicate and an untracked-only change
    apply_changes(
        frame(
            spark, [change("insert", 10, 1, "a", "1.00"), change("delete", 30, 1), change("insert", 10, 1, "a", "1.00")]
        ),
        path,
        ["id"],
        scd=2,
        track_columns=["name"],
    )
    apply_changes(
        frame(
            spark,
            [
                change("update", 20, 1, "b", "2.00"),
                change("insert", 40, 1, "c", "3.00"),
                change("update", 25, 1, "b", "2.50"),
            ],
        ),
        path,
        ["id"],
        scd=2,
        track_columns=["name"],
    )
    rows = DeltaSink.for_path(path).live(spark, "t").orderBy("__start_at").collect()
    history = [(r["name"], r["amount"], r["__start_at"], r["__end_at"]) for r in rows]
    assert history == [
        ("a", Decimal("1.00"), 10, 20),
        ("b", Decimal("2.50"), 20, 30),  # amount is untracked: updated in place
        ("c", Decimal("3.00"), 40, None),
    ]


def test_schema_evolution_adds_and_widens_columns(spark: Any, tmp_path: Path) -> None:
    apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), str(tmp_path), ["id"])
    wider = f"id int, name string, amount decimal(12,2), note string, _cdc_op string, _cdc_sequence {SEQ}"
    apply_changes(
        spark.createDataFrame([(2, "b", Decimal("12345678.50"), "hi", "insert", (2, 0, 2, 0))], wider),
        str(tmp_path),
        ["id"],
    )
    rows = DeltaSink.for_path(str(tmp_path)).live_arrow("t")
    assert str(rows.schema.field("amount").type) == "decimal128(12, 2)"
    assert sorted(rows.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a", "amount": Decimal("1.00"), "note": None},
        {"id": 2, "name": "b", "amount": Decimal("12345678.50"), "note": "hi"},
    ]


def test_incompatible_type_change_is_a_typed_error(spark: Any, tmp_path: Path) -> None:
    apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), str(tmp_path), ["id"], table="shop.orders")
    other = f"id int, name int, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}"
    with pytest.raises(SchemaEvolutionError) as error:
        apply_changes(
            spark.createDataFrame([(2, 5, None, "insert", (2, 0, 2, 0))], other),
            str(tmp_path),
            ["id"],
            table="shop.orders",
        )
    assert (error.value.table, error.value.column, error.value.old_type, error.value.new_type) == (
        "shop.orders",
        "name",
        "string",
        "int32",
    )
