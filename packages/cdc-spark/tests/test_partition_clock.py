"""Changes without a commit ts (Avro tombstones) are ordered by the newest commit ts before them in their partition."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_core.errors import StorageError
from cdc_core.events import Op, RowChange, Watermark
from cdc_spark.partition_clock import PartitionClock, load_clock, merge_clocks, save_clock


def _row(commit_ts: int | None, op: Op = Op.INSERT) -> RowChange:
    image = {"id": 1}
    before, after = (image, None) if op is Op.DELETE else (None, image)
    return RowChange(op=op, database="d", table="t", before=before, after=after, commit_ts=commit_ts)


def test_a_tombstone_takes_the_newest_ts_of_its_partition_only() -> None:
    clock = PartitionClock({("t", 1): 50})
    clock.see(("t", 0), [_row(100)])
    clock.see(("t", 0), [Watermark(ts=120)])
    clock.see(("t", 0), [_row(110)])  # older than the watermark: the clock never goes back
    assert clock.order_ts(("t", 0), None) == 120
    assert clock.order_ts(("t", 0), 7) == 7  # a change's own ts always wins
    assert clock.order_ts(("t", 1), None) == 50  # seeded by an earlier batch
    assert clock.order_ts(("t", 2), None) is None  # nothing known: stays unordered, as the message says
    clock.see(("t", 0), [_row(None, Op.DELETE)])
    assert clock.snapshot()[("t", 0)] == 120


def test_the_clock_survives_a_restart_through_the_checkpoint(tmp_path: Path) -> None:
    assert load_clock(str(tmp_path)) == {}
    save_clock(str(tmp_path), {("orders", 0): 5, ("orders", 2): 9, ("items", 0): 1})
    assert load_clock(str(tmp_path)) == {("orders", 0): 5, ("orders", 2): 9, ("items", 0): 1}
    assert merge_clocks({("a", 0): 3}, {("a", 0): 2, ("b", 1): 4}) == {("a", 0): 3, ("b", 1): 4}


@pytest.mark.parametrize("text", ['{"orders": ', '{"orders": {"x": 5}}', '{"orders": [1]}'])
def test_a_damaged_clock_file_is_a_storage_error_naming_it(tmp_path: Path, text: str) -> None:
    (tmp_path / "partition-clock.json").write_text(text)
    with pytest.raises(StorageError, match=r"partition-clock\.json"):
        load_clock(str(tmp_path))
