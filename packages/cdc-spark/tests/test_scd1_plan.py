"""The SCD1 plan (`cdc_spark.merge.scd1`) on small in-memory frames: the batch folded per key, joined with the
stored state and resolved into the target action, the write flags and the new state row, asserted row by row.

No table is written: each test builds a change frame in the decode contract's shape, readies it as the sink does
(`summarize`, `ordered`) and collects the plan's rows, so these tests are fast enough for mutation testing.
Sequences are `(commit_ts, partition, offset, position)` structs unless a test says otherwise; the rows below show
them by their commit ts.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from cdc_spark.merge.batch import ordered, sequence_type, summarize
from cdc_spark.merge.columns import COLUMN_SEQUENCES, DELETED_AT, IMAGE_SEQUENCE, KEY, SEQUENCE, TABLE, WAS_LIVE
from cdc_spark.merge.scd1 import fold, resolve, state_schema
from cdc_spark.merge.spec import build_spec
from cdc_testing.spark_frames import scanned_frame

# run with case-sensitive column names (conftest.py): the plan must name its own columns exactly as it made them
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("case_sensitive")]

SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
SCHEMA = f"id int, name string, qty int, _cdc_op string, _cdc_sequence {SEQ}, _cdc_changed_columns array<string>"
NOW = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)  # the batch's clock: when a key becomes a tombstone
T0 = dt.datetime(2024, 4, 1, 8, 30, tzinfo=dt.UTC)  # an earlier tombstone's time
SEQUENCE_COLUMNS = {SEQUENCE, IMAGE_SEQUENCE, "__cdc_n_seq", "__cdc_n_image", "__cdc_set__name", "__cdc_set__qty"}
RESOLVED = [
    "id",
    "name",
    "qty",
    "__cdc_write__name",
    "__cdc_write__qty",
    "__cdc_action",
    SEQUENCE,
    DELETED_AT,
    IMAGE_SEQUENCE,
    COLUMN_SEQUENCES,
]


def seq(ts: int) -> tuple[int, int, int, int]:
    return (ts, 0, ts, 0)


def change(
    op: str, ts: int, key: int | None, name: str | None = None, qty: int | None = None, changed: Any = None
) -> tuple[Any, ...]:
    return (key, name, qty, op, seq(ts), changed)


def stored(
    key: int, ts: int, deleted_at: dt.datetime | None = None, image: int | None = None, sets: Any = None
) -> tuple[Any, ...]:
    """A state row: the key's newest sequence, tombstone time, image sequence and partial-update sequences."""
    return (
        key,
        seq(ts),
        deleted_at,
        None if image is None else seq(image),
        None if sets is None else {c: seq(s) for c, s in sets.items()},
    )


def plain(name: str, value: Any) -> Any:
    """A collected value as the tests write it: sequences by commit ts, timestamps as aware UTC times."""
    if value is None:
        return None
    if name in SEQUENCE_COLUMNS:
        return value if isinstance(value, int) else value["commit_ts"]
    if name == COLUMN_SEQUENCES:
        return {c: plain(SEQUENCE, s) for c, s in value.items()}
    if isinstance(value, dt.datetime):
        return dt.datetime.fromtimestamp(value.timestamp(), dt.UTC)
    return value


def rows(frame: Any) -> list[tuple[Any, ...]]:
    collected = frame.collect()
    return sorted(tuple(plain(c, v) for c, v in zip(frame.columns, r, strict=True)) for r in collected)


def resolved(
    spark: Any,
    changes: list[tuple[Any, ...]],
    state: list[tuple[Any, ...]],
    *,
    schema: str = SCHEMA,
    sequence_by: str = "_cdc_sequence",
    metadata: tuple[str, ...] = (),
    state_rows: Any = None,
) -> Any:
    """``resolve`` on a batch readied as the sink readies it, against the stored state rows ``state`` (of one key
    column each); the key text and ``WAS_LIVE`` of every row it returns are checked, then left out."""
    frame = scanned_frame(spark, changes, schema)
    spec = build_spec(frame, table="shop.t", keys=["id"], sequence_by=sequence_by, metadata=metadata)
    summary = summarize(frame, spec, None)
    batch = ordered(frame, spec, summary)
    keyed = [("shop.t", key_text({"id": row[0]}), *row[1:]) for row in state]
    stored_frame = scanned_frame(spark, keyed, state_schema(sequence_type(frame, spec)))
    live = {(row[0],) for row in state if row[2] is None}
    return without_keys(resolve(batch, spec, stored_frame, summary, NOW), ["id"], live)


