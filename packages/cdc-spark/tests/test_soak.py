"""Soak with faults: a changefeed streamed through the real broker in rounds while the job is killed at random
points (mid-batch after some tables committed, and after all commits but before Spark records the offsets) and
restarted from its checkpoint. At the end every table equals the source state: zero rows lost, zero doubled.

Bounded: 4 rounds, about 230 messages; the figures are printed (run with ``-s``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_spark.broker import create_topic, local_broker, produce, record_topic
from cdc_spark.changefeed import encode, generate
from cdc_spark.demo import differences
from cdc_spark.job import KAFKA_SCHEMA, BatchReport, JobConfig, SourceSpec, make_sink, run
from cdc_spark.sinks.delta import DeltaSink

pytest.importorskip("cdc_debezium")
pytestmark = [pytest.mark.spark, pytest.mark.kafka, pytest.mark.slow]

ROUNDS = 4
PARTITIONS = 3


class Killed(RuntimeError):
    """Stands for the job's process dying here."""


@attrs.define
class KillingSink:
    """The real Delta sink, killed after ``fail_after`` table writes (fault injection)."""

    inner: Any
    fail_after: int
    writes: int = 0

    def read_target(self, spark: Any, table: str) -> Any:
        return self.inner.read_target(spark, table)

    def committed(self, table: str, batch: Any) -> bool:
        return bool(self.inner.committed(table, batch))

    def live(self, spark: Any, table: str) -> Any:
        return self.inner.live(spark, table)

    def write(self, plan: Any, batch: Any) -> bool:
        written = bool(self.inner.write(plan, batch))
        self.writes += 1
        if self.writes >= self.fail_after:
            raise Killed(f"killed after {self.writes} table writes")
        return written


def test_soak_with_consumer_kills(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import cdc_spark.job as job

    rng = random.Random(2026)
    feed = generate(seed=21, transactions=80)
    messages = list(encode(feed, "debezium", {"enable-tidb-extension": True}))
    replays = rng.sample(messages, len(messages) // 10)
    stream_of = messages + replays
    config = JobConfig(
        protocol="debezium",
        source=SourceSpec.parse(f"file://{tmp_path / 'recorded'}"),
        target=str(tmp_path / "tables"),
        checkpoint=str(tmp_path / "checkpoint"),
    )
    kills = restarts = batches = 0
    with local_broker() as bootstrap:
        create_topic(bootstrap, "soak", PARTITIONS)
        size = -(-len(stream_of) // ROUNDS)
        recorded = 0
        seen: set[tuple[int, int]] = set()  # (partition, offset) already written to a file
        for round_number in range(ROUNDS):
            chunk = stream_of[round_number * size : (round_number + 1) * size]
            produce(bootstrap, "soak", chunk, PARTITIONS)
            recorded += len(chunk)
            rows = [r for r in record_topic(bootstrap, "soak", recorded) if (r[3], r[4]) not in seen]
            seen.update((r[3], r[4]) for r in rows)
            spark.createDataFrame(rows, KAFKA_SCHEMA).coalesce(1).write.parquet(
                str(tmp_path / "recorded" / f"part-{round_number:03d}")
            )
            fault = rng.choice(["mid-batch", "after-commit", "none"])
            for attempt in range(5):
                stream = spark.readStream.schema(KAFKA_SCHEMA).parquet(str(tmp_path / "recorded" / "part-*"))
                progress = None
                if attempt == 0 and fault == "mid-batch":
                    fail_after = rng.randrange(1, 3)
                    monkeypatch.setattr(job, "make_sink", lambda s, c, n=fail_after: KillingSink(make_sink(s, c), n))
                else:
                    monkeypatch.setattr(job, "make_sink", make_sink)
                if attempt == 0 and fault == "after-commit":

                    def progress(report: BatchReport) -> None:
                        raise Killed(f"killed after batch {report.batch_id} committed")

                try:
                    reports: list[BatchReport] = []
                    run(spark, config, progress or reports.append, stream)
                    batches += len(reports)
                    break
                except Exception as exc:
                    if "killed after" not in str(exc):
                        raise
                    kills += 1
                    restarts += 1
            else:
                pytest.fail("the job did not recover within 5 restarts")

    assert differences(config.target, feed, limit=20) == []
    sink = DeltaSink(root=config.target)
    for table, schema in feed.final_schemas.items():
        live = sink.live_arrow(f"shop.{table}")
        keys = [tuple(r[k] for k in schema.handle_key) for r in live.to_pylist()]
        assert len(keys) == len(set(keys)) == len(feed.state[table])  # none lost, none doubled
    print(
        f"\nsoak: {len(stream_of)} messages ({len(replays)} replays) in {ROUNDS} rounds through the broker,"
        f" {kills} kills, {restarts} restarts, {batches} completed batches; tables equal the source state"
    )
