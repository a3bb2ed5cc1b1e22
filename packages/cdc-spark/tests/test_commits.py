"""The exactly-once bookkeeping's decisions without Spark: which batch a table holds, what a replay still writes,
which snapshot mark is the app's last batch, when tombstones are purged. Fast enough for
``nox -s mutate -- cdc_spark.sinks.commits``; the same rules on real Delta and Iceberg commits (a replay of the
latest batch, a crash between target and state) are in ``test_apply.py``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping

import pytest
from pyspark.sql import types as T

from cdc_spark.merge.columns import PURGED_AT
from cdc_spark.sinks import BatchInfo
from cdc_spark.sinks.commits import Pending, TableInfo, batch_committed, last_marked_batch, pending, purge_due

APP, BATCH = "cdc.app-id", "cdc.batch-id"
NOW = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
WEEK = dt.timedelta(days=7)


def info(
    last_batch: int | None, properties: Mapping[str, str] | None = None, created: dt.datetime | None = None
) -> TableInfo:
    return TableInfo(schema=T.StructType([]), properties=properties or {}, last_batch=last_batch, created=created)


BATCH_5 = BatchInfo(app_id="job", batch_id=5)


@pytest.mark.parametrize(
    ("stored", "batch", "held"),
    [
        (info(5), BATCH_5, True),  # the latest committed batch, run again after a crash
        (info(6), BATCH_5, True),  # an older batch
        (info(4), BATCH_5, False),  # the next batch
        (info(None), BATCH_5, False),  # written, but never by this app
        (None, BATCH_5, False),  # no table yet
        (info(5), None, False),  # an unmarked write is never a replay
        (info(0), BatchInfo(app_id="job", batch_id=0), True),  # batch 0 is a batch like any other
    ],
)
def test_a_table_holds_batches_up_to_its_last(stored: TableInfo | None, batch: BatchInfo | None, held: bool) -> None:
    assert batch_committed(stored, batch) is held


def test_a_replay_writes_only_what_a_crash_left_unwritten() -> None:
    assert pending(info(5), info(5), BATCH_5) == Pending(target=False, state=False)
    assert not pending(info(5), info(5), BATCH_5)
    # the target is written first: a crash before the state's commit leaves the state to write
    assert pending(info(5), info(4), BATCH_5) == Pending(target=False, state=True)
    assert pending(info(5), info(4), BATCH_5)
    assert pending(info(4), info(5), BATCH_5) == Pending(target=True, state=False)
    assert pending(None, None, BATCH_5) == Pending(target=True, state=True)
    assert pending(info(9), info(9), None) == Pending(target=True, state=True)


def test_the_newest_mark_of_the_app_is_its_last_batch() -> None:
    summaries = [
        {"operation": "overwrite"},  # a write by another engine, unmarked
        {APP: "other", BATCH: "12"},
        {APP: "job"},  # marked without a batch id: not a batch
        {APP: "job", BATCH: "7"},
        {APP: "job", BATCH: "6"},
    ]
    assert last_marked_batch(summaries, "job", APP, BATCH) == 7
    assert last_marked_batch(summaries, "other", APP, BATCH) == 12
    assert last_marked_batch(summaries, "nobody", APP, BATCH) is None
    assert last_marked_batch([], "job", APP, BATCH) is None
    assert last_marked_batch([{APP: "job", BATCH: "0"}], "job", APP, BATCH) == 0


def test_the_walk_stops_at_the_first_mark_and_reads_nothing_without_an_app() -> None:
    read: list[int] = []

    def summaries() -> Iterator[Mapping[str, str]]:
        for index, summary in enumerate([{APP: "job", BATCH: "3"}, {APP: "job", BATCH: "2"}]):
            read.append(index)
            yield summary

    assert last_marked_batch(summaries(), "job", APP, BATCH) == 3
    assert read == [0]  # a long history is not walked past the app's newest commit
    read.clear()
    assert last_marked_batch(summaries(), None, APP, BATCH) is None
    assert read == []


def test_tombstones_are_purged_at_most_ten_times_per_retention() -> None:
    purged = {PURGED_AT: (NOW - WEEK / 10).isoformat()}
    assert purge_due(WEEK, info(1, purged), NOW)  # exactly a tenth of the retention since the last purge
    assert not purge_due(WEEK, info(1, purged), NOW - dt.timedelta(microseconds=1))
    # the last purge counts, not the table's age
    assert not purge_due(WEEK, info(1, {PURGED_AT: NOW.isoformat()}, created=NOW - 2 * WEEK), NOW)
    # never purged: counted from the table's creation
    assert purge_due(WEEK, info(1, created=NOW - WEEK), NOW)
    assert not purge_due(WEEK, info(1, created=NOW - dt.timedelta(hours=1)), NOW)
    assert purge_due(WEEK, info(1), NOW)  # neither is known: purge


def test_no_retention_or_no_state_table_purges_nothing() -> None:
    assert not purge_due(None, info(1, created=NOW - 10 * WEEK), NOW)
    assert not purge_due(WEEK, None, NOW)
