"""``cdc tail``: decode a live topic with confluent-kafka, printing canonical events.

Offsets are committed only after the events of a message have been written and flushed, so a killed ``tail``
prints a message again rather than losing it (at least once).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from cdc_core import canonical
from cdc_core.cli.arguments import add_codec_options, add_error_policy, add_sink_uri, codec_choice, parse_options
from cdc_core.cli.streams import StopOnError
from cdc_core.errors import CdcError, ConfigError
from cdc_core.message import Message
from cdc_core.secrets import redact_text
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
    tail.add_argument("--idle-timeout", type=float, help="stop after this many seconds without a message")
    tail.add_argument("--no-schema", action="store_true", help="leave table schemas out of row events")
    tail.add_argument(
        "--consumer-option", "-X", action="append", metavar="NAME=VALUE", help="a librdkafka consumer setting"
    )
    add_codec_options(tail)
    add_error_policy(tail)
    tail.set_defaults(handler=tail_command)


def _consumer(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    try:
        from confluent_kafka import Consumer, KafkaException
    except ImportError as exc:
        raise ConfigError("cdc tail needs confluent-kafka: pip install 'cdc-core[kafka]'") from exc
    # the sink URI's brokers and its SASL/TLS parameters, --bootstrap-servers and -X on top
    config: dict[str, Any] = args.sink_uri.consumer_config() if args.sink_uri is not None else {}
    if args.bootstrap_servers:
        config["bootstrap.servers"] = args.bootstrap_servers
    if "bootstrap.servers" not in config:
        raise ConfigError("give --bootstrap-servers or --sink-uri")
    config |= {
        "group.id": args.group or f"cdc-tail-{time.time_ns()}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
    }
    config.update(parse_options(args.consumer_option))
    try:
        return Consumer(config), config
    except KafkaException as exc:  # librdkafka may quote the rejected value: never print a credential
        raise ConfigError(f"kafka consumer settings rejected: {redact_text(str(exc), config)}") from None


def tail_command(args: argparse.Namespace) -> int:
    from cdc_core.registry import get_codec

    protocol, options = codec_choice(args.protocol, args.sink_uri, args.option, flag="--protocol")
    topics = args.topic or ([args.sink_uri.topic] if args.sink_uri is not None and args.sink_uri.topic else [])
    if not topics:
        raise ConfigError("give --topic or a sink URI with a topic")
    # the consumer uses the URI's security parameters: the decoder need not note them as unused
    decoder = get_codec(protocol).decoder({k: v for k, v in options.items() if k not in CONSUMER_PARAMETERS})
    consumer, config = _consumer(args)
    consumer.subscribe(topics)
    seen = 0
    last = time.monotonic()
    commit = args.group is not None
    try:
        while args.max_messages is None or seen < args.max_messages:
            record = consumer.poll(0.5)
            if record is None:
                if args.idle_timeout is not None and time.monotonic() - last > args.idle_timeout:
                    break
                continue
            if record.error():
                raise CdcError(f"kafka: {redact_text(str(record.error()), config)}")
            last = time.monotonic()
            seen += 1
            message = Message.from_kafka(record)
            try:
                for event in decoder.decode(message):
                    sys.stdout.write(canonical.dumps(event, include_schema=not args.no_schema) + "\n")
            except CdcError as exc:
                if args.on_error.mode == "fail":
                    print(f"cdc: error: {message.coordinates}: {exc}", file=sys.stderr)
                    raise StopOnError(str(exc)) from exc
                print(f"cdc: skipped: {message.coordinates}: {exc}", file=sys.stderr)
            sys.stdout.flush()
            if commit:
                consumer.commit(message=record, asynchronous=False)
    finally:
        consumer.close()
    return 0