def key_text(key: dict[str, Any]) -> str:
    """A key's text as the state keeps it: every value's text (these tests' keys are integers and strings)."""
    return json.dumps({name: str(value) for name, value in key.items()}, separators=(",", ":"))


def without_keys(plan: Any, keys: list[str], live: set[tuple[Any, ...]]) -> Any:
    """``plan`` without its key text and ``WAS_LIVE`` columns, once every row's text is checked against its key
    columns and ``WAS_LIVE`` against the keys whose row was ``live`` before the batch."""
    found = {tuple(r[:-2]): (r[-2], r[-1]) for r in plan.select(*keys, KEY, WAS_LIVE).collect()}
    assert {k: text for k, (text, _) in found.items()} == {k: key_text(dict(zip(keys, k, strict=True))) for k in found}
    assert {k for k, (_, was_live) in found.items() if was_live} == live & set(found)
    return plan.drop(KEY, WAS_LIVE)


def test_the_key_state_holds_the_table_and_key_text_then_the_bookkeeping() -> None:
    from pyspark.sql import types as T

    seq_type = T.StructType([T.StructField("commit_ts", T.LongType()), T.StructField("offset", T.LongType())])
    assert state_schema(seq_type) == T.StructType(
        [
            T.StructField(TABLE, T.StringType(), False),
            T.StructField(KEY, T.StringType(), False),
            T.StructField(SEQUENCE, seq_type),
            T.StructField(DELETED_AT, T.TimestampType()),
            T.StructField(IMAGE_SEQUENCE, seq_type),
            T.StructField(COLUMN_SEQUENCES, T.MapType(T.StringType(), seq_type)),
        ]
    )
    assert state_schema(T.LongType())[COLUMN_SEQUENCES].dataType == T.MapType(T.StringType(), T.LongType())


FOLDED = [
    "id",
    "__cdc_n_seq",
    "__cdc_n_op",
    "_cdc_op",
    "__cdc_n_image",
    "name",
    "__cdc_set__name",
    "qty",
    "__cdc_set__qty",
]


def folded(spark: Any, changes: list[tuple[Any, ...]], schema: str, **kwargs: Any) -> Any:
    frame = scanned_frame(spark, changes, schema)
    spec = build_spec(frame, table="shop.t", keys=["id"], metadata=["_cdc_op"])
    summary = summarize(frame, spec, None)
    return fold(ordered(frame, spec, summary), spec, **kwargs)


def test_fold_without_partial_updates_takes_every_column_from_the_newest_change(spark: Any) -> None:
    # no _cdc_changed_columns at all: every change is a full image, whatever fold is told
    schema = f"id int, name string, qty int, _cdc_op string, _cdc_sequence {SEQ}"
    changes = [
        change("insert", 1, 1, "a", 1)[:5],
        change("update", 3, 1, "b", 2)[:5],
        change("update", 2, 1, "c", 3)[:5],  # late, older than the update at 3
        change("insert", 4, 2, "d", 4)[:5],
        change("delete", 5, 2, "d", 4)[:5],  # a delete leaves no values behind, though its before image has them
        change("insert", 6, 3, "e", 5)[:5],
    ]
    net = folded(spark, changes, schema)
    assert net.columns == FOLDED
    assert rows(net) == [
        (1, 3, "update", "update", 3, "b", 3, 2, 3),
        (2, 5, "delete", "delete", 5, None, 5, None, 5),
        (3, 6, "insert", "insert", 6, "e", 6, 5, 6),
    ]


def test_fold_with_partial_updates_takes_each_column_from_the_newest_change_that_set_it(spark: Any) -> None:
    changes = [
        change("insert", 1, 1, "a", 1),
        change("update", 2, 1, "b", None, ["name"]),
        change("update", 3, 1, None, 3, ["qty"]),
        change("update", 5, 2, "x", None, ["name"]),
        change("delete", 6, 2, "x", 4),
        change("update", 7, 3, None, 7, ["qty"]),  # a key with partial updates only: no image in the batch
        change("update", 8, 4, "e", 8),  # a full update (no changed columns)
        change("update", 9, 4, "f", 9, ["name", "qty"]),
        change("insert", 10, 5, "g", 10, ["name"]),  # only updates are partial: an insert sets every column
        change("update", 12, 6, "h", None, ["name"]),
        change("update", 11, 6, "i", 11),  # late full update, older than the partial one
    ]
    net = folded(spark, changes, SCHEMA)  # partial updates are folded as such by default
    assert net.columns == FOLDED
    assert rows(net) == [
        (1, 3, "update", "update", 1, "b", 2, 3, 3),
        (2, 6, "delete", "delete", 6, None, 6, None, 6),
        (3, 7, "update", "update", None, None, None, 7, 7),
        (4, 9, "update", "update", 8, "f", 9, 9, 9),
        (5, 10, "insert", "insert", 10, "g", 10, 10, 10),
        (6, 12, "update", "update", 11, "h", 12, 11, 11),
    ]
    # told the batch has no partial updates, fold reads every change as a full image
    assert rows(folded(spark, changes[:3], SCHEMA, partial_updates=False)) == [
        (1, 3, "update", "update", 3, None, 3, 3, 3)
    ]


