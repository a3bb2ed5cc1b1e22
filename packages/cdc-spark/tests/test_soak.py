"""Soak with faults: a changefeed streamed through the real broker into the job (Spark's Kafka source, Delta)
while the broker goes down and comes back at random moments and the job is killed at random points (mid-batch
after some tables committed, and after every commit but before Spark records the offsets), then restarted from
its checkpoint. At the end every table equals the source state: zero rows lost, zero doubled.

The broker keeps its log in memory, so its outages are made by the fault-injecting proxy it advertises
(:mod:`cdc_testing.faults`): clients lose every connection and are refused until it serves again.
Bounded: 4 rounds, about 230 messages; the figures are printed (run with ``-s``).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_spark.demo import comparable, differences, read_table
from cdc_spark.job import BatchReport, JobConfig, SourceSpec, make_sink, run
from cdc_testing.changefeed import encode, generate
from cdc_testing.faults import InjectedFault, KillingSink, proxied, reopenable_port
from cdc_testing.kafka import BOOTSTRAP_ENV, create_topic, free_port, produce, running_broker

pytest.importorskip("cdc_debezium")
pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.slow,
    pytest.mark.skipif(bool(os.environ.get(BOOTSTRAP_ENV)), reason="needs its own broker to cut"),
]

ROUNDS = 4
PARTITIONS = 3
MAX_RESTARTS = 8


def _outage_later(proxy: Any, rng: random.Random) -> threading.Thread:
    """The broker goes down after a random delay, for one to three seconds, while the job runs."""
    delay, length = rng.uniform(0.5, 6.0), rng.uniform(1.0, 3.0)

    def cut() -> None:
        time.sleep(delay)
        with proxy.outage():
            time.sleep(length)

    thread = threading.Thread(target=cut, daemon=True)
    thread.start()
    return thread


def _row_text(row: dict[str, Any], kinds: dict[str, Any]) -> str:
    """A whole row as comparable text (values normalised as the demo's checker does)."""
    return repr([(name, comparable(row.get(name), kind)) for name, kind in kinds.items()])


def test_soak_with_broker_outages_and_consumer_kills(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import cdc_spark.job as job

    rng = random.Random(2026)
    feed = generate(seed=21, transactions=80)
    messages = [
        attrs.evolve(m, partition=(m.partition or 0) % PARTITIONS)
        for m in encode(feed, "debezium", {"enable-tidb-extension": True})
    ]
    replays = rng.sample(messages, len(messages) // 10)  # at-least-once delivery: some messages twice
    stream_of = messages + replays
    broker_port, proxy_port = free_port(), reopenable_port()  # the proxy port closes and opens again
    kills = restarts = batches = 0
    started = time.monotonic()
    with running_broker(port=broker_port, advertised_port=proxy_port), proxied(broker_port, proxy_port) as proxy:
        bootstrap = f"127.0.0.1:{proxy_port}"
        create_topic(bootstrap, "soak", PARTITIONS)
        config = JobConfig(
            protocol="debezium",
            source=SourceSpec.parse(f"kafka://{bootstrap}/soak"),
            target=str(tmp_path / "tables"),
            checkpoint=str(tmp_path / "checkpoint"),
            options={"source.pollTimeoutMs": "20000", "source.kafka.reconnect.backoff.max.ms": "500"},
        )
        size = -(-len(stream_of) // ROUNDS)
        faults = ["mid-batch", "after-commit", "outage", "outage"]  # every kind of fault, in a random order
        rng.shuffle(faults)
        for round_number, fault in enumerate(faults):
            produce(bootstrap, "soak", stream_of[round_number * size : (round_number + 1) * size])
            for attempt in range(MAX_RESTARTS):
                progress = None
                outage = None
                if attempt == 0 and fault == "mid-batch":
                    fail_after = rng.randrange(1, 3)
                    monkeypatch.setattr(job, "make_sink", lambda s, c, n=fail_after: KillingSink(make_sink(s, c), n))
                else:
                    monkeypatch.setattr(job, "make_sink", make_sink)
                if attempt == 0 and fault == "after-commit":

                    def progress(report: BatchReport) -> None:
                        raise InjectedFault(f"killed after batch {report.batch_id} committed")

                if attempt == 0 and fault == "outage":
                    outage = _outage_later(proxy, rng)
                try:
                    reports: list[BatchReport] = []
                    run(spark, config, progress or reports.append)
                    batches += len(reports)
                    failed = False
                except Exception as exc:  # the job died: a kill, or the broker vanished under it
                    assert "killed after" in str(exc) or outage is not None, exc
                    kills += "killed after" in str(exc)
                    restarts += 1
                    failed = True
                if outage is not None:
                    outage.join()
                if not failed:
                    break
            else:
                pytest.fail(f"the job did not recover within {MAX_RESTARTS} restarts")
        # Whatever the faults left unread (an outage can end a run early) is read by a final clean run.
        monkeypatch.setattr(job, "make_sink", make_sink)
        run(spark, config)
        outages = proxy.outages

    # every fault took effect: the broker went away, the job was killed and restarted, messages came twice
    assert outages > 0 and kills > 0 and restarts >= kills and replays
    assert differences(config.target, feed, limit=20) == []
    lost = doubled = 0
    for table, schema in feed.final_schemas.items():  # whole rows counted, not keys: found whatever the key
        kinds = {c.name: c.data_type.logical for c in schema.columns}
        live = Counter(_row_text(r, kinds) for r in read_table(config.target, f"shop.{table}").to_pylist())
        source = Counter(_row_text(r, kinds) for r in feed.state[table].values())
        lost += sum((source - live).values())
        doubled += sum((live - source).values())
    assert (lost, doubled) == (0, 0)
    print(
        f"\nsoak: {len(stream_of)} messages ({len(replays)} replays) in {ROUNDS} rounds through the broker,"
        f" {outages} broker outages, {kills} consumer kills, {restarts} restarts, {batches} completed batches"
        f" in {time.monotonic() - started:.0f} s; tables equal the source state: {lost} rows lost, {doubled} doubled"
    )
