"""A real Apache Kafka broker for tests and the demo: one KRaft node (broker and controller) on loopback.

The broker runs from the Maven Central jars pinned in ``cdc_core/jvm.toml`` (bundle ``kafka-broker``, resolved by
:func:`cdc_core.jvm.classpath`), with its log in a temporary directory that is removed when it stops.
``CDC_TEST_KAFKA_BOOTSTRAP`` points the tests at an existing broker instead.

``cdc-test-kafka`` (the console script) starts one, prints ``bootstrap=HOST:PORT`` as its first line once clients
can use it, and runs until SIGTERM or SIGINT, then stops the broker and removes its data.
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from cdc_core.jvm import classpath, java_executable
from cdc_core.message import Message
from cdc_core.producing import send
from cdc_testing.processes import SERVER_JVM_FLAGS, ServerProcess, log_tail, serve_until_stopped

BOOTSTRAP_ENV: Final = "CDC_TEST_KAFKA_BOOTSTRAP"
START_TIMEOUT_S: Final = 90.0
STOP_TIMEOUT_S: Final = 30.0
HEAP: Final = "-Xmx512m"

# Single-node settings: every internal topic with one replica, no wait before the first group rebalance.
_SETTINGS: Final = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "inter.broker.listener.name": "PLAINTEXT",
    "num.partitions": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "3",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "log.cleaner.backoff.ms": "1000",  # compacted topics in tests are cleaned within seconds
}
_LOG_CONFIG: Final = """\
status = error
rootLogger.level = warn
rootLogger.appenderRef.file.ref = FILE
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/broker.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d %p %c{1}: %m%n
"""


class BrokerUnavailableError(RuntimeError):
    """The broker could not be started (Java, Maven or the jars missing, or it did not come up)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64 without padding (what StorageTool generates).

    Never one that starts with ``-``: StorageTool's argument parser would take it for an option (1 start in 64).
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class KafkaBroker(ServerProcess):
    """One Apache Kafka process with its data directory; :meth:`stop` and :meth:`start` again keep the log."""

    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self, port: int | None = None, advertised_port: int | None = None) -> None:
        super().__init__("cdc-kafka-")
        self.port = port or free_port()
        self.advertised_port = advertised_port or self.port
        self.controller_port = free_port()
        self._jars: list[Path] | None = None
        self._formatted = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.home / "broker.log"

    def _write_config(self) -> Path:
        settings = {
            **_SETTINGS,
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.advertised_port}",
            "log.dirs": str(self.home / "data"),
        }
        config = self.home / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        (self.home / "log4j2.properties").write_text(_LOG_CONFIG, encoding="utf-8")
        return config

    def _java(self, main: str, *args: str) -> list[str]:
        if self._jars is None:
            try:
                self._jars = classpath("kafka-broker")
            except RuntimeError as exc:
                raise BrokerUnavailableError(f"cannot get the Kafka broker jars: {exc}") from exc
        return [
            java_executable(),
            HEAP,
            *SERVER_JVM_FLAGS,
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.home}",
            "-cp",
            os.pathsep.join(str(j) for j in self._jars),
            main,
            *args,
        ]

    def start(self) -> str:
        """Start the broker (formatting its storage the first time); returns the bootstrap address once usable."""
        config = self._write_config()
        if not self._formatted:
            done = subprocess.run(
                self._java("kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", str(config)),
                capture_output=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0:
                raise BrokerUnavailableError(f"formatting the KRaft storage failed: {done.stderr.decode()[-2000:]}")
            self._formatted = True
        self._spawn(self._java("kafka.Kafka", str(config)))
        self._wait_until_serving()
        return self.bootstrap

    def _wait_until_serving(self) -> None:
        """Until the broker answers a metadata request and is a registered broker (clients can produce)."""
        from confluent_kafka.admin import AdminClient

        assert self._process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{self.port}", "log_level": 0})
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BrokerUnavailableError(
                    f"Kafka exited with code {self._process.returncode} before serving; log:\n{self._log_tail()}"
                )
            with contextlib.suppress(Exception):
                if admin.list_topics(timeout=1).brokers:
                    return
            time.sleep(0.1)
        self.stop()
        raise BrokerUnavailableError(f"Kafka did not serve on {self.bootstrap} within {START_TIMEOUT_S:.0f} s")

    def _log_tail(self) -> str:
        return log_tail((self.stderr_log, self.log_file), 3000)


@contextlib.contextmanager
def running_broker(port: int | None = None, advertised_port: int | None = None) -> Iterator[str]:
    """Start a broker; yields its bootstrap address, stops it and removes its data on exit.

    ``advertised_port`` makes the broker tell clients to connect there instead (a fault-injecting proxy in front
    of it, see :mod:`cdc_testing.faults`). With ``CDC_TEST_KAFKA_BOOTSTRAP`` set, yields that address and starts
    nothing.
    """
    existing = os.environ.get(BOOTSTRAP_ENV)
    if existing:
        yield existing
        return
    broker = KafkaBroker(port, advertised_port)
    try:
        yield broker.start()
    finally:
        broker.close()


def unique_topic(prefix: str = "cdc-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def create_topic(bootstrap: str, topic: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
    """Create a topic (``config``: topic settings such as ``cleanup.policy``) and wait until it exists."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})
    for future in admin.create_topics([new]).values():
        future.result(timeout=30)


def producer_config(bootstrap: str, **overrides: Any) -> dict[str, Any]:
    """An idempotent producer that waits for the broker's acknowledgement of every message."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"}
    config.update(overrides)
    return config


def consumer_config(bootstrap: str, group: str | None = None, **overrides: Any) -> dict[str, Any]:
    """A fresh group reading from the start, committing only when told to."""
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group or unique_topic("cdc-group"),
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    config.update(overrides)
    return config


def produce(bootstrap: str, topic: str, messages: Iterable[Message]) -> int:
    """Send messages (their partition and timestamp when set; else the key's partition), wait for every delivery;
    returns the count."""
    from confluent_kafka import Producer

    producer = Producer(producer_config(bootstrap))
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    sent = 0
    for message in messages:
        send(producer, topic, message, delivered)
        sent += 1
    remaining = producer.flush(60)
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
            received.append(Message.from_kafka(record))
        if received:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return received


def main(argv: Sequence[str] | None = None) -> int:
    """``cdc-test-kafka``: run a broker until SIGTERM/SIGINT; the first stdout line is ``bootstrap=HOST:PORT``."""
    import argparse

    parser = argparse.ArgumentParser(prog="cdc-test-kafka", description="run a single-node Apache Kafka for tests")
    parser.add_argument("--port", type=int, default=None, help="listener port (default: a free one)")
    args = parser.parse_args(argv)
    broker = KafkaBroker(args.port)
    return serve_until_stopped("cdc-test-kafka", broker, lambda: f"bootstrap={broker.start()}", BrokerUnavailableError)


if __name__ == "__main__":
    sys.exit(main())