def test_full_images_write_only_when_newer_and_never_resurrect_a_deleted_key(spark: Any) -> None:
    changes = [
        change("insert", 10, 1, "a", 1),  # a new key
        change("update", 10, 2, "b", 2),  # a live key, newer
        change("update", 10, 3, "c", 3),  # a live key, late: older than its state
        change("insert", 10, 4, "d", 4),  # a deleted key, late upsert: stays deleted
        change("insert", 30, 5, "e", 5),  # a deleted key, re-inserted
        change("delete", 10, 6, "f", 6),  # a live key deleted
        change("delete", 10, 7),  # a deleted key deleted again, later: keeps its tombstone time
        change("insert", 1, 8, "g", 6),  # a new key inserted and deleted in the batch
        change("delete", 2, 8),
        change("update", 10, 9, "h", 7),  # a replay of the change the state holds
        change("delete", 10, 11),  # a late delete of a deleted key
    ]
    state = [
        stored(2, 5),
        stored(3, 20),
        stored(4, 20, T0),
        stored(5, 20, T0),
        stored(6, 5),
        stored(7, 5, T0),
        stored(9, 10),
        stored(11, 20, T0),
        stored(12, 3),  # not in the batch
    ]
    plan = resolved(spark, changes, state)
    assert plan.columns == RESOLVED
    assert rows(plan) == [
        (1, "a", 1, True, True, "upsert", 10, None, None, None),
        (2, "b", 2, True, True, "upsert", 10, None, None, None),
        (5, "e", 5, True, True, "upsert", 30, None, None, None),
        (6, None, None, True, True, "delete", 10, NOW, None, None),
        (7, None, None, True, True, None, 10, T0, None, None),
        (8, None, None, True, True, None, 2, NOW, None, None),
    ]


def test_the_batchs_clock_is_not_written_into_the_generated_code(spark: Any) -> None:
    """Each batch resolves at its own ``now`` (a new tombstone's time): were it written into the code, every batch
    would compile the resolve's code (thousands of lines a table) again."""
    from cdc_testing.spark_plans import compiled_classes

    frame = scanned_frame(spark, [change("delete", 10, 6), change("insert", 11, 1, "a", 1)], SCHEMA)
    spec = build_spec(frame, table="shop.t", keys=["id"], sequence_by="_cdc_sequence")
    summary = summarize(frame, spec, None)
    batch = ordered(frame, spec, summary)
    keyed = [("shop.t", key_text({"id": 6}), seq(5), None, None, None)]
    stored_frame = scanned_frame(spark, keyed, state_schema(sequence_type(frame, spec)))
    compiles = []
    for hours in range(4):  # the first run, at NOW, compiles the plan's code
        moment = NOW + dt.timedelta(hours=hours, microseconds=7 * hours)
        before = compiled_classes(spark)
        resolved = resolve(batch, spec, stored_frame, summary, moment)
        assert {r["id"]: plain(DELETED_AT, r[DELETED_AT]) for r in resolved.collect()} == {6: moment, 1: None}
        compiles.append(compiled_classes(spark) - before)
    # A later run may compile a few classes of Spark's own (a plan's second run; another thread of the JVM in a long
    # session): one run compiling none is the proof. A clock in the code compiles the resolve again at every clock.
    assert min(compiles[1:]) == 0, compiles


