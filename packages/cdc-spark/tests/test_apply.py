"""apply_changes on the shared SparkSession into Delta Lake and Iceberg tables, both written by Spark and read back
without Spark (``deltalake``, ``pyiceberg``), on change frames in the decode contract's shape.

Every semantic runs on both table formats: the merge rules are one SQL generator, the formats differ in how the
statements are committed and marked.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import multiprocessing
import os
import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest

from cdc_core.errors import ConfigError
from cdc_spark import demo, expression_mode
from cdc_spark.apply import SchemaEvolutionError, apply_changes, apply_tables
from cdc_spark.expression_mode import FACTORY_MODE
from cdc_spark.merge import build_spec
from cdc_spark.merge.analyzed_plans import AnalyzedPlans
from cdc_spark.sinks import BatchInfo, load_sink, one_task
from cdc_spark.sinks.scd1_batch import Scd1Batch
from cdc_testing.spark_frames import scanned_frame
from cdc_testing.spark_plans import jobs_started
from cdc_testing.targets import delta_commit_metadata, key_state

pytestmark = pytest.mark.spark

FORMATS = ["delta", "iceberg"]
TABLE = "shop.t"
T = TypeVar("T")
SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
CHANGED = "_cdc_changed_columns array<string>"
SCHEMA = f"id int, name string, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}, {CHANGED}"


def read_table(target: str, table: str, fmt: str) -> Any:
    """The format's independent reader (delta-rs, pyiceberg). Under ``nox -s mutate`` the tests run in processes
    forked from the one that ran them first, and delta-rs refuses a process forked after it started its runtime:
    there it reads in a fresh interpreter."""
    if fmt == "delta":
        return _delta_rs(demo.read_table, target, table, fmt)
    return demo.read_table(target, table, fmt)


def state_of(target: Path, fmt: str) -> dict[int, dict[str, Any]]:
    """The table's SCD1 key state by key (its one integer key column), read by the format's independent reader."""
    rows = _delta_rs(key_state, str(target), TABLE, fmt) if fmt == "delta" else key_state(str(target), TABLE, fmt)
    return {int(key[0]): row for key, row in rows.items()}


def _delta_rs(read: Callable[..., T], *args: Any) -> T:
    """``read(*args)``, a delta-rs read: in a fresh interpreter under ``nox -s mutate`` (see :func:`read_table`)."""
    if os.environ.get("CDC_TEST_SPARK_KEEP") == "1":
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            return pool.apply(read, args)
    return read(*args)


def change(
    op: str, ts: int, key: int, name: str | None = None, amount: str | None = None, changed: Any = None
) -> tuple[Any, ...]:
    return (key, name, None if amount is None else Decimal(amount), op, (ts, 0, ts, 0), changed)


def frame(spark: Any, rows: list[tuple[Any, ...]], schema: str = SCHEMA) -> Any:
    return scanned_frame(spark, rows, schema)


# How a batch writes the key state: its tables' partitions replaced whole (what these small tables get by default),
# or MERGEd into (what a batch of a few changes to a large table gets): tests of the key state's rules run both
KEY_WRITES = ["replace", "merge"]


def apply(
    spark: Any, rows: list[tuple[Any, ...]], target: Path, fmt: str, key_write: str = "replace", **kwargs: Any
) -> bool:
    """One batch of ``rows`` applied to the tables under ``target``, the key state written as ``key_write`` says."""
    sink: Any = str(target)
    if key_write == "merge":
        sink = attrs.evolve(load_sink(fmt, spark, str(target)), replace_rows=0, replace_factor=0)
    return apply_changes(frame(spark, rows), sink, ["id"], table=TABLE, table_format=fmt, **kwargs)


def last_key_write(target: Path, fmt: str) -> str:
    """How the key state's newest commit wrote it, read without Spark: ``replace`` or ``merge``."""
    if fmt == "delta":
        operation = _delta_rs(_delta_last_operation, str(target / "_cdc_keys"))
        return {"WRITE Overwrite": "replace", "MERGE": "merge"}.get(operation, operation)
    snapshot = _iceberg_table(target / "_cdc_keys").current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    # Iceberg records a dynamic partition overwrite as such; a MERGE commits a plain overwrite
    return "replace" if snapshot.summary.additional_properties.get("replace-partitions") == "true" else "merge"


def live(target: Path, fmt: str) -> dict[int, tuple[Any, ...]]:
    """The target read by the format's independent reader; its columns must be exactly the source's."""
    rows = read_table(str(target), TABLE, fmt)
    assert rows.column_names == ["id", "name", "amount"]
    return {r["id"]: (r["name"], r["amount"]) for r in rows.to_pylist()}


# a change frame as build_spec checks it: two table columns and the change's operation and sequence
SPEC_FRAME = "id int, name string, _cdc_op string, _cdc_sequence bigint"


def test_a_spec_left_to_its_defaults_is_scd1_by_the_change_sequence(spark: Any) -> None:
    # what the job and a library caller get without naming them (docs/spark.md): SCD1, changes ordered by
    # `_cdc_sequence`, deletes remembered for 7 days, no metadata columns written
    changes = spark.createDataFrame([(1, "a", "insert", 5)], SPEC_FRAME)
    spec = build_spec(changes, table="shop.t", keys=["id"])
    assert (spec.scd, spec.sequence_by, spec.tombstone_retention) == (1, "_cdc_sequence", dt.timedelta(days=7))
    assert (spec.columns, spec.track_columns, spec.metadata) == (("id", "name"), None, ())
    without = changes.withColumnRenamed("_cdc_sequence", "seq")
    with pytest.raises(ConfigError, match="sequence_by column '_cdc_sequence' is not in the change frame"):
        build_spec(without, table="shop.t", keys=["id"])


def test_a_spec_carries_what_the_caller_chose(spark: Any) -> None:
    # SCD2 ordered by a table column (written like the others), tracking one column, with the metadata asked for
    frame = "id int, name string, qty int, updated_at bigint, _cdc_op string, _cdc_commit_ts bigint"
    changes = spark.createDataFrame([(1, "a", 2, 5, "insert", 9)], frame)
    spec = build_spec(
        changes, table="shop.t", keys=["id"], sequence_by="updated_at", scd=2, track_columns=["id", "qty"],
        tombstone_retention=dt.timedelta(hours=3), metadata=["_cdc_commit_ts"],
    )  # fmt: skip
    assert (spec.table, spec.keys, spec.scd, spec.sequence_by) == ("shop.t", ("id",), 2, "updated_at")
    assert (spec.columns, spec.track_columns) == (("id", "name", "qty", "updated_at"), ("qty",))
    assert (spec.tombstone_retention, spec.metadata) == (dt.timedelta(hours=3), ("_cdc_commit_ts",))


