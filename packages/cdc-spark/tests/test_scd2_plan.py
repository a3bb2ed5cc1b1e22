"""The SCD2 plan (``cdc_spark.merge.scd2``) on small in-memory frames: a batch in the decode contract's shape made
ready by ``batch.ordered``, stored versions as the state table holds them, and the recomputed versions and merge
sources compared row by row. No table is written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from cdc_spark.merge.batch import ordered, sequence_type, summarize
from cdc_spark.merge.columns import DROP, END_AT, END_SEQUENCE, START_AT, START_SEQUENCE, TIME
from cdc_spark.merge.scd2 import History, history, state_schema, visible
from cdc_spark.merge.spec import build_spec
from cdc_testing.spark_frames import scanned_frame

# run with case-sensitive column names (conftest.py): the plan must name its own columns exactly as it made them
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("case_sensitive")]

SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
SCHEMA = f"id int, name string, qty int, _cdc_op string, _cdc_sequence {SEQ}, _cdc_changed_columns array<string>"
Seq = tuple[int, int, int, int]


def seq(ts: int, position: int = 0) -> Seq:
    return (ts, 0, ts, position)


def change(
    op: str, at: int | Seq, key: int | None, name: str | None = None, qty: int | None = None, changed: Any = None
) -> tuple[Any, ...]:
    return (key, name, qty, op, seq(at) if isinstance(at, int) else at, changed)


def version(
    key: int, name: str | None, qty: int | None, start: int | Seq, end: int | Seq | None = None
) -> tuple[Any, ...]:
    """A version as the state holds it: its bounds are the commit times of its start and end sequences."""
    first = seq(start) if isinstance(start, int) else start
    last = seq(end) if isinstance(end, int) else end
    return (key, name, qty, first[0], None if last is None else last[0], first, last)


def plan(
    spark: Any,
    rows: list[tuple[Any, ...]],
    stored: Sequence[tuple[Any, ...]] = (),
    schema: str = SCHEMA,
    keys: Sequence[str] = ("id",),
    **kwargs: Any,
) -> History:
    changes = scanned_frame(spark, rows, schema)
    spec = build_spec(changes, table="shop.t", keys=list(keys), scd=2, **kwargs)
    summary = summarize(changes, spec, None)
    ready = ordered(changes, spec, summary)
    types = ready.schema
    state = state_schema(spec, types, sequence_type(changes, spec), types[TIME].dataType)
    return history(ready, spec, scanned_frame(spark, list(stored), state), summary)


def rows_of(frame: Any, *extra: str) -> list[tuple[Any, ...]]:
    columns = ["id", "name", "qty", START_AT, END_AT, START_SEQUENCE, END_SEQUENCE, *extra]
    picked = [c for c in columns if c in frame.columns]
    result = [tuple(tuple(v) if hasattr(v, "asDict") else v for v in r) for r in frame.select(*picked).collect()]
    return sorted(result, key=lambda r: (r[0], r[3], repr(r)))


def test_state_schema_is_the_target_columns_then_bounds_then_sequences(spark: Any) -> None:
    schema = f"id int, name string, _cdc_op string, _cdc_sequence {SEQ}, _cdc_commit_ts timestamp"
    changes = scanned_frame(spark, [], schema)
    spec = build_spec(changes, table="shop.t", keys=["id"], scd=2, metadata=["_cdc_commit_ts"])
    seq_type, time_type = changes.schema["_cdc_sequence"].dataType, changes.schema["_cdc_commit_ts"].dataType
    state = state_schema(spec, changes.schema, seq_type, time_type)
    assert [(f.name, f.dataType.simpleString()) for f in state.fields] == [
        ("id", "int"),
        ("name", "string"),
        ("_cdc_commit_ts", "timestamp"),
        (START_AT, "timestamp"),
        (END_AT, "timestamp"),
        (START_SEQUENCE, SEQ),
        (END_SEQUENCE, SEQ),
    ]


def test_visible_versions_lasted_some_time(spark: Any) -> None:
    frame = scanned_frame(spark, [(1, 5, None), (2, 5, 7), (3, 5, 5)], f"id int, {START_AT} bigint, {END_AT} bigint")
    assert sorted(r["id"] for r in visible(frame).collect()) == [1, 2]


def test_a_key_updated_deleted_and_reinserted_in_one_batch(spark: Any) -> None:
    rows = [
        change("insert", 1, 1, "a", 1),
        change("update", 2, 1, "b", 1),
        change("update", 3, 1, "b", 2),
        change("delete", 4, 1),
        change("insert", 6, 1, "b", 2),  # the same values as before the delete: a new version all the same
        change("insert", 1, 2, "x", 1),
        change("update", 2, 2, "x", 1),  # nothing changed: the version goes on
    ]
    assert rows_of(plan(spark, rows).versions) == [
        version(1, "a", 1, 1, 2),
        version(1, "b", 1, 2, 3),
        version(1, "b", 2, 3, 4),
        version(1, "b", 2, 6),
        version(2, "x", 1, 1),
    ]


def test_changes_to_untracked_columns_update_the_version_in_place(spark: Any) -> None:
    rows = [change("insert", 1, 1, "a", 1), change("update", 2, 1, "a", 5), change("update", 3, 1, "b", 5)]
    assert rows_of(plan(spark, rows, track_columns=["name"]).versions) == [
        version(1, "a", 5, 1, 3),
        version(1, "b", 5, 3),
    ]
    # only the key tracked: nothing but a delete starts a version
    rows.append(change("delete", 4, 1))
    rows.append(change("insert", 5, 1, "c", 6))
    assert rows_of(plan(spark, rows, track_columns=["id"]).versions) == [
        version(1, "b", 5, 1, 4),
        version(1, "c", 6, 5),
    ]


def test_an_unchanged_null_is_no_change_and_null_to_value_is_one(spark: Any) -> None:
    rows = [
        change("insert", 1, 1, None, 1),
        change("update", 2, 1, None, 1),
        change("update", 3, 1, "x", 1),
        change("update", 4, 1, None, 1),
    ]
    assert rows_of(plan(spark, rows).versions) == [
        version(1, None, 1, 1, 3),
        version(1, "x", 1, 3, 4),
        version(1, None, 1, 4),
    ]


def test_a_late_change_lands_between_stored_versions(spark: Any) -> None:
    stored = [version(1, "a", 1, 1, 3), version(1, "c", 1, 3), version(9, "z", 1, 1)]
    history = plan(spark, [change("update", 2, 1, "b", 1)], stored)
    expected = [version(1, "a", 1, 1, 2), version(1, "b", 1, 2, 3), version(1, "c", 1, 3)]
    assert rows_of(history.versions) == expected
    assert rows_of(history.stored) == stored[:2]  # only the touched keys
    assert rows_of(history.state_source(), DROP) == [(*v, False) for v in expected]
    assert rows_of(history.target_source(), DROP) == [(*v[:5], False) for v in expected]


def test_a_stored_version_that_vanishes_is_dropped_from_state_and_target(spark: Any) -> None:
    stored = [version(1, "a", 1, 1, 3), version(1, "b", 1, 3)]
    history = plan(spark, [change("update", 2, 1, "b", 1)], stored)
    assert rows_of(history.versions) == [version(1, "a", 1, 1, 2), version(1, "b", 1, 2)]
    assert rows_of(history.state_source(), DROP) == [
        (*version(1, "a", 1, 1, 2), False),
        (*version(1, "b", 1, 2), False),
        (*version(1, "b", 1, 3), True),
    ]
    assert rows_of(history.target_source(), DROP) == [
        (1, "a", 1, 1, 2, False),
        (1, "b", 1, 2, None, False),
        (1, "b", 1, 3, None, True),
    ]


def test_a_replayed_change_collapses_with_its_stored_copy(spark: Any) -> None:
    stored = [version(1, "a", 1, 1, 2), version(1, "b", 1, 2)]
    history = plan(spark, [change("insert", 1, 1, "a", 1), change("update", 2, 1, "b", 1)], stored)
    assert rows_of(history.versions) == stored
    assert rows_of(history.state_source(), DROP) == [(*v, False) for v in stored]


def test_a_delete_at_the_same_sequence_as_an_update_wins(spark: Any) -> None:
    rows = [change("update", 3, 1, "b", 1), change("delete", 3, 1)]
    history = plan(spark, rows, [version(1, "a", 1, 1)])
    assert rows_of(history.versions) == [version(1, "a", 1, 1, 3)]


def test_a_stored_delete_wins_over_a_batch_update_at_its_sequence(spark: Any) -> None:
    # each key was deleted at 3 (its stored version ended there, unfollowed) and the batch brings an update at
    # that same sequence: the delete wins whatever the values (several keys, so no ordering of their content
    # hashes can make the update win for all of them by chance)
    keys = range(1, 9)
    stored = [version(k, "a", 1, 1, 3) for k in keys]
    rows = [change("update", 3, k, f"b{k}", k) for k in keys]
    assert rows_of(plan(spark, rows, stored).versions) == stored


def test_a_stored_delete_keeps_its_gap(spark: Any) -> None:
    # the stored version ended at 2 and nothing followed: the key was deleted then
    stored = [version(1, "a", 1, 1, 2)]
    assert rows_of(plan(spark, [change("insert", 3, 1, "a", 1)], stored).versions) == [
        version(1, "a", 1, 1, 2),
        version(1, "a", 1, 3),
    ]


def test_a_truncate_closes_every_version_open_at_it(spark: Any) -> None:
    stored = [
        version(1, "a", 1, 1),  # open: closed by the truncate
        version(2, "b", 1, 1),  # open, key not in the batch: closed too
        version(3, "c", 1, 1, 3),  # ended before
        version(4, "d", 1, 7),  # started after (the truncate arrived late)
        version(5, "e", 1, 3, 8),  # ends after: closed at the truncate, the next version stays
        version(5, "f", 1, 8),
        version(6, "g", 1, 5),  # starts at the truncate
        version(7, "h", 1, 2, 5),  # ends at the truncate
    ]
    rows = [change("truncate", 5, None), change("insert", 6, 8, "i", 1), change("insert", 4, 9, "j", 1)]
    history = plan(spark, rows, stored)
    assert rows_of(history.versions) == [
        version(1, "a", 1, 1, 5),
        version(2, "b", 1, 1, 5),
        version(5, "e", 1, 3, 5),
        version(5, "f", 1, 8),
        version(8, "i", 1, 6),  # the change at 4 was before the truncate
    ]
    assert rows_of(history.stored) == [stored[0], stored[1], stored[4], stored[5]]


def test_a_truncate_leaves_versions_touched_by_the_batch_that_did_not_cross_it(spark: Any) -> None:
    stored = [version(4, "d", 1, 7), version(6, "g", 1, 5), version(7, "h", 1, 2, 5)]
    rows = [change("truncate", 5, None), *[change("update", 9, k, "n", 2) for k in (4, 6, 7)]]
    assert rows_of(plan(spark, rows, stored).versions) == [
        version(4, "d", 1, 7, 9),
        version(4, "n", 2, 9),
        version(6, "g", 1, 5, 9),
        version(6, "n", 2, 9),
        version(7, "h", 1, 2, 5),
        version(7, "n", 2, 9),
    ]


def test_a_truncate_leaves_a_version_that_ended_before_it_for_a_key_the_batch_touches(spark: Any) -> None:
    # deleted at 3, before the truncate at 5, and inserted again after it: the gap stays where it was
    stored = [version(3, "c", 1, 1, 3)]
    rows = [change("truncate", 5, None), change("insert", 6, 3, "c", 2)]
    assert rows_of(plan(spark, rows, stored).versions) == [version(3, "c", 1, 1, 3), version(3, "c", 2, 6)]


def test_partial_updates_keep_what_the_previous_change_left(spark: Any) -> None:
    rows = [
        change("insert", 1, 1, "a", 1),
        change("update", 2, 1, None, 2, ["qty"]),
        change("update", 3, 1, None, None, ["name"]),  # sets name to null
        change("update", 4, 1, "z", None),  # a full image
        change("update", 5, 1, None, 4, ["qty"]),
    ]
    assert rows_of(plan(spark, rows).versions) == [
        version(1, "a", 1, 1, 2),
        version(1, "a", 2, 2, 3),
        version(1, None, 2, 3, 4),
        version(1, "z", None, 4, 5),
        version(1, "z", 4, 5),
    ]


def test_a_partial_update_fills_from_the_stored_version(spark: Any) -> None:
    history = plan(spark, [change("update", 2, 1, None, 7, ["qty"])], [version(1, "a", 1, 1)])
    assert rows_of(history.versions) == [version(1, "a", 1, 1, 2), version(1, "a", 7, 2)]


def test_a_batch_without_changed_columns_has_full_images_only(spark: Any) -> None:
    schema = SCHEMA.rsplit(",", 1)[0]
    rows = [(1, "a", 1, "insert", seq(1)), (1, None, 2, "update", seq(2))]
    history = plan(spark, rows, [version(1, "a", 1, 1)], schema=schema)
    assert rows_of(history.versions) == [version(1, "a", 1, 1, 2), version(1, None, 2, 2)]


def test_a_version_that_lasted_no_time_stays_in_the_state_only(spark: Any) -> None:
    rows = [change("insert", seq(5, 0), 1, "a", 1), change("update", seq(5, 1), 1, "b", 1)]
    history = plan(spark, rows)
    assert rows_of(history.state_source(), DROP) == [
        (*version(1, "a", 1, seq(5, 0), seq(5, 1)), False),
        (*version(1, "b", 1, seq(5, 1)), False),
    ]
    assert rows_of(history.target_source(), DROP) == [(1, "b", 1, 5, None, False)]


def test_only_a_vanished_visible_version_is_dropped_from_the_target(spark: Any) -> None:
    # stored: a version that lasted no time and the one after it, both starting at commit time 5
    stored = [version(1, "a", 1, seq(5, 0), seq(5, 1)), version(1, "b", 1, seq(5, 1))]
    history = plan(spark, [change("delete", seq(5, 2), 1)], stored)
    assert rows_of(history.versions) == [
        version(1, "a", 1, seq(5, 0), seq(5, 1)),
        version(1, "b", 1, seq(5, 1), seq(5, 2)),
    ]
    assert rows_of(history.target_source(), DROP) == [(1, "b", 1, 5, None, True)]


def test_a_composite_key_recomputes_only_the_keys_the_batch_touched(spark: Any) -> None:
    """Keys of two columns sharing their first: a change to (1, eu) closes and opens (1, eu)'s versions only; the
    stored version of (1, us) is not read back into the history (it would be matched on ``id`` alone)."""
    stored = [version(1, "eu", 1, 1), version(1, "us", 1, 2)]
    result = plan(spark, [change("update", 5, 1, "eu", 2)], stored, keys=("id", "name"))
    assert rows_of(result.versions) == [version(1, "eu", 1, 1, 5), version(1, "eu", 2, 5)]
    assert {(r["id"], r["name"]) for r in result.stored.collect()} == {(1, "eu")}