def test_partial_updates_write_the_columns_they_set_when_newer_than_what_set_them(spark: Any) -> None:
    changes = [
        change("update", 20, 1, "b", None, ["name"]),
        change("update", 20, 2, "x", 2, ["name", "qty"]),  # late: name was set at 30, qty only by the image at 10
        change("update", 40, 3, "c", 3),  # a full update newer than everything
        change("update", 20, 4, "d", 4),  # a late full update: only qty is older
        change("update", 20, 5, "y", None, ["name"]),  # late partial update of a deleted key
        change("update", 5, 6, None, 6, ["qty"]),  # a new key known only from a partial update
        change("update", 28, 7, "y", None, ["name"]),
        change("update", 30, 8, "z", None, ["name"]),  # a partial update re-inserts a deleted key: all columns
        change("update", 30, 9, "w", None, ["name"]),  # a replay of the partial update the state holds
        change("update", 20, 10, "v", None, ["name"]),
        change("delete", 25, 10),
    ]
    state = [
        stored(1, 10),
        stored(2, 30, image=10, sets={"name": 30}),
        stored(3, 30, image=10, sets={"name": 30}),
        stored(4, 30, image=10, sets={"name": 30}),
        stored(5, 30, T0),
        stored(7, 30, image=10, sets={"name": 25, "qty": 30}),
        stored(8, 20, T0),
        stored(9, 30, image=10, sets={"name": 30}),
        stored(10, 10),
    ]
    plan = resolved(spark, changes, state, metadata=("_cdc_op",))
    assert plan.columns == [*RESOLVED[:3], "_cdc_op", *RESOLVED[3:5], "__cdc_write___cdc_op", *RESOLVED[5:]]
    assert rows(plan) == [
        (1, "b", None, "update", True, False, True, "upsert", 20, None, 10, {"name": 20}),
        (2, None, 2, None, False, True, False, "upsert", 30, None, 10, {"name": 30, "qty": 20}),
        (3, "c", 3, "update", True, True, True, "upsert", 40, None, None, None),
        (4, None, 4, None, False, True, False, "upsert", 30, None, 20, {"name": 30}),
        (6, None, 6, "update", True, True, True, "upsert", 5, None, None, None),
        (7, "y", None, None, True, False, False, "upsert", 30, None, 10, {"name": 28, "qty": 30}),
        (8, "z", None, "update", True, True, True, "upsert", 30, None, 20, {"name": 30, "qty": 30}),
        (10, None, None, "delete", True, True, True, "delete", 25, NOW, None, None),
    ]


def test_a_batch_with_a_single_partial_update_writes_only_its_column(spark: Any) -> None:
    """One partial update is enough for the per-column fold: read as a full image, it would write its unset
    ``qty`` as null over the stored value."""
    plan = resolved(spark, [change("update", 20, 1, "b", None, ["name"])], [stored(1, 10)], metadata=("_cdc_op",))
    assert rows(plan) == [(1, "b", None, "update", True, False, True, "upsert", 20, None, 10, {"name": 20})]


def test_a_truncate_turns_every_key_stored_before_it_into_a_tombstone(spark: Any) -> None:
    changes = [
        change("truncate", 30, None),
        change("insert", 40, 4, "a", 1),  # re-inserted after the truncate
        change("delete", 40, 5),  # a deleted key deleted again after the truncate
        change("update", 40, 6, "b", None, ["name"]),  # a new key known only from a partial update
        change("update", 40, 7, None, 7, ["qty"]),  # a key written after the truncate, late partial update
        change("update", 40, 8, "c", None, ["name"]),  # a partial update of a truncated key: all columns
        change("update", 20, 9, "d", 9),  # before the truncate: ignored
    ]
    state = [
        stored(1, 5),
        stored(2, 6, T0),  # already a tombstone: unchanged
        stored(3, 50),  # written after the truncate: unchanged
        stored(4, 5),
        stored(5, 6, T0),
        stored(7, 50, image=35, sets={"name": 50}),
        stored(8, 5, image=3, sets={"name": 8}),
        stored(9, 5),
    ]
    assert rows(resolved(spark, changes, state, metadata=("_cdc_op",))) == [
        (1, None, None, None, False, False, False, "delete", 30, NOW, None, None),
        (4, "a", 1, "insert", True, True, True, "upsert", 40, None, None, None),
        (5, None, None, "delete", True, True, True, None, 40, T0, None, None),
        (6, "b", None, "update", True, True, True, "upsert", 40, None, None, None),
        (7, None, 7, None, False, True, False, "upsert", 50, None, 35, {"name": 50, "qty": 40}),
        (8, "c", None, "update", True, True, True, "upsert", 40, None, 30, {"name": 40, "qty": 40}),
        (9, None, None, None, False, False, False, "delete", 30, NOW, None, None),
    ]


