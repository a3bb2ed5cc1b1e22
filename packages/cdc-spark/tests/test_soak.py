"""The job on a broker of this module's own, which clients reach through a loopback proxy it advertises
(:mod:`cdc_testing.faults`), so that it can go away in two ways: for a moment (the proxy closes every connection
and refuses new ones, as a broker that goes down does, and serves again a second or two later; a real broker takes
far longer to restart than CI's share of this soak allows) or for real (the broker process stops, its log kept,
and starts again).

- A soak with faults: a changefeed streamed through the broker into the job (Spark's Kafka source, Delta) while the
  broker goes away at random moments and the job is killed at random points (mid-batch after some tables
  committed, and after every commit but before Spark records the offsets), then restarted from its checkpoint. At
  the end every table equals the source state: zero rows lost, zero doubled. Bounded: 4 rounds, about 230
  messages; the figures are printed (run with ``-s``). ``nox -s soak`` runs it at scale, as processes, with the
  broker restarted for real (:mod:`cdc_spark.soak`).
- ``cdc apply`` against a broker that was stopped, a topic that does not exist, no broker at all: one line, its
  exit code, and a rerun that loses nothing.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.cli.main import main as cdc
from cdc_core.message import Message
from cdc_spark.demo import differences
from cdc_spark.job import BatchReport, JobConfig, SourceSpec, make_sink, run
from cdc_spark.retries import RetryPolicy
from cdc_spark.soak import lost_and_doubled
from cdc_testing.changefeed import encode, generate
from cdc_testing.faults import InjectedFault, KillingSink, TcpProxy, proxied, reopenable_port
from cdc_testing.kafka import (
    BOOTSTRAP_ENV,
    BrokerUnavailableError,
    KafkaBroker,
    create_topic,
    free_port,
    produce,
    unique_topic,
)

pytest.importorskip("cdc_debezium")
pytestmark = [
    pytest.mark.spark,
    pytest.mark.kafka,
    pytest.mark.slow,
    pytest.mark.skipif(bool(os.environ.get(BOOTSTRAP_ENV)), reason="needs its own broker to stop"),
]

ROUNDS = 4
PARTITIONS = 3
MAX_RESTARTS = 8


@attrs.frozen
class Broker:
    process: KafkaBroker
    proxy: TcpProxy

    @property
    def bootstrap(self) -> str:  # what clients are given: the proxy the broker advertises
        return f"127.0.0.1:{self.proxy.port}"


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    proxy_port = reopenable_port()  # the proxy's port closes and opens again
    own = KafkaBroker(free_port(), advertised_port=proxy_port)
    with proxied(own.port, proxy_port) as proxy:
        try:
            own.start()
        except BrokerUnavailableError as exc:
            pytest.skip(str(exc))
        try:
            yield Broker(own, proxy)
        finally:
            own.close()


def _outage_later(proxy: TcpProxy, rng: random.Random) -> threading.Thread:
    """The broker goes away after a random delay, for one to three seconds, while the job runs."""
    delay, length = rng.uniform(0.5, 6.0), rng.uniform(1.0, 3.0)

    def cut() -> None:
        time.sleep(delay)
        with proxy.outage():
            time.sleep(length)

    thread = threading.Thread(target=cut, daemon=True)
    thread.start()
    return thread


def _partitioned(messages: list[Message]) -> list[Message]:
    """Each message on its key's partition, as a keyed producer puts it."""
    return [attrs.evolve(m, partition=zlib.crc32(m.key or b"") % PARTITIONS) for m in messages]


