"""A batch made ready to merge (``cdc_spark.merge.batch``), on small in-memory change frames in the decode
contract's shape: no table is written, each test runs a query or two on the shared session."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_spark.merge.batch import (
    BatchSummary,
    Pending,
    Sequence,
    _aggregate_sql,
    _rows_sql,
    check_orderable,
    ordered,
    sequence_time,
    sequence_type,
    storable,
    summarize,
    summarize_all,
)
from cdc_spark.merge.columns import ORDER, TIME
from cdc_spark.merge.spec import build_spec
from cdc_spark.session_conf import temporary_views
from cdc_testing.spark_frames import scanned_frame
from cdc_testing.spark_plans import jobs_started

# run with case-sensitive column names (conftest.py): the plan must name its own columns exactly as it made them
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("case_sensitive")]

SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
CHANGED = "_cdc_changed_columns array<string>"
SCHEMA = f"id int, name string, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}, {CHANGED}"


def change(
    op: str, ts: int, key: int | None, name: str | None = None, amount: str | None = None, changed: Any = None
) -> tuple[Any, ...]:
    """A change at commit ts ``ts`` (offset ``ts`` too, position 0)."""
    return (key, name, None if amount is None else Decimal(amount), op, (ts, 0, ts, 0), changed)


def floor_of(ts: int) -> str:
    return json.dumps({"v": {"commit_ts": ts, "partition": 0, "offset": ts, "position": 0}})


def summary_of(
    spark: Any, rows: list[tuple[Any, ...]], stored: str | None = None, schema: str = SCHEMA, **kw: Any
) -> BatchSummary:
    changes = scanned_frame(spark, rows, schema)
    spec = build_spec(changes, table="shop.t", keys=kw.pop("keys", ["id"]), **kw)
    return summarize(changes, spec, stored)


def value(spark: Any, sequence: Sequence | None) -> Any:
    """A Sequence evaluated by Spark (its column), as a plain tuple or scalar."""
    assert sequence is not None
    row = spark.range(1).select(sequence.column().alias("v")).collect()[0]["v"]
    return tuple(row) if row is not None and hasattr(row, "asDict") else row


def test_a_batch_without_truncate_counts_changes_and_partial_updates(spark: Any) -> None:
    rows = [
        change("insert", 1, 1, "a", "1.00"),
        change("update", 2, 1, "b", None, ["name"]),  # partial
        change("update", 3, 1, "c", "3.00"),  # full image
        change("insert", 4, 2, "d", "4.00", ["name"]),  # only updates are partial
        change("delete", 5, 2),
        change("update", 6, 3, None, "6.00", ["amount"]),  # partial
    ]
    summary = summary_of(spark, rows)
    assert (summary.changes, summary.partial_updates) == (6, 2)
    assert summary.truncate is None and summary.truncate_time is None and summary.floor is None


def test_a_frame_without_changed_columns_has_no_partial_updates(spark: Any) -> None:
    schema = f"id int, name string, _cdc_op string, _cdc_sequence {SEQ}"
    summary = summary_of(spark, [(1, "a", "update", (1, 0, 1, 0)), (2, "b", "update", (2, 0, 2, 0))], schema=schema)
    assert (summary.changes, summary.partial_updates, summary.floor) == (2, 0, None)


def test_the_latest_truncate_is_the_floor_and_its_commit_time_closes_versions(spark: Any) -> None:
    # truncates carry no key; the later one (by sequence, not by row order) counts
    rows = [change("truncate", 5, None), change("insert", 4, 1, "a"), change("truncate", 3, None)]
    rows.append((None, None, None, "truncate", (5, 1, 9, 2), None))  # same commit ts, later in the stream
    summary = summary_of(spark, rows)
    assert summary.changes == 4
    assert summary.truncate is not None and summary.floor is not None
    assert json.loads(summary.truncate.text) == {"v": {"commit_ts": 5, "partition": 1, "offset": 9, "position": 2}}
    assert summary.floor.text == summary.truncate.text
    assert value(spark, summary.truncate) == (5, 1, 9, 2)
    assert value(spark, summary.truncate_time) == 5


def test_truncate_time_is_the_commit_ts_of_the_latest_truncate(spark: Any) -> None:
    # commit_ts is not the struct's first field here, and the latest truncate has the smaller commit ts
    schema = "id int, _cdc_op string, _cdc_sequence struct<epoch:int,commit_ts:bigint>"
    rows = [(None, "truncate", (1, 50)), (None, "truncate", (2, 40)), (1, "insert", (3, 60))]
    summary = summary_of(spark, rows, schema=schema)
    assert value(spark, summary.truncate_time) == 40
    assert value(spark, summary.floor) == (2, 40)


def test_a_stored_floor_newer_than_the_batch_truncate_stays_the_floor(spark: Any) -> None:
    summary = summary_of(spark, [change("truncate", 3, None), change("insert", 4, 1, "a")], stored=floor_of(7))
    assert summary.truncate is None and summary.truncate_time is None
    assert summary.floor is not None and value(spark, summary.floor) == (7, 0, 7, 0)


def test_a_truncate_equal_to_the_stored_floor_is_not_new(spark: Any) -> None:
    summary = summary_of(spark, [change("truncate", 7, None)], stored=floor_of(7))
    assert summary.truncate is None and summary.truncate_time is None
    assert value(spark, summary.floor) == (7, 0, 7, 0)


def test_a_truncate_newer_than_the_stored_floor_raises_it(spark: Any) -> None:
    summary = summary_of(spark, [change("truncate", 9, None), change("update", 8, 1, "a")], stored=floor_of(7))
    assert value(spark, summary.truncate) == (9, 0, 9, 0) and value(spark, summary.truncate_time) == 9
    assert value(spark, summary.floor) == (9, 0, 9, 0)


def test_a_stored_floor_without_truncate_in_the_batch_is_kept(spark: Any) -> None:
    summary = summary_of(spark, [change("insert", 8, 1, "a")], stored=floor_of(7))
    assert summary.truncate is None and summary.truncate_time is None
    assert summary.floor is not None and json.loads(summary.floor.text) == json.loads(floor_of(7))


def test_every_tables_summary_comes_from_one_aggregate_with_the_stored_floors(spark: Any) -> None:
    # three tables of one batch; floors stored in the key state (a frame) win over a table's own stored floor
    names = ["shop.a", "shop.o'brien", "shop.c"]
    batches = [
        [change("insert", 8, 1, "a"), change("update", 9, 1, "b", None, ["name"]), change("truncate", 6, None)],
        [change("truncate", 4, None), change("delete", 5, 2)],
        [change("insert", 3, 3, "c"), change("update", 4, 3, "d")],
    ]
    items = []
    for name, rows in zip(names, batches, strict=True):
        changes = scanned_frame(spark, rows, SCHEMA)
        items.append(Pending(changes, build_spec(changes, table=name, keys=["id"]), stored_floor=floor_of(2)))
    stored = [("shop.a", (7, 0, 7, 0)), ("shop.other", (99, 0, 99, 0))]
    floors = scanned_frame(spark, stored, f"table string, floor {SEQ}")
    summaries = summarize_all(items, floors)
    assert sorted(summaries) == sorted(names)
    first, second, third = (summaries[name] for name in names)
    assert (first.changes, first.partial_updates, first.ops) == (3, 1, {"insert": 1, "update": 1, "truncate": 1})
    assert first.truncate is None and value(spark, first.floor) == (7, 0, 7, 0)  # the key state's floor, not 2
    assert value(spark, second.truncate) == (4, 0, 4, 0) and value(spark, second.floor) == (4, 0, 4, 0)
    assert second.ops == {"truncate": 1, "delete": 1}
    assert third.truncate is None and value(spark, third.floor) == (2, 0, 2, 0)
    assert (third.changes, third.partial_updates) == (2, 0)


def test_the_tables_rows_are_summarized_by_as_many_tasks_as_the_cluster_has_cores(spark: Any) -> None:
    # twelve tables of three partitions each: read table by table they would be 36 tasks of a few rows each
    items = []
    for number in range(12):
        rows = [change("insert", ts, ts, f"t{number}") for ts in range(1, 7)]
        changes = scanned_frame(spark, rows, SCHEMA).repartition(3)
        items.append(Pending(changes, build_spec(changes, table=f"shop.t{number}", keys=["id"])))
    summaries: dict[str, BatchSummary] = {}
    jobs = jobs_started(spark, "summary-tasks", lambda: summaries.update(summarize_all(items)))
    assert {summary.changes for summary in summaries.values()} == {6} and len(summaries) == 12
    context = spark.sparkContext
    tracker = context.statusTracker()
    stages = [stage for job in jobs for stage in tracker.getJobInfo(job).stageIds]
    tasks = [tracker.getStageInfo(stage).numTasks for stage in stages if tracker.getStageInfo(stage) is not None]
    assert tasks and max(tasks) <= context.defaultParallelism, tasks


def test_a_table_without_changes_is_summed_up_with_its_own_stored_floor(spark: Any) -> None:
    # the tables' changes are aggregated together by table: one without rows still gets its summary and its floor
    empty = scanned_frame(spark, [], SCHEMA)
    busy = scanned_frame(spark, [change("insert", 8, 1, "a"), change("delete", 9, 2)], SCHEMA)
    items = [
        Pending(empty, build_spec(empty, table="shop.empty", keys=["id"]), stored_floor=floor_of(5)),
        Pending(busy, build_spec(busy, table="shop.busy", keys=["id"]), stored_floor=floor_of(3)),
    ]
    summaries = summarize_all(items)
    assert sorted(summaries) == ["shop.busy", "shop.empty"]
    quiet, changed = summaries["shop.empty"], summaries["shop.busy"]
    assert (quiet.changes, quiet.partial_updates, quiet.ops, quiet.truncate) == (0, 0, {}, None)
    assert value(spark, quiet.floor) == (5, 0, 5, 0)
    assert (changed.changes, changed.ops) == (2, {"insert": 1, "delete": 1})
    assert value(spark, changed.floor) == (3, 0, 3, 0)


def test_a_scalar_sequence_is_its_own_commit_time(spark: Any) -> None:
    schema = "id int, name string, _cdc_op string, seq bigint"
    rows = [(None, None, "truncate", 20), (1, "a", "insert", 30), (None, None, "truncate", 10)]
    summary = summary_of(spark, rows, schema=schema, sequence_by="seq")
    assert summary.truncate is not None and summary.truncate.text == '{"v":20}'
    assert (value(spark, summary.truncate_time), value(spark, summary.floor)) == (20, 20)
    later = summary_of(spark, rows, schema=schema, sequence_by="seq", stored='{"v":25}')
    assert (later.truncate, later.truncate_time, value(spark, later.floor)) == (None, None, 25)


def test_changes_without_a_key_value_are_refused(spark: Any) -> None:
    rows = [change("insert", 1, None, "a"), change("update", 2, None, "b"), change("truncate", 3, None)]
    with pytest.raises(ConfigError, match=r"^table shop\.t: 2 changes have no value in key column\(s\) id; pass"):
        summary_of(spark, rows)


def test_a_null_in_any_key_column_is_refused(spark: Any) -> None:
    schema = f"id int, region string, _cdc_op string, _cdc_sequence {SEQ}"
    rows = [(1, "eu", "insert", (1, 0, 1, 0)), (2, None, "delete", (2, 0, 2, 0))]
    with pytest.raises(ConfigError, match=r"1 changes have no value in key column\(s\) id, region; pass --keys"):
        summary_of(spark, rows, schema=schema, keys=["id", "region"])
    assert summary_of(spark, rows[:1], schema=schema, keys=["id", "region"]).changes == 1


def test_unknown_operations_are_refused_naming_one(spark: Any) -> None:
    rows = [change("upsert", 1, 1, "a"), change("insert", 2, 2, "b"), change("merge", 3, 3, "c")]
    expected = r"^table shop\.t: unknown _cdc_op 'merge'; expected one of insert, update, delete, truncate$"
    with pytest.raises(ConfigError, match=expected):
        summary_of(spark, rows)
    with pytest.raises(ConfigError, match=r"unknown _cdc_op 'null'; expected"):
        summary_of(spark, [change("insert", 1, 1, "a"), (2, "b", None, None, (2, 0, 2, 0), None)])


def test_the_summary_aggregates_by_hash_without_sorting_the_changes(spark: Any) -> None:
    """min() of a string or max() of a sequence struct alone make Spark sort every change of the batch by table
    before it aggregates (0.1 s of a table's batch at 10^6 changes); with one aggregate that keeps a buffer of its
    own (the set of unknown operations), Spark hashes them."""
    frame = scanned_frame(spark, [change("insert", 1, 1, "a"), change("truncate", 2, None)], SCHEMA)
    spec = build_spec(frame, table="shop.t", keys=["id"])
    with temporary_views(spark, frame, prefix="cdc_test") as (view,):
        statement = _aggregate_sql(_rows_sql(Pending(frame, spec), view, sequence_type(frame, spec)))
        plan = str(spark.sql(statement)._jdf.queryExecution().executedPlan().toString())
    assert "ObjectHashAggregate" in plan and "SortAggregate" not in plan and "Sort [" not in plan, plan


@pytest.mark.parametrize(
    ("sequence", "shown"),
    [
        ("map<string,int>", "map<string,int>"),
        ("array<bigint>", "array<bigint>"),
        ("binary", "binary"),
        ("struct<commit_ts:bigint,parts:array<int>>", "array<int>"),  # a field without order
    ],
)
def test_sequences_without_an_order_are_refused(spark: Any, sequence: str, shown: str) -> None:
    changes = scanned_frame(spark, [], f"id int, _cdc_op string, seq {sequence}")
    spec = build_spec(changes, table="shop.t", keys=["id"], sequence_by="seq")
    message = f"^table shop.t: sequence_by column seq of type {shown} has no order$"
    with pytest.raises(ConfigError, match=message.replace("<", r"\<").replace("(", r"\(")):
        summarize(changes, spec, None)


def test_a_variant_sequence_is_refused_and_orderable_types_pass() -> None:
    from pyspark.sql import types as T

    with pytest.raises(ConfigError, match="of type variant has no order"):
        check_orderable(T.VariantType(), "shop.t", "seq")
    nested = T.StructType([T.StructField("a", T.StructType([T.StructField("b", T.StringType())]))])
    for data_type in (nested, T.LongType(), T.StringType(), T.TimestampType(), T.DecimalType(20, 0)):
        check_orderable(data_type, "shop.t", "seq")


def test_sequence_time_is_commit_ts_else_the_first_field_else_the_value(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = scanned_frame(
        spark, [((7, 100), (8, 200), 300)], "a struct<epoch:int,commit_ts:bigint>, b struct<x:int,y:bigint>, c bigint"
    )
    types = {f.name: f.dataType for f in frame.schema.fields}
    row = frame.select(*[sequence_time(F.col(c), types[c]).alias(c) for c in "abc"]).collect()[0]
    assert (row["a"], row["b"], row["c"]) == (100, 8, 300)


def test_storable_turns_day_time_intervals_into_microseconds(spark: Any) -> None:
    frame = scanned_frame(
        spark,
        [(1, dt.timedelta(hours=-838, seconds=-59), dt.timedelta(seconds=1, microseconds=5), dt.timedelta(0))],
        "id int, t interval day to second, u interval day to second, other interval day to second",
    )
    result = storable(frame, ("id", "t", "u"))
    assert [f.dataType.simpleString() for f in result.schema.fields] == [
        "int",
        "bigint",
        "bigint",
        "interval day to second",
    ]
    assert tuple(result.collect()[0]) == (1, -(838 * 3600 + 59) * 1_000_000, 1_000_005, dt.timedelta(0))


def _ordered(
    spark: Any, rows: list[tuple[Any, ...]], stored: str | None = None, schema: str = SCHEMA, **kw: Any
) -> list[Any]:
    changes = scanned_frame(spark, rows, schema)
    spec = build_spec(changes, table="shop.t", keys=["id"], **kw)
    frame = ordered(changes, spec, summarize(changes, spec, stored))
    return sorted(frame.collect(), key=lambda r: (r[ORDER]["s"], r[ORDER]["r"], r[ORDER]["h"]))


def test_ordered_drops_truncates_and_changes_at_or_before_the_floor(spark: Any) -> None:
    rows = [
        change("insert", 2, 1, "a"),
        change("truncate", 4, None),
        change("update", 4, 1, "b"),  # at the floor: dropped
        (1, "c", None, "update", (4, 0, 4, 1), None),  # after it in the same commit
        change("update", 6, 1, "d"),
    ]
    got = [(r["name"], tuple(r["_cdc_sequence"])) for r in _ordered(spark, rows)]
    assert got == [("c", (4, 0, 4, 1)), ("d", (6, 0, 6, 0))]
    assert [r["name"] for r in _ordered(spark, rows[:1] + rows[2:], stored=floor_of(3))] == ["b", "c", "d"]


def test_ordered_adds_a_total_order_and_the_commit_time(spark: Any) -> None:
    rows = [
        change("delete", 5, 1),
        change("update", 5, 1, "a", "1.00"),
        change("update", 5, 1, "b", "1.00"),
        change("update", 3, 1, "b", "1.00", ["name"]),
    ]
    got = _ordered(spark, rows)
    summary = [(r["_cdc_op"], r["name"], tuple(r[ORDER]["s"]), r[ORDER]["r"], r[TIME]) for r in got]
    assert summary[0] == ("update", "b", (3, 0, 3, 0), 0, 3)
    assert sorted(summary[1:3]) == [("update", "a", (5, 0, 5, 0), 0, 5), ("update", "b", (5, 0, 5, 0), 0, 5)]
    assert summary[3] == ("delete", None, (5, 0, 5, 0), 1, 5)  # deletes last among equal sequences
    # the tiebreak hashes the operation and every written column, not the changed-columns list
    hashes = {r["name"]: r[ORDER]["h"] for r in got if r["_cdc_op"] == "update" and r[ORDER]["s"][0] == 5}
    assert hashes["a"] != hashes["b"]
    same = _ordered(spark, [change("update", 5, 1, "b", "1.00", ["name"])])[0][ORDER]["h"]
    assert same == hashes["b"]  # same content, other changed-columns list
    for other in (
        change("insert", 5, 1, "b", "1.00"),
        change("update", 5, 1, "b", "2.00"),
        change("update", 5, 2, "b", "1.00"),
    ):
        assert _ordered(spark, [other])[0][ORDER]["h"] != hashes["b"]


def test_ordered_makes_written_intervals_storable_and_keeps_scalar_sequences(spark: Any) -> None:
    schema = "id int, t interval day to second, _cdc_op string, seq bigint"
    rows = [(1, dt.timedelta(seconds=2), "insert", 10), (1, dt.timedelta(seconds=3), "update", 5)]
    got = _ordered(spark, rows, schema=schema, sequence_by="seq")
    assert [(r["t"], r[ORDER]["s"], r[TIME]) for r in got] == [(3_000_000, 5, 5), (2_000_000, 10, 10)]
    # metadata columns are written too
    schema = f"id int, _cdc_op string, _cdc_sequence {SEQ}, _cdc_elapsed interval day to second"
    got = _ordered(
        spark, [(1, "insert", (1, 0, 1, 0), dt.timedelta(seconds=1))], schema=schema, metadata=["_cdc_elapsed"]
    )
    assert got[0]["_cdc_elapsed"] == 1_000_000
