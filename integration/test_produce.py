"""``cdc produce`` against the real broker, as a subprocess: message lines onto a topic with their keys, headers,
partitions and timestamps, so that ``cdc tail`` of the topic prints what ``cdc decode`` prints for the lines."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest

from cdc_core.message import Message
from cdc_core.messagelines import format_line, write_lines
from cdc_testing import kafka

pytest.importorskip("cdc_debezium")
pytest.importorskip("confluent_kafka")
pytestmark = pytest.mark.kafka

PARTITIONS = 3
ROOT = Path(__file__).resolve().parents[1]


def _cdc(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cdc_core.cli", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300, check=False)


def lines_as_on_the_topic(topic: str) -> list[Message]:
    """The quickstart's Debezium sample (a partition by key, offsets counted per partition) on ``topic``, each
    message stamped a millisecond after the last from now (an older time could fall out of the topic's retention)
    and every other one with headers: every coordinate the broker will give it."""
    spec = importlib.util.spec_from_file_location("samples", ROOT / "docs" / "samples" / "make.py")
    assert spec is not None and spec.loader is not None
    samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    placed = samples.placed(samples.changefeed(), "debezium")
    now = int(time.time() * 1000)
    return [
        attrs.evolve(
            m,
            topic=topic,
            timestamp=now + n,
            headers=(("trace", f"t-{n}".encode()), ("empty", None)) if n % 2 else (),
        )
        for n, m in enumerate(placed)
    ]


def test_produce_keeps_every_part_of_a_message_and_tail_prints_what_decode_prints(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = kafka.unique_topic("cdc-produce")
    messages = lines_as_on_the_topic(topic)
    source = tmp_path / "lines.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        write_lines(messages, handle)

    done = _cdc("produce", "-b", kafka_bootstrap, "-t", topic, "--partitions", str(PARTITIONS), str(source))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"cdc produce: {len(messages)} messages sent"

    received = kafka.consume(kafka_bootstrap, topic, len(messages))
    assert sorted(received, key=lambda m: (m.partition, m.offset)) == sorted(
        messages, key=lambda m: (m.partition, m.offset)
    )

    tailed = _cdc("tail", "-b", kafka_bootstrap, "-t", topic, "-p", "debezium", "--from-beginning",
                  "--max-messages", str(len(messages)))  # fmt: skip
    decoded = _cdc("decode", "--protocol", "debezium", str(source))
    assert tailed.returncode == 0 and decoded.returncode == 0, tailed.stderr + decoded.stderr
    # partitions interleave as the consumer reads them; within one they keep their order
    assert sorted(tailed.stdout.splitlines()) == sorted(decoded.stdout.splitlines())
    assert len(decoded.stdout.splitlines()) > len(messages) // 2


def test_lines_from_stdin_go_to_their_own_topics_and_a_sink_uri_names_the_brokers(kafka_bootstrap: str) -> None:
    topic = kafka.unique_topic("cdc-produce")
    kafka.create_topic(kafka_bootstrap, topic)
    lines = [format_line(Message(value=b'{"n": 1}', key=b"k1", topic=topic)), '{"n": 2}']
    uri = f"kafka://{kafka_bootstrap}/{topic}?protocol=debezium&kafka-version=3.0.0"
    done = _cdc("produce", "--sink-uri", uri, stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    received = kafka.consume(kafka_bootstrap, topic, 2)
    assert [(m.key, m.value) for m in received] == [(b"k1", b'{"n": 1}'), (None, b'{"n": 2}')]


def test_a_bad_line_stops_after_the_lines_before_it_are_delivered(kafka_bootstrap: str) -> None:
    topic = kafka.unique_topic("cdc-produce")
    kafka.create_topic(kafka_bootstrap, topic)
    stdin = '{"value": "one"}\n{"value": 5}\n{"value": "three"}\n'
    done = _cdc("produce", "-b", kafka_bootstrap, "-t", topic, stdin=stdin)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "cdc produce: <stdin>:2 field value: must be a string or null, not int (use value_b64 for bytes)"
    )
    assert [m.value for m in kafka.consume(kafka_bootstrap, topic, 1)] == [b"one"]


def test_a_partition_the_topic_lacks_and_a_missing_topic_are_errors(kafka_bootstrap: str) -> None:
    topic = kafka.unique_topic("cdc-produce")
    kafka.create_topic(kafka_bootstrap, topic, partitions=2)
    done = _cdc("produce", "-b", kafka_bootstrap, "-t", topic, stdin=json.dumps({"value": "x", "partition": 7}))
    assert done.returncode == 1
    assert "1 of 1 messages not delivered" in done.stderr and "partition" in done.stderr.lower()
    nameless = _cdc("produce", "-b", kafka_bootstrap, stdin='{"value": "x"}\n')
    assert nameless.returncode == 2
    assert nameless.stderr.strip() == "cdc produce: <stdin>:1: the line names no topic: give --topic"


def test_a_broker_that_is_not_there_fails_after_the_delivery_timeout() -> None:
    absent = f"127.0.0.1:{kafka.free_port()}"
    done = _cdc("produce", "-b", absent, "-t", "t", "-X", "message.timeout.ms=2000", stdin='{"value": "x"}\n')
    assert done.returncode == 3
    assert done.stderr.strip().startswith("cdc produce: kafka: 1 of 1 messages not delivered"), done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1  # librdkafka's own lines only under --debug