@pytest.mark.parametrize(
    ("choice", "columns"),
    [
        ({}, ("id", "name", "qty")),
        ({"include_columns": ["qty"]}, ("id", "qty")),
        ({"exclude_columns": ["name"]}, ("id", "qty")),
        ({"include_columns": ["name", "qty"], "exclude_columns": ["qty", "id"]}, ("id", "name")),
    ],
)
def test_a_spec_writes_the_chosen_columns_and_always_the_keys(
    spark: Any, choice: dict[str, list[str]], columns: tuple[str, ...]
) -> None:
    frame = "id int, name string, qty int, _cdc_op string, _cdc_sequence bigint"
    changes = spark.createDataFrame([(1, "a", 2, "insert", 5)], frame)
    assert build_spec(changes, table="shop.t", keys=["id"], **choice).columns == columns


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"scd": 3}, r"^scd must be 1 or 2, not 3$"),
        ({"keys": []}, r"^table shop\.t: no key columns; pass keys"),
        ({"drop": "_cdc_op"}, r"^table shop\.t: the change frame has no _cdc_op column$"),
        ({"metadata": ["_cdc_commit_ts"]}, r"^table shop\.t: metadata columns \['_cdc_commit_ts'\] are not in the"),
        ({"track_columns": ["nope"]}, r"^table shop\.t: track_columns names columns not written \['nope'\]$"),
        ({"include_columns": ["name", "nope"]}, r"^table shop\.t: include_columns names unknown columns \['nope'\]$"),
        ({"keys": ["id", "nope"]}, r"^table shop\.t: key columns \['nope'\] are not columns of the change frame"),
    ],
)
def test_a_spec_that_does_not_fit_its_change_frame_is_refused_with_the_reason(
    spark: Any, settings: dict[str, Any], message: str
) -> None:
    changes = spark.createDataFrame([(1, "a", "insert", 5)], SPEC_FRAME)
    settings = {"keys": ["id"], **settings}
    if "drop" in settings:
        changes = changes.drop(settings.pop("drop"))
    with pytest.raises(ConfigError, match=message):
        build_spec(changes, table="shop.t", **settings)


