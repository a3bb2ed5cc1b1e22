"""``python -m cdc_spark.soak`` (``nox -s soak``): ``cdc apply`` at scale on the real parts, under faults.

1. starts an Apache Kafka broker of its own (one KRaft node from the pinned jars) and a changefeed of at least
   ``--messages`` Debezium messages over three tables, a share of them sent twice (an at-least-once producer);
2. produces it in chunks while ``cdc apply --continuous`` runs as a process of its own;
3. meanwhile, at random moments, kills the whole ``cdc apply`` process group (SIGKILL: the driver, its JVM and
   its Python workers, at whatever point of a batch they are) and starts it again, or stops the broker for a few
   seconds and starts it again (the job rides that out with its retries, or exits with code 3 and is started
   again);
4. once the job has caught up with the end of every partition, stops it, runs ``cdc apply --once`` (which must find
   nothing new), and checks, reading the tables without Spark, that they equal the source state with no row lost
   and none doubled. Prints the figures; exits 1 when the check fails.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from cdc_core.message import Message
from cdc_spark.demo import comparable, differences, read_table
from cdc_spark.run_summary import last_commit
from cdc_testing.changefeed import Changefeed, encode, generate

TOPIC: Final = "soak"
CHUNK: Final = 2_000


def lost_and_doubled(target: str, feed: Changefeed) -> tuple[int, int]:
    """Whole rows of the source state missing from the tables, and rows the tables hold beyond it (found whatever
    the key: rows are compared whole)."""
    lost = doubled = 0
    for table, schema in feed.final_schemas.items():
        kinds = {c.name: c.data_type.logical for c in schema.columns}

        def text(row: dict[str, Any], kinds: dict[str, Any] = kinds) -> str:
            return repr([(name, comparable(row.get(name), kind)) for name, kind in kinds.items()])

        live = Counter(text(r) for r in read_table(target, f"{schema.database}.{table}").to_pylist())
        source = Counter(text(r) for r in feed.state[table].values())
        lost += sum((source - live).values())
        doubled += sum((live - source).values())
    return lost, doubled


def _feed(messages: int, seed: int) -> tuple[Changefeed, list[Message]]:
    """A changefeed of at least ``messages`` Debezium messages (about 2.7 per transaction)."""
    transactions = max(10, messages * 10 // 27)
    while True:
        feed = generate(seed=seed, transactions=transactions)
        encoded = list(encode(feed, "debezium", {"enable-tidb-extension": True}))
        if len(encoded) >= messages:
            return feed, encoded
        transactions = transactions * messages // len(encoded) + 10


@attrs.define
class Figures:
    messages: int = 0
    replays: int = 0
    broker_restarts: int = 0
    kills: int = 0
    exits: Counter[int] = attrs.field(factory=Counter)  # cdc apply runs that ended by themselves, by exit code
    seconds: float = 0.0
    lost: int = -1
    doubled: int = -1
    differences: int = -1  # rows or columns that differ from the source state

    def line(self) -> str:
        exits = ", ".join(f"{n} with code {code}" for code, n in sorted(self.exits.items())) or "none"
        return (
            f"soak: {self.messages:,} messages ({self.replays:,} sent twice) through the broker into cdc apply in "
            f"{self.seconds:,.0f} s ({self.messages / max(self.seconds, 1e-9):,.0f} messages/s with the faults), "
            f"{self.broker_restarts} broker restarts, {self.kills} cdc apply kills (SIGKILL), runs that exited by "
            f"themselves: {exits}; against the source state: {self.differences} differences, {self.lost} rows "
            f"lost, {self.doubled} doubled"
        )


def _producer(bootstrap: str) -> Any:
    """An idempotent producer that waits out a broker restart (its log lines kept off the console)."""
    from confluent_kafka import Producer

    quiet = logging.getLogger("cdc.soak.producer")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                     "message.timeout.ms": 900_000, "logger": quiet})  # fmt: skip


@attrs.define
class Production:
    """The producing thread's state: done, or the error that stopped it."""

    done: threading.Event = attrs.field(factory=threading.Event)
    error: BaseException | None = None

    def is_set(self) -> bool:
        if self.error is not None:
            raise RuntimeError(f"producing the changefeed failed: {self.error}") from self.error
        return self.done.is_set()


def _produce(bootstrap: str, messages: Sequence[Message], production: Production, pause: float) -> None:
    try:
        _send(bootstrap, messages, production.done, pause)
    except BaseException as exc:  # the main thread raises it
        production.error = exc


def _send(bootstrap: str, messages: Sequence[Message], done: threading.Event, pause: float) -> None:
    """Every message, a chunk at a time with pauses between, each chunk flushed (a broker restart waited out)."""
    producer = _producer(bootstrap)
    for start in range(0, len(messages), CHUNK):
        for message in messages[start : start + CHUNK]:
            while True:
                try:
                    producer.produce(TOPIC, value=message.value, key=message.key, partition=message.partition)
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
        producer.flush(900)
        time.sleep(pause)
    if producer.flush(900):
        raise RuntimeError("messages left undelivered after 15 minutes")
    done.set()


