"""``cdc produce``: message lines (the ``decode`` input format) onto a Kafka topic, the inverse of ``tail``.

Each line's key, value, headers and timestamp are sent as they are, to the line's partition when it names one
(else the producer's partitioner picks by key). The producer is idempotent and waits for every acknowledgement,
so the messages of a partition land in the order of the lines; librdkafka retries a broker that is away until
its delivery timeout: a message not delivered by then ends the run with exit code 3 (a broker away), one the
broker refused with exit code 1, a line that is not a message line with exit code 1 after the lines before it
are delivered.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from typing import Any, Final

from cdc_core.cli.arguments import add_sink_uri, broker_config, parse_options
from cdc_core.cli.failures import debug_wanted
from cdc_core.cli.kafka_consumer import librdkafka_log
from cdc_core.cli.streams import open_input
from cdc_core.errors import CdcError, ConfigError, DataError, UnavailableError
from cdc_core.message import Message
from cdc_core.messagelines import read_lines
from cdc_core.producing import send
from cdc_core.secrets import redact_text

DELIVERY_TIMEOUT_MS: Final = 60_000
FLUSH_TIMEOUT_S: Final = 120.0
TOPIC_TIMEOUT_S: Final = 30.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    produce = subparsers.add_parser(
        "produce", help="send message lines to a Kafka topic (needs cdc-core[kafka])", description=__doc__
    )
    produce.add_argument("--bootstrap-servers", "-b", help="brokers (or give --sink-uri)")
    produce.add_argument("--topic", "-t", help="the topic (default: the sink URI's, else each line's own)")
    add_sink_uri(produce)
    produce.add_argument(
        "--partitions", type=int, metavar="N", help="create the topic with N partitions if it does not exist"
    )
    produce.add_argument(
        "--producer-option", "-X", action="append", metavar="NAME=VALUE", help="a librdkafka producer setting"
    )
    produce.add_argument("input", nargs="?", default="-", help="message lines (default: stdin)")
    produce.set_defaults(handler=produce_command)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    config: dict[str, Any] = broker_config(args)
    config |= {"enable.idempotence": True, "acks": "all", "message.timeout.ms": DELIVERY_TIMEOUT_MS}
    config.update(parse_options(args.producer_option))
    # librdkafka's own log lines only under --debug: a failure is one line of ours
    config["logger"] = librdkafka_log(debug_wanted(getattr(args, "debug", False)))
    return config


def _ensure_topic(config: dict[str, Any], topic: str, partitions: int) -> None:
    """Create ``topic`` with ``partitions`` unless the cluster has it already."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({k: v for k, v in config.items() if k not in _PRODUCER_ONLY})
    try:
        if topic in admin.list_topics(timeout=TOPIC_TIMEOUT_S).topics:
            return
        future = admin.create_topics([NewTopic(topic, num_partitions=partitions)])[topic]
        future.result(timeout=TOPIC_TIMEOUT_S)
    except KafkaException as exc:
        if exc.args and getattr(exc.args[0], "name", lambda: "")() == "TOPIC_ALREADY_EXISTS":
            return
        raise UnavailableError(f"kafka: cannot create topic {topic}: {redact_text(str(exc), config)}") from None


_PRODUCER_ONLY: Final = frozenset({"enable.idempotence", "acks", "message.timeout.ms"})
# librdkafka's delivery errors of a broker that is away (not of a message it refused)
_AWAY: Final = frozenset({-192, -195, -187, -185})  # _MSG_TIMED_OUT, _TRANSPORT, _ALL_BROKERS_DOWN, _TIMED_OUT


def produce_command(args: argparse.Namespace) -> int:
    try:
        from confluent_kafka import KafkaException, Producer
    except ImportError as exc:
        raise ConfigError("cdc produce needs confluent-kafka: pip install 'cdc-core[kafka]'") from exc
    if args.partitions is not None and args.partitions < 1:
        raise ConfigError(f"--partitions {args.partitions}: expected 1 or more")
    topic = args.topic or (args.sink_uri.topic if args.sink_uri is not None else None)
    config = _config(args)
    if args.partitions is not None:
        if topic is None:
            raise ConfigError("--partitions needs --topic (or a sink URI with a topic)")
        _ensure_topic(config, topic, args.partitions)
    try:
        producer = Producer(config)
    except KafkaException as exc:  # librdkafka may quote the rejected value: never print a credential
        raise ConfigError(f"kafka producer settings rejected: {redact_text(str(exc), config)}") from None
    failures: list[str] = []
    timed_out: list[bool] = []

    def delivered(error: Any, message: object) -> None:
        if error is not None:
            failures.append(redact_text(str(error), config))
            timed_out.append(error.code() in _AWAY)

    sent = 0
    with ExitStack() as stack:
        stream, source = open_input(args.input, stack)
        try:
            for number, message in read_lines(stream, source=source):
                _send(producer, message, topic, f"{source}:{number}", delivered)
                sent += 1
        except CdcError:  # the lines before it are delivered first
            producer.flush(FLUSH_TIMEOUT_S)
            raise
    left = producer.flush(FLUSH_TIMEOUT_S)
    if left or failures:
        reason = (
            f"kafka: {left + len(failures)} of {sent} messages not delivered: {(failures or ['flush timed out'])[0]}"
        )
        raise UnavailableError(reason) if left or all(timed_out) else DataError(reason)
    print(f"cdc produce: {sent} messages sent", file=sys.stderr)
    return 0


def _send(producer: Any, message: Message, topic: str | None, where: str, delivered: Any) -> None:
    target = topic or message.topic
    if not target:
        raise ConfigError(f"{where}: the line names no topic: give --topic")
    try:
        send(producer, target, message, delivered)
    except Exception as exc:  # KafkaException, or librdkafka's ValueError, for this one message
        raise DataError(f"{where}: kafka refused the message: {exc}") from exc
