"""A large table's key state kept from the batch that wrote it to the next one (``cdc_spark.sinks.kept_states``):
the same rows as read from the files, read only while the files are the ones that batch wrote, and the files read
when the kept rows are lost."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_spark.apply import apply_changes
from cdc_spark.batch_cache import release
from cdc_spark.demo import read_table
from cdc_spark.sinks import kept_states as kept_module
from cdc_spark.sinks import one_task
from cdc_spark.sinks.iceberg import IcebergFormat, register_hadoop_catalog
from cdc_spark.sinks.kept_states import KEPT_ROWS, KEPT_ROWS_SETTING, KeptState, KeptStates, kept_states, limit_of
from cdc_testing.spark_frames import scanned_frame
from cdc_testing.spark_plans import jobs_started

# batches of a few dozen changes: interpreted, as cdc apply runs them (the sink chooses its own where it reads more)
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("batch_expressions")]

TABLE = "shop.t"
SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
SCHEMA = f"id int, name string, amount decimal(10,2), _cdc_op string, _cdc_sequence {SEQ}, _cdc_changed_columns array<string>"  # noqa: E501


def change(op: str, ts: int, key: int, name: str | None = None, amount: str | None = None, changed: Any = None) -> Any:
    return (key, name, None if amount is None else Decimal(amount), op, (ts, 0, ts, 0), changed)


# inserts; then full and partial updates, deletes, new keys and a late older change; then re-inserts, deletes, partial
# updates of the other column and a late change to a deleted key
BATCHES = [
    [change("insert", 10, k, f"n{k}", f"{k}.00") for k in range(60)],
    [
        *[change("update", 20, k, f"u{k}", f"{k}.50") for k in range(20)],
        *[change("update", 20, k, None, f"{k}.25", ["amount"]) for k in range(20, 30)],
        *[change("delete", 20, k) for k in range(30, 40)],
        *[change("insert", 20, k, f"new{k}", "1.00") for k in range(60, 70)],
        change("update", 5, 40, "too late", "9.99"),
    ],
    [
        *[change("insert", 30, k, f"again{k}", "2.00") for k in range(30, 35)],
        *[change("delete", 30, k) for k in range(5)],
        *[change("update", 30, k, f"p{k}", None, ["name"]) for k in range(20, 25)],
        change("update", 15, 35, "not back", "9.99"),
        *[change("update", 30, k, f"w{k}", f"{k}.75") for k in range(50, 60)],
    ],
    # a truncate: every key stored before it goes, keys changed after it stay
    [change("truncate", 40, 0), change("insert", 41, 7, "after", "7.00"), change("update", 42, 50, "later", None)],
]


def _live(spark: Any, target: Path, fmt: str = "delta") -> dict[int, tuple[Any, ...]]:
    """The target's rows by key, read by the format's independent reader (delta-rs reads Delta in Spark's place)."""
    if fmt == "delta":
        rows = spark.read.format("delta").load(str(target / "shop" / "t")).collect()
        return {row["id"]: (row["name"], row["amount"]) for row in rows}
    table = read_table(str(target), TABLE, fmt).to_pylist()
    return {row["id"]: (row["name"], row["amount"]) for row in table}


def _apply(spark: Any, target: Path, rows: list[Any], fmt: str = "delta") -> int:
    """One batch applied; the Spark jobs it started."""
    changes = scanned_frame(spark, rows, SCHEMA)
    group = f"kept-{target}-{id(rows)}"  # the test's own path: a group's jobs stay listed under it
    apply = lambda: apply_changes(changes, str(target), ["id"], table=TABLE, table_format=fmt)  # noqa: E731
    return len(jobs_started(spark, group, apply))


def _entry(spark: Any, target: Path, fmt: str = "delta") -> KeptState | None:
    """The key state rows of the table kept under ``target`` (a Delta key state's path, or an Iceberg one's name)."""
    entries = kept_states(spark.sparkContext).entries
    if fmt == "iceberg":
        return entries.get((_iceberg_key_state(spark, target), TABLE))
    return next((kept for (state, table), kept in entries.items() if str(target) in state and table == TABLE), None)


def _target_entry(spark: Any, target: Path) -> KeptState | None:
    """The target rows of the table kept under ``target`` (by the table's location, under no table name)."""
    location = str(target / "shop" / "t")
    entries = kept_states(spark.sparkContext).entries
    return next((kept for (name, table), kept in entries.items() if name.endswith(location) and not table), None)


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table resolved as a large one is (the walked fold, a checkpoint placed by the key), however few rows."""
    monkeypatch.setattr(one_task, "ONE_TASK_ROWS", 0)


@pytest.mark.usefixtures("walked")
@pytest.mark.parametrize(("fmt", "spares"), [("delta", [0, 1, 2, 2]), ("iceberg", [0, 1, 1, 1])])
def test_kept_rows_give_what_the_files_give_with_fewer_jobs(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, spares: list[int]
) -> None:
    kept_jobs = [_apply(spark, tmp_path / "kept", rows, fmt) for rows in BATCHES[:3]]
    got = _live(spark, tmp_path / "kept", fmt)
    assert got[40] == ("n40", Decimal("40.00"))  # the late change ignored
    assert got[22] == ("p22", Decimal("22.25"))  # each column from the newest change that set it
    assert 35 not in got and 3 not in got and got[31] == ("again31", Decimal("2.00"))
    kept_jobs.append(_apply(spark, tmp_path / "kept", BATCHES[3], fmt))
    assert _entry(spark, tmp_path / "kept", fmt) is not None
    assert (_target_entry(spark, tmp_path / "kept") is not None) == (fmt == "delta")  # Iceberg rewrites no target
    monkeypatch.setattr(kept_states(spark.sparkContext), "limit", 0)  # nothing kept: every batch reads the files
    read_jobs = [_apply(spark, tmp_path / "read", rows, fmt) for rows in BATCHES]
    assert _entry(spark, tmp_path / "read", fmt) is None
    assert _target_entry(spark, tmp_path / "read") is None

    got = _live(spark, tmp_path / "kept", fmt)
    assert got == _live(spark, tmp_path / "read", fmt)
    assert got == {7: ("after", Decimal("7.00")), 50: ("later", None)}
    # a job fewer where the key state's rows are kept (the stored keys' shuffle), another where the target's are (its
    # rows' shuffle): none in the first batch, the key state's in the second (the first created the target), both after
    spared = [read - kept for kept, read in zip(kept_jobs, read_jobs, strict=True)]
    assert spared == spares, (kept_jobs, read_jobs)


@pytest.mark.usefixtures("walked")
def test_an_iceberg_key_state_written_by_another_hand_is_read_from_its_files(spark: Any, tmp_path: Path) -> None:
    """Iceberg's key state changed after the batch that kept it: by a delete of a key's state, then by a
    merge-on-read delete (a delete file beside the same data files). Each time the next batch sees the key as new,
    as the table says."""
    batch = [change("insert", 10, k, f"n{k}", f"{k}.00") for k in (1, 2, 3)]
    _apply(spark, tmp_path, batch, "iceberg")
    assert _entry(spark, tmp_path, "iceberg") is not None
    keys = _iceberg_key_state(spark, tmp_path)
    spark.sql(f"""DELETE FROM {keys} WHERE __cdc_key = '{{"id":"1"}}'""")
    _apply(spark, tmp_path, [change("update", 5, k, "older", "0.50") for k in (1, 2, 3)], "iceberg")
    assert _live(spark, tmp_path, "iceberg") == {
        1: ("older", Decimal("0.50")), 2: ("n2", Decimal("2.00")), 3: ("n3", Decimal("3.00"))
    }  # fmt: skip
    assert _entry(spark, tmp_path, "iceberg") is not None  # kept again by the batch that read the table
    spark.sql(f"ALTER TABLE {keys} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"""DELETE FROM {keys} WHERE __cdc_key = '{{"id":"2"}}'""")
    _apply(spark, tmp_path, [change("update", 4, k, "oldest", "0.25") for k in (1, 2, 3)], "iceberg")
    assert _live(spark, tmp_path, "iceberg") == {
        1: ("older", Decimal("0.50")), 2: ("oldest", Decimal("0.25")), 3: ("n3", Decimal("3.00"))
    }  # fmt: skip


@pytest.mark.parametrize("another_writer", [False, True], ids=["alone", "another-writer"])
def test_an_iceberg_replace_names_its_own_files_unless_another_commit_follows_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, another_writer: bool
) -> None:
    """The dynamic overwrite's own commit names the files it added, by partition. Where another writer commits an
    overwrite of another partition between that commit and its read-back, the newest snapshot is not the sink's:
    no files are named (the next batch reads the partitions from the table), and both writes stay."""
    catalog = register_hadoop_catalog(spark, str(tmp_path.absolute()))
    fmt = IcebergFormat(spark, catalog=catalog, own=True)
    name = f"`{catalog}`.`ns`.`keys`"
    spark.sql(f"CREATE TABLE {name} (p string, v int) USING iceberg PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {name} VALUES ('a', 1), ('b', 2)")
    load = IcebergFormat._load
    loads: list[str] = []

    def loaded_after_another_writer(self: IcebergFormat, table: str) -> Any:
        loads.append(table)
        if another_writer and len(loads) == 2:  # after the sink's commit, before its read-back
            spark.createDataFrame([("b", 20)], "p string, v int").writeTo(name).overwritePartitions()
        return load(self, table)

    monkeypatch.setattr(IcebergFormat, "_load", loaded_after_another_writer)
    named = fmt.replace_partitions(name, spark.createDataFrame([("a", 10)], "p string, v int"), "p", None)
    assert len(loads) == 2
    if another_writer:
        assert named == {}
    else:
        rows = spark.sql(f"SELECT file_path FROM {name}.files WHERE partition.p = 'a'").collect()
        files = [str(row[0]) for row in rows]
        assert named == {"a": frozenset(files)} and len(files) == 1
    expected = [("a", 10), ("b", 20 if another_writer else 2)]
    assert sorted(tuple(row) for row in spark.table(name).collect()) == expected


def _iceberg_key_state(spark: Any, target: Path) -> str:
    """The name of the Iceberg key state of the tables under ``target``, in the catalog its sink registers."""
    return IcebergFormat(spark, catalog=register_hadoop_catalog(spark, str(target.absolute())), own=True).key_state("")


@pytest.mark.usefixtures("walked")
def test_a_key_state_written_by_another_hand_is_read_from_its_files(spark: Any, tmp_path: Path) -> None:
    """A key's state deleted from the files after the batch that kept it (a purge, another job): the next batch sees
    the key as new, as the files say, and applies a change older than the deleted state."""
    _apply(spark, tmp_path, [change("insert", 10, 1, "first", "1.00"), change("insert", 10, 2, "other", "2.00")])
    assert _entry(spark, tmp_path) is not None
    spark.sql(f"""DELETE FROM delta.`{tmp_path / "_cdc_keys"}` WHERE __cdc_key = '{{"id":"1"}}'""")
    _apply(spark, tmp_path, [change("update", 5, 1, "older", "1.50"), change("update", 5, 2, "older", "2.50")])
    assert _live(spark, tmp_path) == {1: ("older", Decimal("1.50")), 2: ("other", Decimal("2.00"))}


@pytest.mark.usefixtures("walked")
def test_a_target_written_by_another_hand_is_read_from_its_files(spark: Any, tmp_path: Path) -> None:
    """A row deleted from the target by its user after the batch that kept the target's rows: the next batch rewrites
    the table from its files, and the row stays deleted."""
    _apply(spark, tmp_path, [change("insert", 10, 1, "first", "1.00"), change("insert", 10, 2, "other", "2.00")])
    _apply(spark, tmp_path, [change("update", 15, 1, "second", "1.25")])  # the first batch created the table
    assert _target_entry(spark, tmp_path) is not None
    spark.sql(f"DELETE FROM delta.`{tmp_path / 'shop' / 't'}` WHERE id = 2")
    _apply(spark, tmp_path, [change("update", 20, 1, "newer", "1.50")])
    assert _live(spark, tmp_path) == {1: ("newer", Decimal("1.50"))}


@pytest.mark.usefixtures("walked")
def test_kept_rows_lost_are_read_from_the_files(spark: Any, tmp_path: Path) -> None:
    """The kept checkpoint's blocks gone (as with an executor lost): the batch reads the files instead."""
    for rows in BATCHES[:2]:  # the first creates the target, the second keeps its rows too
        _apply(spark, tmp_path / "lost", rows)
    entry, target = _entry(spark, tmp_path / "lost"), _target_entry(spark, tmp_path / "lost")
    assert entry is not None and target is not None
    release(entry.resolved)  # the entries stay, their rows do not
    release(target.resolved)
    _apply(spark, tmp_path / "lost", BATCHES[2])
    for rows in BATCHES[:3]:
        _apply(spark, tmp_path / "whole", rows)
    assert _live(spark, tmp_path / "lost") == _live(spark, tmp_path / "whole")
    # kept again by the batch that read the files
    assert _entry(spark, tmp_path / "lost") is not None and _target_entry(spark, tmp_path / "lost") is not None


def _kept(spark: Any, rows: int, files: str = "f") -> KeptState:
    resolved = spark.range(rows).localCheckpoint()
    return KeptState(frozenset({files}), ("int",), 2, rows, resolved, resolved)


def _freed(kept: KeptState) -> bool:
    return not kept.resolved._jdf.queryExecution().analyzed().rdd().getStorageLevel().useMemory()


def test_an_entry_is_taken_only_for_the_same_files_types_and_about_the_same_partitions(spark: Any) -> None:
    registry = KeptStates()
    for files, types, partitions in [("f", ("int",), 2), ("g", ("int",), 2), ("f", ("bigint",), 2), ("f", ("int",), 5)]:
        kept = _kept(spark, 3)
        registry.put("s", "t", kept)
        taken = registry.take("s", "t", frozenset({files}), types, partitions)
        same = (files, types, partitions) == ("f", ("int",), 2)
        assert taken is (kept if same else None)
        assert _freed(kept) == (taken is None)
        assert registry.take("s", "t", frozenset({"f"}), ("int",), 2) is None  # taken or dropped: gone
    near = _kept(spark, 3)
    registry.put("s", "t", near)
    assert registry.take("s", "t", frozenset({"f"}), ("int",), 4) is near  # twice the partitions: near enough


def test_the_oldest_entries_are_given_up_beyond_the_limit(spark: Any) -> None:
    registry = KeptStates(limit=10)
    first, second, third, huge = _kept(spark, 4), _kept(spark, 4), _kept(spark, 4), _kept(spark, 11)
    registry.put("s", "a", first)
    registry.put("s", "b", second)
    registry.put("s", "c", third)
    assert list(registry.entries) == [("s", "b"), ("s", "c")]
    assert _freed(first) and not _freed(second)
    registry.put("s", "d", huge)  # alone over the limit: not kept
    assert _freed(huge) and list(registry.entries) == [("s", "b"), ("s", "c")]
    registry.clear()
    assert _freed(second) and _freed(third) and not registry.entries


def test_the_application_sets_its_own_limit(spark: Any) -> None:
    context = spark.sparkContext
    held = kept_module._REGISTRIES.pop(context, None)  # the registry is made with the setting of its application
    conf = context._conf
    try:
        conf.set(KEPT_ROWS_SETTING, "2_000")
        assert kept_states(context).limit == 2_000
    finally:
        kept_module._REGISTRIES.pop(context, None)
        conf._jconf.remove(KEPT_ROWS_SETTING)
        if held is not None:
            kept_module._REGISTRIES[context] = held
    assert kept_states(context).limit == KEPT_ROWS


@pytest.mark.parametrize(("setting", "limit"), [(None, KEPT_ROWS), ("0", 0), (" 250000 ", 250_000), ("1_000", 1_000)])
def test_the_limit_setting_is_a_number_of_rows(setting: str | None, limit: int) -> None:
    assert limit_of(setting) == limit


@pytest.mark.parametrize("setting", ["-1", "lots", "1e6", ""])
def test_a_limit_that_is_not_a_count_of_rows_is_refused(setting: str) -> None:
    with pytest.raises(ConfigError, match=r"spark\.cdc\.keptRows='.*': give a number of rows"):
        limit_of(setting)
