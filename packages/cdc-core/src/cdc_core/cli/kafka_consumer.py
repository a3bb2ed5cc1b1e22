"""The Kafka side of ``cdc tail``: a confluent-kafka consumer whose every wait is bounded.

librdkafka reconnects by itself, with backoff (``reconnect.backoff.ms`` up to ``reconnect.backoff.max.ms``); this
module bounds how long the brokers may stay unreachable (``--broker-timeout``, at the start and during the run)
before the run fails with :class:`UnavailableError`, checks that the topics exist, and keeps librdkafka's own log
lines off stderr unless ``--debug`` asks for them.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final

from cdc_core.cli.summary import offsets_text
from cdc_core.errors import ConfigError, UnavailableError
from cdc_core.secrets import redact_text

DEFAULT_BROKER_TIMEOUT_S: Final = 30.0
PROBE_TIMEOUT_S: Final = 5.0
# librdkafka errors that say no broker can be reached (the others surface on the messages or the calls)
_DOWN: Final = frozenset({"_ALL_BROKERS_DOWN", "_TRANSPORT", "_RESOLVE"})


def librdkafka_log(debug: bool) -> logging.Logger:
    """Where librdkafka's log lines go: nowhere, or stderr under ``--debug``."""
    logger = logging.getLogger("cdc.tail.librdkafka")
    logger.propagate = False
    logger.handlers.clear()
    if debug:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("librdkafka: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    else:
        logger.addHandler(logging.NullHandler())
    return logger


class BoundedConsumer:
    """A subscribed consumer that fails, instead of waiting for ever, when no broker answers for ``timeout`` s."""

    def __init__(self, config: dict[str, Any], topics: Sequence[str], *, timeout: float, debug: bool) -> None:
        try:
            from confluent_kafka import Consumer, KafkaException
        except ImportError as exc:
            raise ConfigError("cdc tail needs confluent-kafka: pip install 'cdc-core[kafka]'") from exc
        self.config = config
        self.topics = tuple(topics)
        self.timeout = timeout
        self._down_since: float | None = None
        settings = {**config, "logger": librdkafka_log(debug), "error_cb": self._on_error}
        try:
            self.consumer = Consumer(settings)
        except KafkaException as exc:  # librdkafka may quote the rejected value: never print a credential
            raise ConfigError(f"kafka consumer settings rejected: {self._safe(exc)}") from None
        self.partitions = self._check_topics()
        self.assigned_at: float | None = None  # when the group gave this consumer its partitions
        self._subscribed_at = time.monotonic()
        self.consumer.subscribe(list(self.topics), on_assign=self._on_assign)

    @property
    def brokers(self) -> str:
        return str(self.config.get("bootstrap.servers", "?"))

    def _safe(self, error: object) -> str:
        return redact_text(str(error), self.config)

    def _on_assign(self, _consumer: Any, _partitions: Any) -> None:
        if self.assigned_at is None:
            self.assigned_at = time.monotonic()

    def _on_error(self, error: Any) -> None:
        if error.name() in _DOWN and self._down_since is None:
            self._down_since = time.monotonic()

    def _reason(self, exc: Exception) -> str:
        """A librdkafka failure's own words (``Local: Broker transport failure``), credentials masked."""
        error: Any = exc.args[0] if exc.args else exc
        return self._safe(error.str() if callable(getattr(error, "str", None)) else error)

    def _metadata(self, timeout: float) -> Any:
        from confluent_kafka import KafkaException

        try:
            return self.consumer.list_topics(timeout=timeout)  # every topic: asking for one may create it
        except KafkaException as exc:
            raise UnavailableError(
                f"kafka: no broker of {self.brokers} answered within {self.timeout:g} s (--broker-timeout) while "
                f"reading the topics' metadata: {self._reason(exc)}"
            ) from None

    def _check_topics(self) -> dict[str, list[int]]:
        """Each topic's partitions; a topic the brokers do not have is a usage error (it would wait for ever)."""
        metadata = self._metadata(self.timeout)
        missing = [t for t in self.topics if t not in metadata.topics or metadata.topics[t].error is not None]
        if missing:
            raise ConfigError(f"kafka: no topic {', '.join(missing)} on {self.brokers}: check --topic or the sink URI")
        return {topic: sorted(metadata.topics[topic].partitions) for topic in self.topics}

    def poll(self, seconds: float) -> Any:
        """The next record or None; raises when the brokers have been unreachable for longer than the bound."""
        record = self.consumer.poll(seconds)
        if record is not None:
            error = record.error()
            if error is None:
                self._down_since = None
                return record
            if error.name() == "_PARTITION_EOF":
                return None
            raise UnavailableError(f"kafka: reading {record.topic()}[{record.partition()}]: {self._safe(error)}")
        now = time.monotonic()
        if self._down_since is not None and now - self._down_since > self.timeout:
            self._metadata(PROBE_TIMEOUT_S)  # raises while they are still down
            self._down_since = None
        if self.assigned_at is None and now - self._subscribed_at > self.timeout:
            raise UnavailableError(
                f"kafka: the group coordinator of {self.brokers} assigned no partitions of {', '.join(self.topics)} "
                f"within {self.timeout:g} s (--broker-timeout)"
            )
        return None

    def commit(self, record: Any) -> None:
        from confluent_kafka import KafkaException

        try:
            self.consumer.commit(message=record, asynchronous=False)
        except KafkaException as exc:
            raise UnavailableError(
                f"kafka: committing {record.topic()}[{record.partition()}]@{record.offset()} failed: "
                f"{self._reason(exc)}; that message will be read again"
            ) from None

    def committed(self) -> dict[tuple[str, int], int]:
        """The group's committed offsets of every partition of the topics (none where it committed nothing)."""
        from confluent_kafka import KafkaException, TopicPartition

        wanted = [TopicPartition(t, p) for t, partitions in self.partitions.items() for p in partitions]
        try:
            found: Iterable[Any] = self.consumer.committed(wanted, timeout=PROBE_TIMEOUT_S)
        except KafkaException:
            return {}
        return {(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}

    def since(self, group: str | None) -> str:
        """Where the group stood, for "nothing new since ...": its committed offsets, else what was asked."""
        if group is None:
            return "this run started (no --group: nothing is committed)"
        committed = self.committed()
        if not committed:
            return f"the start of {', '.join(self.topics)} (group {group} has committed nothing)"
        return f"{offsets_text(committed)} (group {group})"

    def close(self) -> None:
        self.consumer.close()