def test_soak_with_broker_outages_and_consumer_kills(
    spark: Any, broker: Broker, tmp_path: Path, monkeypatch: Any
) -> None:
    import cdc_spark.job as job

    rng = random.Random(2026)
    feed = generate(seed=21, transactions=80)
    messages = _partitioned(list(encode(feed, "debezium", {"enable-tidb-extension": True})))
    replays = rng.sample(messages, len(messages) // 10)  # at-least-once delivery: some messages twice
    stream_of = messages + replays
    topic = unique_topic("soak")
    kills = restarts = batches = 0
    outages_before = broker.proxy.outages
    started = time.monotonic()
    create_topic(broker.bootstrap, topic, PARTITIONS)
    config = JobConfig(
        protocol="debezium",
        source=SourceSpec.parse(f"kafka://{broker.bootstrap}/{topic}"),
        target=str(tmp_path / "tables"),
        checkpoint=str(tmp_path / "checkpoint"),
        options={"source.pollTimeoutMs": "20000", "source.kafka.reconnect.backoff.max.ms": "500"},
        retry=RetryPolicy(retries=6, backoff_s=1.0),  # rides out an outage within run()
    )
    size = -(-len(stream_of) // ROUNDS)
    faults = ["mid-batch", "after-commit", "outage", "outage"]  # every kind of fault, in a random order
    rng.shuffle(faults)
    for round_number, fault in enumerate(faults):
        produce(broker.bootstrap, topic, stream_of[round_number * size : (round_number + 1) * size])
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
                outage = _outage_later(broker.proxy, rng)
            try:
                reports: list[BatchReport] = []
                run(spark, config, progress or reports.append)
                batches += len(reports)
                failed = False
            except Exception as exc:  # the job died: a kill, or the broker stayed away longer than its retries
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
    # Whatever the faults left unread (a restart can end a run early) is read by a final clean run.
    monkeypatch.setattr(job, "make_sink", make_sink)
    run(spark, config)

    # every fault took effect: the broker went away, the job was killed and restarted, messages came twice
    outages = broker.proxy.outages - outages_before
    assert outages > 0 and kills > 0 and restarts >= kills and replays
    assert differences(config.target, feed, limit=20) == []
    lost, doubled = lost_and_doubled(config.target, feed)
    assert (lost, doubled) == (0, 0)
    print(
        f"\nsoak: {len(stream_of)} messages ({len(replays)} replays) in {ROUNDS} rounds through the broker,"
        f" {outages} broker outages, {kills} consumer kills, {restarts} restarts, {batches} completed"
        f" batches in {time.monotonic() - started:.0f} s; tables equal the source state: {lost} rows lost,"
        f" {doubled} doubled"
    )


def _apply(capfd: pytest.CaptureFixture[str], source: str, target: Path, *args: str) -> tuple[int, str, str]:
    code = cdc(["apply", "--protocol", "debezium", "--source", source, "--target", str(target), "--once",
                "-o", "decode=python", *args])  # fmt: skip
    out, err = capfd.readouterr()
    return code, out, err


def _failure(err: str) -> str:
    assert "Traceback" not in err and "\tat " not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("cdc apply:") and "cdc apply: retry " not in line]
    assert lines, err[-3000:]
    return lines[-1]


def test_apply_against_a_stopped_broker_fails_in_one_line_and_a_rerun_loses_nothing(
    spark: Any, broker: Broker, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=31, transactions=20)
    messages = _partitioned(list(encode(feed, "debezium", {"enable-tidb-extension": True})))
    half = len(messages) // 2
    topic = unique_topic("stopped")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce(broker.bootstrap, topic, messages[:half])
    source, target = f"kafka://{broker.bootstrap}/{topic}", tmp_path / "tables"
    code, out, err = _apply(capfd, source, target)
    assert code == 0, err[-3000:]
    assert out.strip().splitlines()[-1].startswith(f"cdc apply: 1 batch, {half} messages read; changes: ")
    broker.process.stop()  # for real
    try:
        started = time.monotonic()
        code, out, err = _apply(capfd, source, target, "--broker-timeout", "3", "--retries", "1",
                                "--retry-backoff", "0.5")  # fmt: skip
        seconds = time.monotonic() - started
    finally:
        broker.process.start()
    assert code == 3
    line = _failure(err)
    assert line.startswith(f"cdc apply: kafka: no broker of {broker.bootstrap} answered within 3 s"), line
    assert line.endswith("was committed: rerun once it is back)")
    assert "cdc apply: retry 1 of 1 in 0.5 s, from the checkpoint, after: kafka: no broker of" in err
    assert seconds < 120
    produce(broker.bootstrap, topic, messages[half:])
    code, out, err = _apply(capfd, source, target, "--broker-timeout", "120")  # the restarted broker's groups load
    assert code == 0, err[-3000:]
    assert differences(str(target), feed) == [] and lost_and_doubled(str(target), feed) == (0, 0)
    code, out, err = _apply(capfd, source, target)
    assert code == 0
    since = out.strip().splitlines()[-1]
    assert re.fullmatch(rf"cdc apply: nothing new since batch 1 of .* UTC \(offsets {topic}\[0\]@\d+, .*\)", since)


def test_apply_of_a_topic_that_does_not_exist_is_a_usage_error(
    spark: Any, broker: Broker, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _apply(capfd, f"kafka://{broker.bootstrap}/no-such-topic", tmp_path / "tables")
    assert code == 2
    assert _failure(err) == f"cdc apply: kafka: no topic no-such-topic on {broker.bootstrap}: check --source"
    assert not (tmp_path / "tables").exists()


def test_apply_without_a_broker_fails_within_its_bounds(
    spark: Any, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    closed = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    code, _, err = _apply(capfd, f"kafka://{closed}/shop", tmp_path / "tables", "--broker-timeout", "2",
                          "--retries", "0")  # fmt: skip
    assert code == 3
    assert _failure(err).startswith(f"cdc apply: kafka: no broker of {closed} answered within 2 s")
    assert time.monotonic() - started < 60