@pytest.mark.filterwarnings("ignore:Cannot infer the eval type")  # a plain Python UDF, typed for the checker
@pytest.mark.parametrize(("fmt", "scd"), [("delta", 1), ("iceberg", 1), ("delta", 2)])
def test_a_cached_change_frame_is_read_from_its_cache_and_left_cached(
    spark: Any, tmp_path: Path, fmt: str, scd: int
) -> None:
    # a caller that caches its batch (to apply it, then count or route it) must not have the apply free that cache:
    # every read of the batch after the first statement over it would compute it again from its source (Kafka, a
    # decode), and a source that changed in between would give other rows. The ids pass a counting function, so a
    # computation of the frame beyond the one that filled the cache shows.
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    computed = spark.sparkContext.accumulator(0)

    def counted(key: int) -> int:
        computed.add(1)
        return key

    rows = [
        change("insert", 1, 1, "a", "1.00"),
        change("insert", 2, 2, "b", "2.00"),
        change("update", 3, 1, "c", "3.00"),
    ]
    changes = frame(spark, rows).withColumn("id", F.udf(counted, IntegerType())("id")).cache()
    try:
        assert changes.count() == 3 and computed.value == 3
        apply_changes(changes, str(tmp_path), ["id"], table=TABLE, table_format=fmt, scd=scd)
        assert computed.value == 3  # every read came from the cache
        assert spark._jsparkSession.sharedState().cacheManager().lookupCachedData(changes._jdf).isDefined()
    finally:
        changes.unpersist()
    names = {
        r["id"]: r["name"] for r in read_table(str(tmp_path), TABLE, fmt).to_pylist() if scd == 1 or r["name"] != "a"
    }
    assert names == {1: "c", 2: "b"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_shuffled_duplicates_and_out_of_order_batches_end_in_source_state(spark: Any, tmp_path: Path, fmt: str) -> None:
    rng = random.Random(7)
    state: dict[int, tuple[Any, ...]] = {}
    events: list[tuple[Any, ...]] = []
    for ts in range(1, 201):
        key = rng.randrange(20)
        if key in state and rng.random() < 0.25:
            events.append(change("delete", ts, key))
            del state[key]
        else:
            name, amount = f"n{ts}", f"{rng.randrange(10**6)}.{rng.randrange(100):02d}"
            events.append(change("update" if key in state else "insert", ts, key, name, amount))
            state[key] = (name, Decimal(amount))
    replayed = events + rng.sample(events, 60)  # at-least-once: replays of earlier messages
    rng.shuffle(replayed)
    for index, part in enumerate((replayed[:90], replayed[90:180], replayed[180:])):
        apply(spark, part, tmp_path, fmt, batch=BatchInfo(app_id="t", batch_id=index))
    assert live(tmp_path, fmt) == state


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_late_older_upsert_does_not_resurrect_a_deleted_row(
    spark: Any, tmp_path: Path, fmt: str, key_write: str
) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")], tmp_path, fmt)
    apply(spark, [change("delete", 10, 1), change("insert", 11, 3, "c", "3.00")], tmp_path, fmt, key_write)
    late = [change("update", 5, 1, "stale", "9.00"), change("update", 1, 2, "old", "0.00")]
    apply(spark, late, tmp_path, fmt, key_write)
    assert live(tmp_path, fmt) == {2: ("b", Decimal("2.00")), 3: ("c", Decimal("3.00"))}
    assert last_key_write(tmp_path, fmt) == key_write


@pytest.mark.parametrize("fmt", FORMATS)
def test_tombstones_expire_after_the_retention(spark: Any, tmp_path: Path, fmt: str) -> None:
    clock = [dt.datetime.now(dt.UTC)]
    sink = load_sink(fmt, spark, str(tmp_path))
    sink.clock = lambda: clock[0]
    retention = dt.timedelta(hours=1)

    def tombstones() -> int:
        return sum(1 for row in state_of(tmp_path, fmt).values() if row["__cdc_deleted_at"] is not None)

    rows = [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "x", "1.00"), change("delete", 3, 2)]
    apply_changes(frame(spark, rows), sink, ["id"], table=TABLE, tombstone_retention=retention)
    assert tombstones() == 1
    clock[0] += dt.timedelta(hours=2)
    later = frame(spark, [change("update", 4, 1, "b", "2.00")])
    apply_changes(later, sink, ["id"], table=TABLE, tombstone_retention=retention)
    assert tombstones() == 0
    assert live(tmp_path, fmt) == {1: ("b", Decimal("2.00"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_partial_updates_keep_untouched_columns(spark: Any, tmp_path: Path, fmt: str) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt)
    batch = [
        change("update", 2, 1, None, "5.00", ["amount"]),  # name not carried: must survive
        change("update", 3, 1, "z", None, ["name"]),
        change("update", 4, 2, "new", None, ["name"]),
    ]
    apply(spark, batch, tmp_path, fmt)
    assert live(tmp_path, fmt) == {1: ("z", Decimal("5.00")), 2: ("new", None)}


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_columns_follow_the_newest_change_that_set_them(spark: Any, tmp_path: Path, fmt: str, key_write: str) -> None:
    first = [
        change("insert", 1, 1, "a", "1.00"),
        change("update", 2, 1, None, "2.00", ["amount"]),
        change("update", 5, 1, "b", None, ["name"]),
    ]
    apply(spark, first, tmp_path, fmt)
    # Re-delivered, the original insert (sequence 1) must not replace 2.00 or "b"; a late partial update at 3
    # sets amount after the 2.00 of sequence 2 and before the row's newest change (5, which set only name).
    second = [change("insert", 1, 1, "a", "1.00"), change("update", 3, 1, None, "3.00", ["amount"])]
    apply(spark, second, tmp_path, fmt, key_write)
    assert live(tmp_path, fmt) == {1: ("b", Decimal("3.00"))}
    # another key's change: the key state is written, key 1's partial-update sequences kept as they were
    apply(spark, [change("insert", 6, 2, "x", "1.00")], tmp_path, fmt, key_write)
    apply(spark, [change("update", 4, 1, "late", None, ["name"])], tmp_path, fmt, key_write)  # older than name's 5
    assert live(tmp_path, fmt) == {1: ("b", Decimal("3.00")), 2: ("x", Decimal("1.00"))}


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_truncate_removes_earlier_rows_and_keeps_later_ones(
    spark: Any, tmp_path: Path, fmt: str, key_write: str
) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")], tmp_path, fmt)
    apply(spark, [change("insert", 6, 6, "f", "6.00")], tmp_path, fmt)  # arrives before the older truncate
    batch = [change("insert", 3, 3, "c", "3.00"), change("truncate", 4, 0), change("insert", 5, 4, "d", "4.00")]
    apply(spark, batch, tmp_path, fmt, key_write)
    # before the truncate: ignored; the batch's other change writes the key state, which keeps the truncate
    apply(
        spark, [change("update", 3, 5, "late", "0.00"), change("insert", 7, 7, "g", "7.00")], tmp_path, fmt, key_write
    )
    apply(spark, [change("insert", 2, 8, "late", "0.00")], tmp_path, fmt, key_write)  # still ignored
    assert live(tmp_path, fmt) == {4: ("d", Decimal("4.00")), 6: ("f", Decimal("6.00")), 7: ("g", Decimal("7.00"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncate_in_a_tables_first_batch_is_recorded(spark: Any, tmp_path: Path, fmt: str) -> None:
    """The first batch creates the state table; the truncate's floor must be stored with it (a real producer's
    first read often holds a TRUNCATE) so that a later, older change stays dropped."""
    batch = [change("insert", 1, 1, "a", "1.00"), change("truncate", 2, 0), change("insert", 3, 2, "b", "2.00")]
    apply(spark, batch, tmp_path, fmt)
    assert live(tmp_path, fmt) == {2: ("b", Decimal("2.00"))}
    apply(spark, [change("update", 1, 3, "late", "0.00")], tmp_path, fmt)  # before the truncate: ignored
    assert live(tmp_path, fmt) == {2: ("b", Decimal("2.00"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_key_state_is_replaced_where_a_batch_changes_much_of_it_and_merged_into_elsewhere(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    # replaced when the table's state holds at most 2 rows or twice the batch's changes
    sink = attrs.evolve(load_sink(fmt, spark, str(tmp_path)), replace_rows=2, replace_factor=2)

    def run(rows: list[tuple[Any, ...]]) -> str:
        apply_changes(frame(spark, rows), sink, ["id"], table=TABLE)
        return last_key_write(tmp_path, fmt)

    assert run([change("insert", key, key, f"n{key}", "1.00") for key in range(1, 7)]) == "replace"  # new: empty
    assert run([change("update", 10, 1, "x", "2.00")]) == "merge"  # 6 rows, 1 change
    assert run([change("update", 10 + key, key, f"y{key}", "3.00") for key in (2, 3, 4)]) == "replace"  # 3 changes
    assert run([change("delete", 20, 5)]) == "merge"
    sequences = {key: row["__cdc_sequence"]["commit_ts"] for key, row in state_of(tmp_path, fmt).items()}
    assert sequences == {1: 10, 2: 12, 3: 13, 4: 14, 5: 20, 6: 6}
    assert live(tmp_path, fmt) == {
        1: ("x", Decimal("2.00")),
        **{key: (f"y{key}", Decimal("3.00")) for key in (2, 3, 4)},
        6: ("n6", Decimal("1.00")),
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_batch_leaves_no_checkpoint_of_its_own_behind(spark: Any, tmp_path: Path, fmt: str) -> None:
    # the resolve's checkpoint is freed once the key state is written, not when the JVM collects it
    persisted = spark.sparkContext._jsc.getPersistentRDDs
    first = frame(spark, [change("insert", 1, key, f"n{key}", "1.00") for key in range(1, 5)])
    later = frame(spark, [change("update", 2, 2, "x", "2.00"), change("delete", 3, 3)])
    before = set(persisted().keySet())
    apply_changes(first, str(tmp_path), ["id"], table=TABLE, table_format=fmt)
    apply_changes(later, str(tmp_path), ["id"], table=TABLE, table_format=fmt)
    # none of the batch's own is left (other tests' may be collected meanwhile: the session is shared)
    assert set(persisted().keySet()) <= before
    assert live(tmp_path, fmt) == {1: ("n1", Decimal("1.00")), 2: ("x", Decimal("2.00")), 4: ("n4", Decimal("1.00"))}


def test_the_delta_key_state_keeps_row_counts_but_no_column_statistics(spark: Any, tmp_path: Path) -> None:
    # its row counts choose between replacing and MERGEing (the test above); no read filters it by a column's range
    apply(spark, [change("insert", key, key, f"n{key}", "1.00") for key in range(1, 5)], tmp_path, "delta")
    apply(spark, [change("update", 9, 2, "x", "2.00")], tmp_path, "delta", key_write="merge")
    files = _delta_rs(_delta_add_actions, str(tmp_path / "_cdc_keys"))
    assert sum(f["num_records"] for f in files) == 4
    assert all(not any(name.startswith(("min.", "max.")) for name in f) for f in files), files
    assert state_of(tmp_path, "delta")[2]["__cdc_sequence"]["commit_ts"] == 9


def _delta_add_actions(path: str) -> list[dict[str, Any]]:
    """The data files of the Delta table at ``path`` with their statistics, as delta-rs flattens them."""
    import pyarrow as pa
    from deltalake import DeltaTable

    table = DeltaTable(path)
    actions = pa.table(table.get_add_actions(flatten=True))  # an Arrow table of another library, read by pyarrow
    return [{k: v for k, v in row.items() if v is not None} for row in actions.to_pylist()]


@pytest.mark.parametrize("fmt", FORMATS)
def test_limits_of_zero_merge_every_batch_into_the_key_state_without_counting_its_rows(
    spark: Any, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``replace_rows=0, replace_factor=0``: the key state is MERGEd into from its first batch on, even where the
    table's partition is empty, and its rows are never counted."""
    sink = attrs.evolve(load_sink(fmt, spark, str(tmp_path)), replace_rows=0, replace_factor=0)
    format_type = type(sink.format)

    def uncounted(*_args: Any) -> None:
        raise AssertionError("the key state's rows were counted")

    monkeypatch.setattr(format_type, "rows_by_partition", uncounted)
    apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), sink, ["id"], table=TABLE)
    assert last_key_write(tmp_path, fmt) == "merge"
    apply_changes(frame(spark, [change("update", 2, 1, "b", "2.00")]), sink, ["id"], table=TABLE)
    assert last_key_write(tmp_path, fmt) == "merge"
    assert live(tmp_path, fmt) == {1: ("b", Decimal("2.00"))}


def spy_expression_modes(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str | None]]:
    """The expression factory mode the session had while each table was resolved and written (``target``) and
    while the key state was written (``state``), in order."""
    seen: dict[str, list[str | None]] = {"target": [], "state": []}
    table, state = Scd1Batch._resolve_and_write, Scd1Batch._write_state

    def resolve_and_write(self: Scd1Batch, session: Any, *args: Any, **kwargs: Any) -> Any:
        seen["target"].append(session.conf.get(FACTORY_MODE, None))
        return table(self, session, *args, **kwargs)

    def write_state(self: Scd1Batch, *args: Any, **kwargs: Any) -> Any:
        seen["state"].append(self.spark.conf.get(FACTORY_MODE, None))
        return state(self, *args, **kwargs)

    monkeypatch.setattr(Scd1Batch, "_resolve_and_write", resolve_and_write)
    monkeypatch.setattr(Scd1Batch, "_write_state", write_state)
    return seen


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_of_few_rows_is_written_with_interpreted_expressions_and_a_larger_one_compiled(
    spark: Any, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each table chooses by the rows its write reads (its stored keys and its changes, counted from the key
    state's metadata), the key state by all of them; the session's setting is restored after the batch."""
    seen = spy_expression_modes(monkeypatch)
    apply(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")], tmp_path, fmt)
    assert seen == {"target": ["NO_CODEGEN"], "state": ["NO_CODEGEN"]}
    monkeypatch.setattr(expression_mode, "INTERPRETED_ROWS", 3)  # 2 stored keys and 1 change: too many
    apply(spark, [change("update", 3, 1, "c", "3.00")], tmp_path, fmt)
    assert seen == {"target": ["NO_CODEGEN", "FALLBACK"], "state": ["NO_CODEGEN", "FALLBACK"]}
    assert spark.conf.get(FACTORY_MODE, None) is None
    assert live(tmp_path, fmt) == {1: ("c", Decimal("3.00")), 2: ("b", Decimal("2.00"))}


def test_an_expression_mode_in_the_spark_configuration_is_the_users_and_kept(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_expression_modes(monkeypatch)
    conf = spark.sparkContext._conf
    conf.set(FACTORY_MODE, "FALLBACK")
    try:
        apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, "delta")
    finally:
        conf._jconf.remove(FACTORY_MODE)
    assert seen == {"target": [None], "state": [None]}
    assert live(tmp_path, "delta") == {1: ("a", Decimal("1.00"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_replacing_a_tables_key_state_leaves_the_other_tables_state(spark: Any, tmp_path: Path, fmt: str) -> None:
    other = "shop.u"
    apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt)
    apply_changes(
        frame(spark, [change("insert", 2, 5, "u", "5.00")]), str(tmp_path), ["id"], table=other, table_format=fmt
    )
    apply(spark, [change("update", 3, 1, "b", "2.00")], tmp_path, fmt)
    assert last_key_write(tmp_path, fmt) == "replace"
    kept = _delta_rs(key_state, str(tmp_path), other, fmt) if fmt == "delta" else key_state(str(tmp_path), other, fmt)
    assert {key: row["__cdc_sequence"]["commit_ts"] for key, row in kept.items()} == {("5",): 2}
    assert {key: row["__cdc_sequence"]["commit_ts"] for key, row in state_of(tmp_path, fmt).items()} == {1: 3}


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_tables_of_one_shape_in_a_batch_each_get_their_own_rows(
    spark: Any, tmp_path: Path, fmt: str, key_write: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables of one shape share their resolve's analyzed plan within a batch (two side by side): each still ends in
    its own source state, with a late older change, a delete and a truncate in one table of the batch only."""
    used: list[AnalyzedPlans] = []
    sql = AnalyzedPlans.sql

    def kept(self: AnalyzedPlans, *args: Any, **kwargs: Any) -> Any:
        used.append(self)
        return sql(self, *args, **kwargs)

    monkeypatch.setattr(AnalyzedPlans, "sql", kept)
    sink: Any = load_sink(fmt, spark, str(tmp_path))
    if key_write == "merge":
        sink = attrs.evolve(sink, replace_rows=0, replace_factor=0)
    tables = ["shop.t", "shop.u", "shop.v", "shop.w"]

    def batch(number: int, rows: dict[str, list[tuple[Any, ...]]]) -> None:
        specs = [(frame(spark, rows[table]), table) for table in tables]
        built = [(changes, build_spec(changes, table=table, keys=["id"])) for changes, table in specs]
        apply_tables(built, sink, BatchInfo(app_id="shape", batch_id=number), parallelism=2)

    batch(0, {t: [change("insert", 10, k, f"{t} {k}", f"{k}.00") for k in (1, 2, 3)] for t in tables})
    batch(
        1,
        {
            "shop.t": [change("update", 20, 1, "t one", "1.50"), change("delete", 21, 2)],
            "shop.u": [change("update", 5, 1, "u too late", "9.99"), change("insert", 20, 4, "u 4", "4.00")],
            "shop.v": [change("truncate", 20, 0), change("insert", 21, 3, "v again", "3.30")],
            "shop.w": [change("update", 20, 3, "w three", "3.00")],
        },
    )
    assert max(plans.reused for plans in used) >= 2  # the first batch: the two tables planned after the first two
    expected = {
        "shop.t": {1: ("t one", Decimal("1.50")), 3: ("shop.t 3", Decimal("3.00"))},
        "shop.u": {1: ("shop.u 1", Decimal("1.00")), 2: ("shop.u 2", Decimal("2.00")),
                   3: ("shop.u 3", Decimal("3.00")), 4: ("u 4", Decimal("4.00"))},
        "shop.v": {3: ("v again", Decimal("3.30"))},
        "shop.w": {1: ("shop.w 1", Decimal("1.00")), 2: ("shop.w 2", Decimal("2.00")),
                   3: ("w three", Decimal("3.00"))},
    }  # fmt: skip
    for table, rows in expected.items():
        read = read_table(str(tmp_path), table, fmt).to_pylist()
        assert {r["id"]: (r["name"], r["amount"]) for r in read} == rows, table


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_batch_of_few_rows_runs_each_tables_work_as_one_task(
    spark: Any, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables of few stored keys and changes are resolved (and on Delta rewritten) from inputs in one partition, so
    no shuffle runs as a Spark job of its own: fewer jobs than the same batches with every input as it comes, and
    the same rows, with a late older change, a delete and a truncate among them."""

    def run(target: Path) -> int:
        sink: Any = load_sink(fmt, spark, str(target))
        tables = ["shop.t", "shop.u"]

        def batch(number: int, rows: dict[str, list[tuple[Any, ...]]]) -> int:
            built = [(frame(spark, rows[t]), t) for t in tables]
            specs = [(changes, build_spec(changes, table=table, keys=["id"])) for changes, table in built]
            applied = functools.partial(
                apply_tables, specs, sink, BatchInfo(app_id="one", batch_id=number), parallelism=2
            )
            return len(jobs_started(spark, f"one-task-{target.name}-{number}", applied))

        batch(0, {t: [change("insert", 10, k, f"{t} {k}", f"{k}.00") for k in (1, 2, 3)] for t in tables})
        jobs = batch(
            1,
            {
                "shop.t": [change("update", 20, 1, "t one", "1.50"), change("delete", 21, 2),
                           change("update", 5, 3, "t too late", "9.99")],
                "shop.u": [change("truncate", 20, 0), change("insert", 21, 3, "u again", "3.30")],
            },
        )  # fmt: skip
        expected = {
            "shop.t": {1: ("t one", Decimal("1.50")), 3: ("shop.t 3", Decimal("3.00"))},
            "shop.u": {3: ("u again", Decimal("3.30"))},
        }
        for table, rows in expected.items():
            read = read_table(str(target), table, fmt).to_pylist()
            assert {r["id"]: (r["name"], r["amount"]) for r in read} == rows, (target.name, table)
        return jobs

    one = run(tmp_path / "one")
    monkeypatch.setattr(one_task, "ONE_TASK_ROWS", 0)  # every input as it comes: its joins and window shuffle
    many = run(tmp_path / "many")
    assert one < many


def _iceberg_table(location: Path) -> Any:
    """The Iceberg table at ``location`` as of its latest metadata, read with pyiceberg (no catalog, no Spark)."""
    from pyiceberg.table import StaticTable

    version = (location / "metadata" / "version-hint.text").read_text().strip()
    return StaticTable.from_metadata(str(location / "metadata" / f"v{version}.metadata.json"))


def _committed_batches(tmp_path: Path, fmt: str) -> list[str]:
    """The offsets recorded by each commit of the target, oldest first, read without Spark."""
    location = tmp_path / "shop" / "t"
    if fmt == "delta":
        return [json.loads(m)["cdc.offsets"] for m in _delta_rs(delta_commit_metadata, str(location))]
    table = _iceberg_table(location)
    summaries = [s.summary for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)]
    return [s["cdc.offsets"] for s in summaries if s is not None and "cdc.offsets" in s.additional_properties]


@pytest.mark.parametrize("fmt", FORMATS)
def test_replaying_the_latest_committed_batch_is_a_noop(spark: Any, tmp_path: Path, fmt: str) -> None:
    first = BatchInfo(app_id="job", batch_id=0, offsets='{"t":{"0":1}}')
    latest = BatchInfo(app_id="job", batch_id=1, offsets='{"t":{"0":2}}')
    assert apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt, batch=first)
    assert apply(spark, [change("update", 2, 1, "b", "2.00")], tmp_path, fmt, batch=latest)
    # A replay of the latest batch id (the one a crash after its commits makes Spark run again) and of an
    # older one write nothing, whatever they hold; another app's batch 1 is applied.
    assert not apply(spark, [change("update", 9, 1, "replayed", "9.00")], tmp_path, fmt, batch=latest)
    assert not apply(spark, [change("update", 8, 1, "older", "8.00")], tmp_path, fmt, batch=first)
    assert live(tmp_path, fmt) == {1: ("b", Decimal("2.00"))}
    assert _committed_batches(tmp_path, fmt) == ['{"t":{"0":1}}', '{"t":{"0":2}}']
    other = BatchInfo(app_id="other", batch_id=1)
    assert apply(spark, [change("update", 10, 1, "c", "3.00")], tmp_path, fmt, batch=other)
    assert live(tmp_path, fmt) == {1: ("c", Decimal("3.00"))}


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_crash_between_target_and_state_is_repaired_by_the_replay(
    spark: Any, tmp_path: Path, fmt: str, key_write: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdc_spark.sinks.batch_write import BatchWrite

    apply(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")], tmp_path, fmt)
    writes = {method: getattr(BatchWrite, method) for method in ("merge", "replace_partitions")}

    def crashing(method: str) -> Callable[..., None]:
        def write(self: Any, name: str, *args: Any) -> None:
            if "_cdc_keys" in name:
                raise RuntimeError("killed before the state write")
            writes[method](self, name, *args)

        return write

    batch = BatchInfo(app_id="job", batch_id=3)
    rows = [change("update", 3, 1, None, "5.00", ["amount"]), change("delete", 4, 2)]
    for method in writes:
        monkeypatch.setattr(BatchWrite, method, crashing(method))
    with pytest.raises(RuntimeError, match="killed"):
        apply(spark, rows, tmp_path, fmt, batch=batch, key_write=key_write)
    assert live(tmp_path, fmt) == {1: ("a", Decimal("5.00"))}  # the target has the batch, the state not
    for method, write in writes.items():
        monkeypatch.setattr(BatchWrite, method, write)
    assert apply(spark, rows, tmp_path, fmt, batch=batch, key_write=key_write)  # the replay writes the state only
    assert not apply(spark, rows, tmp_path, fmt, batch=batch, key_write=key_write)
    assert last_key_write(tmp_path, fmt) == key_write
    state = state_of(tmp_path, fmt)
    assert state[1]["__cdc_sequence"]["commit_ts"] == 3 and state[2]["__cdc_deleted_at"] is not None
    apply(spark, [change("insert", 2, 2, "stale", "0.00")], tmp_path, fmt, key_write=key_write)  # 2 was deleted
    assert live(tmp_path, fmt) == {1: ("a", Decimal("5.00"))}


def _delta_last_operation(path: str) -> str:
    from deltalake import DeltaTable

    commit = DeltaTable(path).history(1)[0]
    mode = str(commit.get("operationParameters", {}).get("mode", ""))
    return f"{commit['operation']} {mode}".strip()


def last_write(tmp_path: Path, fmt: str) -> str:
    """How the target's newest commit wrote it, read without Spark: ``append``, ``merge`` or ``rewrite`` (a small
    Delta table rewritten whole instead of MERGEd)."""
    location = tmp_path / "shop" / "t"
    if fmt == "delta":
        operation = _delta_rs(_delta_last_operation, str(location))
        return {"WRITE Append": "append", "MERGE": "merge", "WRITE Overwrite": "rewrite"}.get(operation, operation)
    snapshot = _iceberg_table(location).current_snapshot()
    assert snapshot is not None and snapshot.summary is not None
    operation = snapshot.summary.operation.value
    return "append" if operation == "append" else "merge"  # a MERGE commits an overwrite


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_batch_of_new_rows_is_appended_and_one_that_meets_a_live_row_merged(
    spark: Any, tmp_path: Path, fmt: str
) -> None:
    def batch(number: int) -> BatchInfo:
        return BatchInfo(app_id="job", batch_id=number)

    def rows() -> int:
        return int(read_table(str(tmp_path), TABLE, fmt).num_rows)

    apply(
        spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")], tmp_path, fmt, batch=batch(0)
    )
    new_keys = [change("insert", 3, 3, "c", "3.00"), change("insert", 4, 4, "d", "4.00")]
    assert apply(spark, new_keys, tmp_path, fmt, batch=batch(1))
    assert last_write(tmp_path, fmt) == "append"
    assert not apply(spark, new_keys, tmp_path, fmt, batch=batch(1))  # the replay appends nothing again
    # an insert of a key whose row is live (a producer's replay after its restart, newer): the row is updated
    assert apply(spark, [change("insert", 5, 3, "c2", "3.50"), change("insert", 6, 5, "e", "5.00")], tmp_path, fmt)
    assert last_write(tmp_path, fmt) == ("rewrite" if fmt == "delta" else "merge")  # a small Delta table: rewritten
    # a late, older re-delivery of a live key's insert writes nothing, so the batch is appended
    assert apply(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 7, 6, "f", "6.00")], tmp_path, fmt)
    assert last_write(tmp_path, fmt) == "append"
    apply(spark, [change("delete", 8, 1)], tmp_path, fmt)
    assert apply(spark, [change("insert", 9, 1, "again", "9.00")], tmp_path, fmt)  # deleted: no row to meet
    assert last_write(tmp_path, fmt) == "append"
    expected = {
        1: ("again", Decimal("9.00")),
        2: ("b", Decimal("2.00")),
        3: ("c2", Decimal("3.50")),
        4: ("d", Decimal("4.00")),
        5: ("e", Decimal("5.00")),
        6: ("f", Decimal("6.00")),
    }
    assert live(tmp_path, fmt) == expected
    assert rows() == len(expected)  # no key twice


@pytest.mark.parametrize("fmt", FORMATS)
def test_scd2_history_of_a_key_updated_deleted_and_reinserted(spark: Any, tmp_path: Path, fmt: str) -> None:
    # delivered out of order across two batches, with a duplicate and an untracked-only change
    first = [change("insert", 10, 1, "a", "1.00"), change("delete", 30, 1), change("insert", 10, 1, "a", "1.00")]
    apply(spark, first, tmp_path, fmt, scd=2, track_columns=["name"])
    second = [change("update", 20, 1, "b", "2.00"), change("insert", 40, 1, "c", "3.00")]
    second.append(change("update", 25, 1, "b", "2.50"))
    apply(spark, second, tmp_path, fmt, scd=2, track_columns=["name"])
    rows = read_table(str(tmp_path), TABLE, fmt)
    assert rows.column_names == ["id", "name", "amount", "__start_at", "__end_at"]
    history = sorted((r["name"], r["amount"], r["__start_at"], r["__end_at"]) for r in rows.to_pylist())
    assert history == [
        ("a", Decimal("1.00"), 10, 20),
        ("b", Decimal("2.50"), 20, 30),  # amount is untracked: updated in place
        ("c", Decimal("3.00"), 40, None),
    ]
    apply(spark, [change("truncate", 50, 0), change("insert", 60, 2, "d", "4.00")], tmp_path, fmt, scd=2)
    rows = read_table(str(tmp_path), TABLE, fmt).to_pylist()
    assert sorted((r["id"], r["name"], r["__start_at"], r["__end_at"]) for r in rows) == [
        (1, "a", 10, 20),
        (1, "b", 20, 30),
        (1, "c", 40, 50),  # closed by the truncate
        (2, "d", 60, None),
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_schema_evolution_adds_and_widens_columns(spark: Any, tmp_path: Path, fmt: str) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt)
    wider = f"id bigint, name string, amount decimal(12,2), note string, _cdc_op string, _cdc_sequence {SEQ}"
    batch = frame(spark, [(2, "b", Decimal("12345678.50"), "hi", "insert", (2, 0, 2, 0))], wider)
    apply_changes(batch, str(tmp_path), ["id"], table=TABLE, table_format=fmt)
    narrower = frame(spark, [(3, "c", Decimal("3.00"), "insert", (3, 0, 3, 0))], SCHEMA.rsplit(",", 1)[0])
    apply_changes(narrower, str(tmp_path), ["id"], table=TABLE, table_format=fmt)  # cast up on write
    rows = read_table(str(tmp_path), TABLE, fmt)
    assert (str(rows.schema.field("id").type), str(rows.schema.field("amount").type)) == ("int64", "decimal128(12, 2)")
    assert sorted(rows.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a", "amount": Decimal("1.00"), "note": None},
        {"id": 2, "name": "b", "amount": Decimal("12345678.50"), "note": "hi"},
        {"id": 3, "name": "c", "amount": Decimal("3.00"), "note": None},
    ]
    # a key's text is the same before and after its column widens: one state row per key, whatever its type
    assert sorted(state_of(tmp_path, fmt)) == [1, 2, 3]
    apply(spark, [change("update", 0, 1, "stale", "0.00")], tmp_path, fmt)  # older than the state's insert of 1
    assert {r["id"]: r["name"] for r in read_table(str(tmp_path), TABLE, fmt).to_pylist()}[1] == "a"


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_batch_whose_key_type_is_narrower_meets_keys_stored_wider(
    spark: Any, tmp_path: Path, fmt: str, key_write: str
) -> None:
    wide = f"id bigint, name string, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}, {CHANGED}"
    big = 3_000_000_000  # beyond an int: no key of an int batch equals it
    first = [change("insert", 1, big, "big", "1.00"), change("insert", 1, 1, "a", "1.00")]
    apply_changes(frame(spark, first, wide), str(tmp_path), ["id"], table=TABLE, table_format=fmt)
    apply(spark, [change("update", 2, 1, "b", "2.00"), change("insert", 2, 2, "c", "3.00")], tmp_path, fmt, key_write)
    assert live(tmp_path, fmt) == {big: ("big", Decimal("1.00")), 1: ("b", Decimal("2.00")), 2: ("c", Decimal("3.00"))}
    assert sorted(state_of(tmp_path, fmt)) == [1, 2, big]
    apply(spark, [change("update", 1, 1, "stale", "0.00")], tmp_path, fmt, key_write)  # older than the state's
    assert live(tmp_path, fmt)[1] == ("b", Decimal("2.00"))


@pytest.mark.parametrize("key_write", KEY_WRITES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_narrower_key_equal_to_a_stored_one_only_once_rounded_is_another_key(
    spark: Any, tmp_path: Path, fmt: str, key_write: str
) -> None:
    def batch(key_type: str, rows: list[tuple[Any, ...]]) -> Any:
        return frame(spark, rows, f"id {key_type}, name string, _cdc_op string, _cdc_sequence {SEQ}")

    sink: Any = str(tmp_path)
    if key_write == "merge":
        sink = attrs.evolve(load_sink(fmt, spark, str(tmp_path)), replace_rows=0, replace_factor=0)
    apply_changes(batch("double", [(0.1, "wide", "insert", (1, 0, 1, 0))]), sink, ["id"], table=TABLE, table_format=fmt)
    # the float nearest 0.1 is not the double 0.1, though the double's text read as a float is that float
    apply_changes(
        batch("float", [(0.1, "narrow", "insert", (2, 0, 2, 0))]), sink, ["id"], table=TABLE, table_format=fmt
    )
    rows = read_table(str(tmp_path), TABLE, fmt).to_pylist()
    assert sorted((r["id"], r["name"]) for r in rows) == [(0.1, "wide"), (0.10000000149011612, "narrow")]
    stored = _delta_rs(key_state, str(tmp_path), TABLE, fmt) if fmt == "delta" else key_state(str(tmp_path), TABLE, fmt)
    assert sorted(stored) == [("0.1",), ("0.10000000149011612",)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_incompatible_type_change_is_a_typed_error(spark: Any, tmp_path: Path, fmt: str) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt)
    other = f"id int, name int, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}"
    with pytest.raises(SchemaEvolutionError) as error:
        apply_changes(
            frame(spark, [(2, 5, None, "insert", (2, 0, 2, 0))], other),
            str(tmp_path),
            ["id"],
            table=TABLE,
            table_format=fmt,
        )
    assert (error.value.table, error.value.column, error.value.old_type, error.value.new_type) == (
        TABLE,
        "name",
        "string",
        "int",
    )


@pytest.mark.parametrize(("fmt", "applied"), [("delta", True), ("iceberg", False)])
def test_a_widening_the_format_cannot_make_in_place(spark: Any, tmp_path: Path, fmt: str, applied: bool) -> None:
    apply(spark, [change("insert", 1, 1, "a", "1.00")], tmp_path, fmt)
    scaled = f"id int, name string, amount decimal(12,4), _cdc_op string, _cdc_sequence {SEQ}"
    batch = frame(spark, [(2, "b", Decimal("2.1234"), "insert", (2, 0, 2, 0))], scaled)
    if applied:  # Delta rewrites the table with the wider type
        apply_changes(batch, str(tmp_path), ["id"], table=TABLE, table_format=fmt)
        assert live(tmp_path, fmt) == {1: ("a", Decimal("1.0000")), 2: ("b", Decimal("2.1234"))}
    else:  # Iceberg only promotes a decimal's precision at the same scale
        with pytest.raises(SchemaEvolutionError, match="Iceberg widens in place only"):
            apply_changes(batch, str(tmp_path), ["id"], table=TABLE, table_format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_columns_only_when_asked(spark: Any, tmp_path: Path, fmt: str) -> None:
    schema = f"{SCHEMA}, _cdc_commit_ts bigint, _cdc_topic string, _cdc_partition int, _cdc_offset bigint"
    rows = [
        (*change("insert", 7, 1, "a", "1.00"), 7, "shop", 2, 70),
        (*change("update", 9, 1, "b", "2.00"), 9, "shop", 0, 90),
    ]
    columns = ("_cdc_commit_ts", "_cdc_op", "_cdc_topic", "_cdc_partition", "_cdc_offset")
    apply_changes(frame(spark, rows, schema), str(tmp_path), ["id"], table=TABLE, table_format=fmt,
                  metadata_columns=columns)  # fmt: skip
    stored = read_table(str(tmp_path), TABLE, fmt).to_pylist()
    assert stored == [
        {"id": 1, "name": "b", "amount": Decimal("2.00"), "_cdc_commit_ts": 9, "_cdc_op": "update",
         "_cdc_topic": "shop", "_cdc_partition": 0, "_cdc_offset": 90}
    ]  # fmt: skip


def test_unknown_sink_and_unknown_operation_are_config_errors(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"table format 'hudi' is not a known sink; installed: delta, iceberg"):
        load_sink("hudi", spark, str(tmp_path))
    with pytest.raises(ConfigError, match="unknown _cdc_op 'upsert'"):
        apply(spark, [change("upsert", 1, 1, "a", "1.00")], tmp_path, "delta")
    rows = [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, None, "2.00")]
    with pytest.raises(ConfigError, match=r"1 changes have no value in key column\(s\) name"):
        apply_changes(frame(spark, rows), str(tmp_path), ["name"], table=TABLE)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tables_in_a_catalog_the_session_has(spark: Any, tmp_path: Path, fmt: str) -> None:
    catalog = "spark_catalog" if fmt == "delta" else "lake"
    if fmt == "iceberg":  # a user's catalog, configured before the job starts
        spark.conf.set("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set("spark.sql.catalog.lake.type", "hadoop")
        spark.conf.set("spark.sql.catalog.lake.warehouse", str(tmp_path / "warehouse"))
    sink = load_sink(fmt, spark, str(tmp_path), {"catalog": catalog})
    database = f"cdc_catalog_{fmt}"
    table = f"{database}.t"
    keys = f"{catalog}.default.cdc_keys"
    for name in (f"{catalog}.{table}", keys):  # left by an earlier run that failed, in a session kept alive
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    batch = BatchInfo(app_id="job", batch_id=0)
    rows = frame(spark, [change("insert", 1, 1, "a", "1.00"), change("insert", 2, 2, "b", "2.00")])
    assert apply_changes(rows, sink, ["id"], table=table, batch=batch)
    assert not apply_changes(rows, sink, ["id"], table=table, batch=batch)
    apply_changes(frame(spark, [change("delete", 3, 2)]), sink, ["id"], table=table)
    stored = spark.table(f"{catalog}.{table}")
    assert stored.columns == ["id", "name", "amount"]
    assert [tuple(r) for r in stored.collect()] == [(1, "a", Decimal("1.00"))]
    state = spark.table(keys).where(f"__cdc_table = '{table}' AND __cdc_key != ''")
    assert state.count() == 2  # the tombstone of 2 stays
    assert sink.tables() == [table]
    spark.sql(f"DROP TABLE {catalog}.{table}")
    spark.sql(f"DROP TABLE {keys}")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_state_table_of_an_earlier_version_moves_into_the_key_state(spark: Any, tmp_path: Path, fmt: str) -> None:
    from cdc_spark.sinks.state_migration import MOVED

    # what an earlier version left: a target, and beside it the table's own state (keys, then the bookkeeping)
    # with a truncate floor at 2: key 1 last changed at 5, key 2 deleted at 6
    sink = load_sink(fmt, spark, str(tmp_path))
    target = frame(spark, [change("insert", 5, 1, "a", "1.00")]).select("id", "name", "amount")
    sink.format.prepare(sink.format.target(TABLE))
    sink.format.create_from(sink.format.target(TABLE), target.schema, target, sink.format.create_properties(), None)
    old = sink.format.state(TABLE)
    schema = (
        f"id int, __cdc_sequence {SEQ}, __cdc_deleted_at timestamp, __cdc_image_sequence {SEQ},"
        f" __cdc_column_sequences map<string, {SEQ}>"
    )
    gone = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = spark.createDataFrame([(1, (5, 0, 5, 0), None, None, None), (2, (6, 0, 6, 0), gone, None, None)], schema)
    sink.format.prepare(old)
    sink.format.create_from(old, rows.schema, rows, sink.format.create_properties(), None)
    floor = '{"v":{"commit_ts":2,"partition":0,"offset":2,"position":0}}'
    spark.sql(f"ALTER TABLE {old} SET TBLPROPERTIES ('cdc.truncated-before' = '{floor}')")
    # a late change older than key 1's, a late insert of the deleted key 2, one before the floor: none apply
    apply(spark, [change("update", 4, 1, "stale", "0.00"), change("insert", 3, 2, "back", "2.00")], tmp_path, fmt)
    apply(spark, [change("insert", 1, 3, "before the truncate", "3.00")], tmp_path, fmt)
    assert live(tmp_path, fmt) == {1: ("a", Decimal("1.00"))}
    assert sink.format.describe(old, None).properties[MOVED] == "true"
    moved = state_of(tmp_path, fmt)
    assert moved[1]["__cdc_sequence"]["commit_ts"] == 5 and moved[2]["__cdc_deleted_at"] is not None
    apply(spark, [change("update", 7, 1, "b", "2.00")], tmp_path, fmt)  # newer: applies
    assert live(tmp_path, fmt) == {1: ("b", Decimal("2.00"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_floors_are_read_only_for_the_tables_the_key_state_names(
    spark: Any, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch reads the key state for truncate floors only for its tables that the key state's
    ``cdc.floor-tables`` names: none before a truncate, the table after one (named before its floor row is
    written). A key state without the property (an earlier version's) is read for its floors once and given it,
    and the floors it holds still drop older changes."""
    from cdc_spark.merge import scd1
    from cdc_spark.merge.columns import FLOOR_TABLES

    read: list[list[str]] = []
    floors = scd1.floors

    def counted(stored: Any, tables: list[str]) -> Any:
        read.append(list(tables))
        return floors(stored, tables)

    monkeypatch.setattr(scd1, "floors", counted)
    sink = load_sink(fmt, spark, str(tmp_path))
    keys = sink.format.key_state("")

    def named() -> Any:
        listed = sink.format.describe(keys, None).properties.get(FLOOR_TABLES)
        return None if listed is None else json.loads(listed)

    class Watch:
        """What the key state names when the key state's own commit is about to be made; ``other`` names another
        table there (as another job sharing the key state would) while the next target commit is about to be made."""

        def __init__(self) -> None:
            self.seen: list[Any] = []
            self.other = False

        def before(self, name: str) -> None:
            if name == keys:
                self.seen.append(named())
            elif self.other:
                spark.sql(f"ALTER TABLE {keys} SET TBLPROPERTIES ('{FLOOR_TABLES}' = '[\"shop.other\"]')")
                self.other = False

        def after(self, name: str) -> None:
            pass

    watch = sink.commits = Watch()
    apply_changes(frame(spark, [change("insert", 1, 1, "a", "1.00")]), sink, ["id"], table=TABLE)
    apply_changes(frame(spark, [change("insert", 2, 2, "b", "2.00")]), sink, ["id"], table=TABLE)
    assert (read, named()) == ([], [])
    truncated = [change("truncate", 4, 0), change("insert", 5, 3, "c", "3.00")]
    watch.other = True
    apply_changes(frame(spark, truncated), sink, ["id"], table=TABLE)
    both = ["shop.other", TABLE]
    assert (watch.seen, named()) == ([[], [], both], both)
    apply(spark, [change("update", 3, 2, "before the truncate", "0.00")], tmp_path, fmt)
    assert read == [[TABLE]]  # the other table is not in the batch
    assert live(tmp_path, fmt) == {3: ("c", Decimal("3.00"))}
    spark.sql(f"ALTER TABLE {keys} UNSET TBLPROPERTIES ('{FLOOR_TABLES}')")  # as an earlier version left it
    apply(spark, [change("insert", 3, 1, "before the truncate", "0.00")], tmp_path, fmt)
    assert (read, named()) == ([[TABLE], [TABLE]], [TABLE])
    assert live(tmp_path, fmt) == {3: ("c", Decimal("3.00"))}