def test_a_scalar_sequence_orders_changes_state_and_truncates_alike(spark: Any) -> None:
    schema = "id int, name string, qty int, _cdc_op string, _cdc_commit_ts bigint"
    changes = [
        (None, None, None, "truncate", 30),
        (2, "a", 1, "insert", 40),
        (3, "b", 2, "update", 47),  # later than the image, older than the partial update of name
    ]
    state = [
        (1, 5, None, None, None),
        (3, 50, None, 45, {"name": 50}),
    ]
    plan = resolved(spark, changes, state, schema=schema, sequence_by="_cdc_commit_ts")
    assert rows(plan) == [
        (1, None, None, False, False, "delete", 30, NOW, None, None),
        (2, "a", 1, True, True, "upsert", 40, None, None, None),
        (3, None, 2, False, True, "upsert", 50, None, 47, {"name": 50}),
    ]


def test_a_table_of_keys_only_inserts_and_deletes_rows(spark: Any) -> None:
    schema = f"id int, _cdc_op string, _cdc_sequence {SEQ}"
    changes = [(1, "insert", seq(10)), (2, "delete", seq(10)), (3, "insert", seq(10))]
    state = [stored(2, 5), stored(3, 20)]
    plan = resolved(spark, changes, state, schema=schema)
    assert plan.columns == ["id", "__cdc_action", SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES]
    assert rows(plan) == [(1, "upsert", 10, None, None, None), (2, "delete", 10, NOW, None, None)]


def test_a_composite_key_matches_the_state_on_every_key_column(spark: Any) -> None:
    schema = f"region string, id int, name string, _cdc_op string, _cdc_sequence {SEQ}"
    changes = [("eu", 1, "a", "update", seq(10)), ("us", 2, "b", "insert", seq(10))]
    frame = scanned_frame(spark, changes, schema)
    spec = build_spec(frame, table="shop.t", keys=["region", "id"])
    summary = summarize(frame, spec, None)
    batch = ordered(frame, spec, summary)
    # each key shares one column with an older tombstone: a match on one column alone would join it too
    state = [
        ("shop.t", key_text({"region": "eu", "id": 1}), seq(5), None, None, None),
        ("shop.t", key_text({"region": "us", "id": 1}), seq(5), T0, None, None),
        ("shop.t", key_text({"region": "eu", "id": 2}), seq(5), T0, None, None),
    ]
    stored_frame = scanned_frame(spark, state, state_schema(sequence_type(frame, spec)))
    resolution = without_keys(resolve(batch, spec, stored_frame, summary, NOW), ["region", "id"], {("eu", 1)})
    assert rows(resolution) == [
        ("eu", 1, "a", True, "upsert", 10, None, None, None),
        ("us", 2, "b", True, "upsert", 10, None, None, None),
    ]


def test_every_key_adds_the_keys_the_batch_leaves_with_their_state_as_stored(spark: Any) -> None:
    """``every_key``: the resolve is the table's whole new key state (the sink writes it in place of the old): the
    keys the batch changes as without it, every other stored key with no action and its state as it was, a key
    whose only change is stale too (without ``every_key`` it has no row: its state does not change)."""
    changes = [
        change("update", 4, 1, "stale", 9),  # newer than key 1's image, older than what set each column: no write
        change("update", 7, 3, "c", 3),
        change("insert", 8, 4, "d", 4),
    ]
    state = [
        stored(1, 5, image=3, sets={"name": 5, "qty": 4}),
        stored(2, 6, deleted_at=T0),
        stored(3, 2),
    ]
    frame = scanned_frame(spark, changes, SCHEMA)
    spec = build_spec(frame, table="shop.t", keys=["id"])
    summary = summarize(frame, spec, None)
    keyed = [("shop.t", key_text({"id": row[0]}), *row[1:]) for row in state]
    stored_frame = scanned_frame(spark, keyed, state_schema(sequence_type(frame, spec)))
    columns = [KEY, "__cdc_action", SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES]

    def state_after(every_key: bool) -> dict[str, tuple[Any, ...]]:
        plan = resolve(ordered(frame, spec, summary), spec, stored_frame, summary, NOW, every_key=every_key)
        return {row[0]: row[1:] for row in rows(plan.select(*columns))}

    changed = state_after(False)
    assert sorted(changed) == [key_text({"id": 3}), key_text({"id": 4})]
    assert state_after(True) == {
        **changed,
        key_text({"id": 1}): (None, 5, None, 3, {"name": 5, "qty": 4}),
        key_text({"id": 2}): (None, 6, T0, None, None),
    }
