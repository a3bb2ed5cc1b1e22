"""Changes without a commit ts (Avro tombstones) are ordered by the newest commit ts before them in their partition."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_core.errors import StorageError
from cdc_core.events import Op, RowChange, Watermark
from cdc_spark.partition_clock import NextTimed, PartitionClock, load_clock, merge_clocks, next_times, save_clock


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


def test_a_tail_sent_again_orders_its_tombstones_by_the_next_ts_after_them() -> None:
    """TiCDC sends a partition's tail again from its checkpoint: inside it the newest ts before a tombstone is the end
    of the first sending. Runs of tombstones whose next ts is older than that clock are found (offsets and next ts),
    and their order ts is that next ts; in commit order nothing is found and the clock orders them as before."""
    here, other = ("t", 0), ("t", 1)
    sent = [
        (0, [_row(100)]), (1, [_row(None, Op.DELETE)]), (2, [_row(110)]),  # in order: the run 1 needs nothing
        (3, [_row(150)]),  # the end of the first sending
        (4, [_row(None, Op.DELETE)]), (5, [_row(None, Op.DELETE)]), (6, [_row(110)]),  # sent again: 4-5 before 110
        (7, [_row(None, Op.DELETE)]),  # the batch ends: nothing after it
    ]  # fmt: skip
    found = NextTimed({other: 500})
    for offset, events in sent:
        found.see(here, offset, events)
    found.see(other, 0, [_row(None, Op.DELETE)])  # seeded, then 400: older than the last batch's clock
    found.see(other, 1, [Watermark(ts=300)])  # a resolved ts lagging the partition's changes: no bound
    found.see(other, 2, [_row(400)])
    assert found.runs == [(here, 4, 5, 110), (other, 0, 0, 400)]
    after = next_times(found.runs)
    assert [after(here, o) for o in (1, 3, 4, 5, 7)] == [None, None, 110, 110, None]
    assert after(other, 0) == 400 and after(("u", 0), 4) is None
    clock = PartitionClock()
    for _, events in sent[:5]:
        clock.see(here, events)
    assert clock.order_ts(here, None, after(here, 4)) == 110  # not 150
    assert clock.order_ts(here, None, None) == 150
    assert clock.order_ts(here, 7, 110) == 7
    assert PartitionClock().order_ts(here, None, 110) is None  # nothing before it: unordered, as without a run


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
