"""Global-watermark gating: nothing above the minimum watermark over partitions is applied; state survives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_core.errors import StorageError
from cdc_spark.watermark import WatermarkGate, global_watermark
from cdc_testing.spark_frames import scanned_frame

CHANGES = "id int, _cdc_op string, _cdc_commit_ts bigint, _cdc_partition int"
CONTROL = "kind string, database string, table string, commit_ts bigint, partition int, offset bigint"


def test_global_watermark_is_the_minimum_over_partitions() -> None:
    assert global_watermark({0: 30, 1: 20, 2: 25}) == 20
    assert global_watermark({0: 30}, expected=[0, 1]) is None  # partition 1 has not reported
    assert global_watermark({}) is None


def watermarks(spark: Any, marks: list[tuple[int, int]]) -> Any:
    return scanned_frame(spark, [("watermark", None, None, ts, p, 0) for p, ts in marks], CONTROL)


def ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.collect())


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_changes_are_held_until_every_partition_passes_them(spark: Any, tmp_path: Path) -> None:
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0, 1))
    batch0 = {"db.t": scanned_frame(spark, [(1, "insert", 10, 0), (2, "insert", 20, 1), (3, "insert", 26, 0)], CHANGES)}
    first = gate.gate(0, batch0, watermarks(spark, [(0, 15), (1, 25)]))
    assert first.watermark == 15 and ids(first.ready["db.t"]) == [1] and first.held == {"db.t": 2}
    gate.commit(0)

    batch1 = {"db.t": scanned_frame(spark, [(4, "insert", 27, 1)], CHANGES)}
    for _attempt in range(2):  # the replay of batch 1 after a crash sees the same state
        again = WatermarkGate(spark, str(tmp_path), partitions=(0, 1))
        second = again.gate(1, batch1, watermarks(spark, [(0, 30)]))
        assert second.watermark == 25 and ids(second.ready["db.t"]) == [2]
        again.commit(1)

    third = WatermarkGate(spark, str(tmp_path), partitions=(0, 1)).gate(2, {}, watermarks(spark, [(1, 40)]))
    assert third.watermark == 30 and ids(third.ready["db.t"]) == [3, 4]


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_a_partition_missing_from_the_topic_holds_everything(spark: Any, tmp_path: Path) -> None:
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0, 1, 2))
    batch = {"db.t": scanned_frame(spark, [(1, "insert", 10, 0), (2, "insert", None, 1)], CHANGES)}
    result = gate.gate(0, batch, watermarks(spark, [(0, 50), (1, 50)]))  # partition 2 has not reported
    assert result.watermark is None and ids(result.ready["db.t"]) == [2] and result.held == {"db.t": 1}


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_a_watermark_never_goes_back_and_other_control_rows_do_not_count(spark: Any, tmp_path: Path) -> None:
    rows = [(1, "insert", 20, 0), (2, "insert", 25, 1), (3, "insert", 28, 1)]
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0, 1))
    first = gate.gate(0, {"db.t": scanned_frame(spark, rows, CHANGES)}, watermarks(spark, [(0, 30), (1, 25)]))
    assert first.watermark == 25 and ids(first.ready["db.t"]) == [1, 2]  # a change at the watermark is due
    gate.commit(0)
    control = scanned_frame(
        spark,
        [
            ("watermark", None, None, 10, 0, 7),  # an older resolved ts sent again (a changefeed restart)
            ("watermark", None, None, 40, 1, 8),
            ("watermark", None, None, None, 0, 9),  # no commit ts: says nothing
            ("watermark", None, None, 5, None, 10),  # no partition: says nothing
            ("ddl", "db", "t", 99, 0, 11),
        ],
        CONTROL,
    )
    later = WatermarkGate(spark, str(tmp_path), partitions=(0, 1)).gate(1, {}, control)
    assert later.watermark == 30 and ids(later.ready["db.t"]) == [3]


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_a_snapshot_whose_commit_did_not_finish_is_not_read(spark: Any, tmp_path: Path) -> None:
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0,))
    gate.gate(0, {"db.t": scanned_frame(spark, [(1, "insert", 20, 0)], CHANGES)}, watermarks(spark, [(0, 10)]))
    gate.commit(0)
    torn = WatermarkGate(spark, str(tmp_path), partitions=(0,))
    torn.gate(1, {"db.t": scanned_frame(spark, [(2, "insert", 30, 0)], CHANGES)}, watermarks(spark, [(0, 11)]))
    torn.commit(1)
    (tmp_path / "batch=1" / "watermarks.json").unlink()  # held rows written, state file not: a crash in commit
    (tmp_path / "notes").mkdir()  # not a snapshot
    resumed = WatermarkGate(spark, str(tmp_path), partitions=(0,)).gate(2, {}, watermarks(spark, [(0, 25)]))
    assert resumed.watermark == 25 and ids(resumed.ready["db.t"]) == [1]


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_held_changes_of_several_tables_each_come_back(spark: Any, tmp_path: Path) -> None:
    def one(key: int, ts: int) -> Any:
        return scanned_frame(spark, [(key, "insert", ts, 0)], CHANGES)

    gate = WatermarkGate(spark, str(tmp_path), partitions=(0,))
    batch = {
        "db.done": one(1, 5),
        "db.b": one(2, 20),
        "db.c": one(3, 30),
        "db.odd name/1": one(4, 40),
        "db.odd_name_1": one(5, 45),  # a directory name of its own, not the one above's
    }
    assert gate.gate(0, batch, watermarks(spark, [(0, 10)])).held == {
        "db.done": 0,
        "db.b": 1,
        "db.c": 1,
        "db.odd name/1": 1,
        "db.odd_name_1": 1,
    }
    gate.commit(0)
    later = WatermarkGate(spark, str(tmp_path), partitions=(0,)).gate(1, {}, watermarks(spark, [(0, 50)]))
    assert {table: ids(frame) for table, frame in later.ready.items()} == {
        "db.b": [2],
        "db.c": [3],
        "db.odd name/1": [4],
        "db.odd_name_1": [5],
    }


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_held_changes_meet_a_batch_with_a_new_column(spark: Any, tmp_path: Path) -> None:
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0,))
    gate.gate(0, {"db.t": scanned_frame(spark, [(1, "insert", 20, 0)], CHANGES)}, watermarks(spark, [(0, 10)]))
    gate.commit(0)
    wider = scanned_frame(spark, [(2, "insert", 30, 0, "b")], CHANGES + ", name string")  # a column was added
    ready = WatermarkGate(spark, str(tmp_path), partitions=(0,)).gate(1, {"db.t": wider}, watermarks(spark, [(0, 40)]))
    assert sorted((r["id"], r["name"]) for r in ready.ready["db.t"].collect()) == [(1, None), (2, "b")]


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_only_the_last_two_snapshots_are_kept(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()  # not a snapshot: left alone
    for batch_id in range(4):
        gate = WatermarkGate(spark, str(tmp_path), partitions=(0,))
        gate.gate(batch_id, {}, watermarks(spark, [(0, batch_id)]))
        gate.commit(batch_id)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch=2", "batch=3", "notes"]


@pytest.mark.spark
@pytest.mark.usefixtures("case_sensitive")
def test_state_that_cannot_be_saved_is_a_storage_error(spark: Any, tmp_path: Path) -> None:
    blocked = tmp_path / "checkpoint"
    blocked.write_text("a file where the state directory should be")
    gate = WatermarkGate(spark, str(blocked), partitions=(0,))
    gate.gate(0, {}, watermarks(spark, [(0, 10)]))
    with pytest.raises(StorageError, match=r"cannot save watermark state for batch 0 in .*checkpoint.batch=0: "):
        gate.commit(0)


def test_held_changes_of_a_checkpoint_from_before_unique_names_are_found(tmp_path: Path) -> None:
    from cdc_spark.watermark import _held_path, _safe

    assert _safe("db.odd name/1") == "db.odd~20name~2F1" and _safe("db.é") == "db.é" and _safe("a~b") == "a~7Eb"
    (tmp_path / "held" / "db.odd_name_1").mkdir(parents=True)  # what an earlier version wrote for "db.odd name/1"
    assert _held_path(str(tmp_path), "db.odd name/1") == str(tmp_path / "held" / "db.odd_name_1")
    (tmp_path / "held" / "db.odd~20name~2F1").mkdir()
    assert _held_path(str(tmp_path), "db.odd name/1") == str(tmp_path / "held" / "db.odd~20name~2F1")
