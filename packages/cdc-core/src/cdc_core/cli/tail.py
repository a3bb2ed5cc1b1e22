"""``cdc tail``: decode a live topic with confluent-kafka, printing canonical events.

A message's offset is committed (with ``--group``) only once its events are written and flushed, or it is
durably dead-lettered, or skipped as asked: a killed ``tail`` prints a message again rather than losing it (at
least once). A message the decoder holds until its schema arrives (Simple) holds back its partition's commits
until it is released; the ones still held when the run ends are dead letters, and only then committed. A
registry or broker that is down ends the run (exit code 3) without committing the message at hand.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from cdc_core import canonical
from cdc_core.cli.arguments import (
    add_codec_options,
    add_error_policy,
    add_sink_uri,
    broker_config,
    codec_choice,
    parse_options,
)
from cdc_core.cli.failed_messages import FailedMessages
from cdc_core.cli.failures import debug_wanted
from cdc_core.cli.held import HeldMessages, Partition, partition_of
from cdc_core.cli.kafka_consumer import DEFAULT_BROKER_TIMEOUT_S, BoundedConsumer
from cdc_core.cli.summary import RunSummary
from cdc_core.errors import CdcError, ConfigError, UnavailableError
from cdc_core.message import Message
from cdc_core.messagelines import format_line
from cdc_core.sinkuri import CONSUMER_PARAMETERS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tail = subparsers.add_parser("tail", help="decode a live Kafka topic (needs cdc-core[kafka])")
    tail.add_argument("--bootstrap-servers", "-b", help="brokers (or give --sink-uri)")
    tail.add_argument("--topic", "-t", action="append", help="repeatable (default: the sink URI's topic)")
    tail.add_argument("--protocol", "-p", help="the protocol (or give --sink-uri)")
    add_sink_uri(tail)
    tail.add_argument("--group", "-g", help="consumer group (default: a fresh one, nothing committed)")
    tail.add_argument("--from-beginning", action="store_true", help="start at the earliest offset without a commit")
    tail.add_argument("--max-messages", type=int, help="stop after this many messages")
    tail.add_argument(
        "--idle-timeout",
        type=float,
        help="stop after this many seconds without a message (counted from when the group assigned the partitions)",
    )
    tail.add_argument(
        "--broker-timeout",
        type=float,
        default=DEFAULT_BROKER_TIMEOUT_S,
        metavar="S",
        help="fail (exit code 3) when no broker has answered for this many seconds, at the start or later "
        f"(default {DEFAULT_BROKER_TIMEOUT_S:g})",
    )
    tail.add_argument("--no-schema", action="store_true", help="leave table schemas out of row events")
    tail.add_argument(
        "--consumer-option", "-X", action="append", metavar="NAME=VALUE", help="a librdkafka consumer setting"
    )
    add_codec_options(tail)
    add_error_policy(tail)
    tail.set_defaults(handler=tail_command)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    # the sink URI's brokers and its SASL/TLS parameters, --bootstrap-servers and -X on top
    config: dict[str, Any] = broker_config(args)
    config |= {
        "group.id": args.group or f"cdc-tail-{time.time_ns()}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
    }
    config.update(parse_options(args.consumer_option))
    return config


def tail_command(args: argparse.Namespace) -> int:
    from cdc_core.registry import get_codec

    protocol, options = codec_choice(args.protocol, args.sink_uri, args.option, flag="--protocol")
    topics = args.topic or ([args.sink_uri.topic] if args.sink_uri is not None and args.sink_uri.topic else [])
    if not topics:
        raise ConfigError("give --topic or a sink URI with a topic")
    if args.broker_timeout <= 0:
        raise ConfigError(f"--broker-timeout {args.broker_timeout:g}: expected a number of seconds above 0")
    # the consumer uses the URI's security parameters: the decoder need not note them as unused
    decoder = get_codec(protocol).decoder({k: v for k, v in options.items() if k not in CONSUMER_PARAMETERS})
    summary = RunSummary()
    with FailedMessages(args.on_error, args.max_dead_letters) as failures:
        consumer = BoundedConsumer(
            _config(args), topics, timeout=args.broker_timeout, debug=debug_wanted(getattr(args, "debug", False))
        )
        try:
            _consume(args, consumer, decoder, failures, summary)
        finally:
            since = consumer.since(args.group) if summary.read == 0 else None
            consumer.close()
            line = summary.line("tail", dead_letters=failures.count, where=failures.where, since=since)
            print(line, file=sys.stderr)
    return 0


def _consume(
    args: argparse.Namespace, consumer: BoundedConsumer, decoder: Any, failures: FailedMessages, summary: RunSummary
) -> None:
    last: float | None = None  # the idle clock starts once the group has assigned the partitions
    held = HeldMessages(decoder)
    uncommitted: dict[Partition, Any] = {}  # a partition's last record, while it holds a message back
    while args.max_messages is None or summary.read < args.max_messages:
        record = consumer.poll(0.5)
        if record is None:
            last = last if last is not None else consumer.assigned_at
            if args.idle_timeout is not None and last is not None and time.monotonic() - last > args.idle_timeout:
                break
            continue
        last = time.monotonic()
        summary.read += 1
        message = Message.from_kafka(record)
        try:
            events = decoder.decode(message)
        except UnavailableError:
            raise  # the registry or store is down: this message is not the data's fault, nothing is committed
        except CdcError as exc:
            failures.failed(message.coordinates, exc, format_line(message))
        else:
            held.note(message, events)
            summary.count(events)
            for event in events:
                sys.stdout.write(canonical.dumps(event, include_schema=not args.no_schema) + "\n")
        sys.stdout.flush()
        where = partition_of(message)
        if args.group is not None:
            uncommitted[where] = record
            _commit(consumer, held, uncommitted)
        summary.offsets[where] = (message.offset or 0) + 1
    # the run ends: what is still held never gets its schema here; once dead-lettered, its offset may be committed
    held.drain(failures, when="before the run ended")
    _commit(consumer, held, uncommitted)


def _commit(consumer: BoundedConsumer, held: HeldMessages, uncommitted: dict[Partition, Any]) -> None:
    """Commit each partition's last record, but for those where a message is still held: no commit passes it."""
    for where in [where for where in uncommitted if not held.holds(*where)]:
        consumer.commit(uncommitted.pop(where))
