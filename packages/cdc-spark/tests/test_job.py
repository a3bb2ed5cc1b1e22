"""The job end to end: recorded Kafka messages -> decode -> apply -> Delta tables equal to the source state.

Messages go through Spark's own file stream source (one file per micro-batch) so batch boundaries are fixed,
with at-least-once replays and partitions interleaved. Faults are injected by failing the job after a table's
commit (mid-batch) and after every table's commit but before Spark records the batch's offsets.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.changefeed import Changefeed, encode, generate
from cdc_spark.demo import differences
from cdc_spark.job import KAFKA_SCHEMA, BatchReport, JobConfig, SourceSpec, make_sink, run
from cdc_testing.faults import InjectedFault, KillingSink

pytest.importorskip("cdc_debezium")
pytestmark = pytest.mark.spark

PARTITIONS = 3


def record(spark: Any, feed: Changefeed, folder: Path, files: int, seed: int) -> int:
    """Write the changefeed as Kafka-shaped rows, ``files`` parquet files, with replays; returns messages."""
    rng = random.Random(seed)
    logs: dict[int, list[Any]] = {p: [] for p in range(PARTITIONS)}
    messages = list(encode(feed, "debezium", {"enable-tidb-extension": True}))
    replays = rng.sample(messages, len(messages) // 8)
    for message in messages + replays:  # replays land after the originals, as a retrying producer's would
        partition = zlib.crc32(message.key or b"") % PARTITIONS
        logs[partition].append(message)
    rows = []
    for partition, log in logs.items():
        for offset, message in enumerate(log):
            rows.append((message.key, message.value, "shop", partition, offset, None, 0, []))
    # interleave partitions at random while keeping each partition's order (what a consumer sees)
    cursors = dict.fromkeys(logs, 0)
    ordered = []
    by_partition = {p: [r for r in rows if r[3] == p] for p in logs}
    while any(cursors[p] < len(by_partition[p]) for p in logs):
        partition = rng.choice([p for p in logs if cursors[p] < len(by_partition[p])])
        ordered.append(by_partition[partition][cursors[partition]])
        cursors[partition] += 1
    size = -(-len(ordered) // files)
    for index in range(files):
        chunk = ordered[index * size : (index + 1) * size]
        spark.createDataFrame(chunk, KAFKA_SCHEMA).coalesce(1).write.parquet(str(folder / f"part-{index:03d}"))
    return len(ordered)


def stream(spark: Any, folder: Path) -> Any:
    return spark.readStream.schema(KAFKA_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(folder / "part-*"))


def config(tmp_path: Path) -> JobConfig:
    return JobConfig(
        protocol="debezium",
        source=SourceSpec.parse(f"file://{tmp_path / 'messages'}"),
        target=str(tmp_path / "tables"),
        checkpoint=str(tmp_path / "checkpoint"),
    )


def test_changefeed_with_replays_ends_in_the_source_state(spark: Any, tmp_path: Path) -> None:
    feed = generate(seed=11, transactions=60)
    record(spark, feed, tmp_path / "messages", files=3, seed=1)
    reports: list[BatchReport] = []
    run(spark, config(tmp_path), reports.append, stream(spark, tmp_path / "messages"))
    assert [r.batch_id for r in reports] == [0, 1, 2]
    assert differences(str(tmp_path / "tables"), feed) == []


def test_kill_mid_stream_and_restart_from_checkpoint(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import cdc_spark.job as job

    feed = generate(seed=12, transactions=60)
    record(spark, feed, tmp_path / "messages", files=4, seed=2)
    cfg = config(tmp_path)

    # 1st run dies in the middle of a batch: some of its tables committed, Spark has not recorded it
    monkeypatch.setattr(job, "make_sink", lambda s, c: KillingSink(make_sink(s, c), fail_after=4))
    with pytest.raises(Exception, match="killed after 4"):
        run(spark, cfg, None, stream(spark, tmp_path / "messages"))

    # 2nd run dies after every table of its first batch committed, before Spark records the offsets
    monkeypatch.setattr(job, "make_sink", make_sink)

    def die_after_commit(report: BatchReport) -> None:
        raise InjectedFault(f"killed after batch {report.batch_id} committed")

    with pytest.raises(Exception, match="killed after batch"):
        run(spark, cfg, die_after_commit, stream(spark, tmp_path / "messages"))

    # 3rd run completes: replayed tables are skipped, nothing is lost or applied twice
    reports: list[BatchReport] = []
    run(spark, cfg, reports.append, stream(spark, tmp_path / "messages"))
    assert reports and reports[0].skipped  # the replayed batch found its commits
    assert differences(str(tmp_path / "tables"), feed) == []
