"""Global-watermark gating: nothing above the minimum watermark over partitions is applied; state survives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.watermark import WatermarkGate, global_watermark

CHANGES = "id int, _cdc_op string, _cdc_commit_ts bigint, _cdc_partition int"
CONTROL = "kind string, database string, table string, commit_ts bigint, partition int, offset bigint"


def test_global_watermark_is_the_minimum_over_partitions() -> None:
    assert global_watermark({0: 30, 1: 20, 2: 25}) == 20
    assert global_watermark({0: 30}, expected=[0, 1]) is None  # partition 1 has not reported
    assert global_watermark({}) is None


def watermarks(spark: Any, marks: list[tuple[int, int]]) -> Any:
    return spark.createDataFrame([("watermark", None, None, ts, p, 0) for p, ts in marks], CONTROL)


def ids(frame: Any) -> list[int]:
    return sorted(r["id"] for r in frame.collect())


@pytest.mark.spark
def test_changes_are_held_until_every_partition_passes_them(spark: Any, tmp_path: Path) -> None:
    gate = WatermarkGate(spark, str(tmp_path), partitions=(0, 1))
    batch0 = {
        "db.t": spark.createDataFrame([(1, "insert", 10, 0), (2, "insert", 20, 1), (3, "insert", 26, 0)], CHANGES)
    }
    first = gate.gate(0, batch0, watermarks(spark, [(0, 15), (1, 25)]))
    assert first.watermark == 15 and ids(first.ready["db.t"]) == [1] and first.held == {"db.t": 2}
    gate.commit(0)

    batch1 = {"db.t": spark.createDataFrame([(4, "insert", 27, 1)], CHANGES)}
    for _attempt in range(2):  # the replay of batch 1 after a crash sees the same state
        again = WatermarkGate(spark, str(tmp_path), partitions=(0, 1))
        second = again.gate(1, batch1, watermarks(spark, [(0, 30)]))
        assert second.watermark == 25 and ids(second.ready["db.t"]) == [2]
        again.commit(1)

    third = WatermarkGate(spark, str(tmp_path), partitions=(0, 1)).gate(2, {}, watermarks(spark, [(1, 40)]))
    assert third.watermark == 30 and ids(third.ready["db.t"]) == [3, 4]