def _end_offsets(bootstrap: str, partitions: int) -> dict[tuple[str, int], int] | None:
    """The next offset of every partition (None when the broker does not say within 30 s)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    quiet = logging.getLogger("cdc.soak.producer")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdc-soak-ends", "logger": quiet})
    try:
        ends = {}
        for partition in range(partitions):
            ends[(TOPIC, partition)] = consumer.get_watermark_offsets(TopicPartition(TOPIC, partition), timeout=30)[1]
        return ends
    except KafkaException:
        return None
    finally:
        consumer.close()


class ApplyProcess:
    """``cdc apply --continuous`` as a process group of its own (driver, JVM, Python workers)."""

    def __init__(self, command: list[str], logs: Path) -> None:
        self.command = command
        self.logs = logs
        self.runs = 0
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.runs += 1
        with (self.logs / f"apply-{self.runs:03d}.log").open("wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def signal(self, signum: int) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signum)
            self.process.wait(timeout=120)


def _caught_up(checkpoint: str, ends: dict[tuple[str, int], int] | None) -> bool:
    commit = last_commit(checkpoint)
    if ends is None or commit is None:
        return False
    return all(commit.offsets.get(key, 0) >= end for key, end in ends.items())


def _chaos(
    apply: ApplyProcess, broker: Any, produced: Production, checkpoint: str, args: argparse.Namespace
) -> Figures:
    """Faults at random moments until everything produced has been applied."""
    rng = random.Random(args.seed)
    figures = Figures()
    deadline = time.monotonic() + args.max_minutes * 60
    next_fault = time.monotonic() + rng.uniform(0.5, 1.5) * args.fault_every
    apply.start()
    while time.monotonic() < deadline:
        time.sleep(2)
        code = apply.exited()
        if code is not None:  # it gave up (a broker away longer than its retries): started again, as a scheduler
            figures.exits[code] += 1
            apply.start()
        if produced.is_set() and _caught_up(checkpoint, _end_offsets(broker.bootstrap, args.partitions)):
            return figures
        if time.monotonic() < next_fault or (produced.is_set() and rng.random() < 0.5):
            continue
        next_fault = time.monotonic() + rng.uniform(0.5, 1.5) * args.fault_every
        if rng.random() < 0.5:
            apply.signal(signal.SIGKILL)
            figures.kills += 1
            apply.start()
        else:
            broker.stop()
            time.sleep(rng.uniform(2, 10))
            broker.start()
            figures.broker_restarts += 1
    raise RuntimeError(f"cdc apply did not catch up within {args.max_minutes} minutes (logs: {apply.logs})")


def _apply_command(bootstrap: str, target: Path, *mode: str) -> list[str]:
    return [sys.executable, "-m", "cdc_core.cli", "apply", "--protocol", "debezium",
            "--source", f"kafka://{bootstrap}/{TOPIC}", "--target", str(target), *mode,
            "--master", "local[2]", "--retries", "5", "--retry-backoff", "2",
            "-o", "source.maxOffsetsPerTrigger=25000", "-o", "trigger-interval=2 seconds"]  # fmt: skip


def soak(args: argparse.Namespace, workdir: Path) -> Figures:
    from cdc_testing.kafka import KafkaBroker, create_topic

    feed, messages = _feed(args.messages, args.seed)
    rng = random.Random(args.seed)
    stream = [attrs.evolve(m, partition=zlib.crc32(m.key or b"") % args.partitions) for m in messages]
    # by position only: two replays may land at the same one, and messages do not compare
    replays = sorted(
        ((i + rng.randrange(1, 200), m) for i, m in enumerate(stream) if rng.random() < args.replay),
        key=lambda pair: pair[0],
    )
    for position, message in reversed(replays):  # a replay lands later than its original, as a retrying producer's
        stream.insert(min(position, len(stream)), message)
    print(f"soak: {len(messages):,} messages of {feed.row_changes:,} row changes; {len(stream) - len(messages):,} "
          f"replays; work directory {workdir}", flush=True)  # fmt: skip
    broker = KafkaBroker()
    target = workdir / "tables"
    started = time.monotonic()
    try:
        broker.start()
        create_topic(broker.bootstrap, TOPIC, args.partitions)
        produced = Production()
        pause = args.produce_minutes * 60 / max(1, len(stream) // CHUNK)
        threading.Thread(target=_produce, args=(broker.bootstrap, stream, produced, pause), daemon=True).start()
        apply = ApplyProcess(_apply_command(broker.bootstrap, target, "--continuous"), workdir)
        try:
            figures = _chaos(apply, broker, produced, str(target / "_checkpoint"), args)
        finally:
            apply.signal(signal.SIGTERM)
        final = subprocess.run(_apply_command(broker.bootstrap, target, "--once"), capture_output=True, text=True,
                               check=False)  # fmt: skip
        print(final.stdout.strip().splitlines()[-1] if final.stdout.strip() else final.stderr[-2000:], flush=True)
        if final.returncode != 0:
            raise RuntimeError(f"the final cdc apply --once exited with {final.returncode}: {final.stderr[-2000:]}")
    finally:
        broker.close()
    figures.seconds = time.monotonic() - started
    figures.messages, figures.replays = len(stream), len(stream) - len(messages)
    problems = differences(str(target), feed, limit=20)
    for problem in problems:
        print(f"  {problem}")
    figures.differences = len(problems)
    figures.lost, figures.doubled = lost_and_doubled(str(target), feed)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdc_spark.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="at least this many (default 100,000)")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--replay", type=float, default=0.05, help="share of messages sent twice (default 0.05)")
    parser.add_argument("--fault-every", type=float, default=45.0, help="mean seconds between faults (default 45)")
    parser.add_argument("--produce-minutes", type=float, default=3.0, help="spread producing over this long")
    parser.add_argument("--max-minutes", type=float, default=120.0, help="give up after this long (default 120)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--workdir", help="where the tables, checkpoint and logs go (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cdc-soak-") as scratch:
        workdir = Path(args.workdir or scratch)
        workdir.mkdir(parents=True, exist_ok=True)
        figures = soak(args, workdir)
    print(figures.line(), flush=True)
    return 0 if (figures.differences, figures.lost, figures.doubled) == (0, 0, 0) else 1


if __name__ == "__main__":
    sys.exit(main())
