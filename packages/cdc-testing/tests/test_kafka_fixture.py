"""The broker fixture starts a real Apache Kafka broker: produce, consume with a group, committed offsets, headers."""

from __future__ import annotations

import pytest

from cdc_core.message import Message
from cdc_testing import kafka

pytestmark = pytest.mark.kafka


def test_produce_consume_commit_through_the_real_broker(kafka_bootstrap: str, kafka_topic: str) -> None:
    from confluent_kafka import Consumer, TopicPartition

    sent = [Message(value=f"v{i}".encode(), key=b"k", headers=(("h", b"1"),)) for i in range(5)]
    assert kafka.produce(kafka_bootstrap, kafka_topic, sent) == 5

    received = kafka.consume(kafka_bootstrap, kafka_topic, 5)

    assert [m.value for m in received] == [m.value for m in sent]
    assert [m.offset for m in received] == [0, 1, 2, 3, 4]
    assert received[0].headers == (("h", b"1"),)
    # five messages, five offsets: the high watermark is exact
    probe = Consumer(kafka.consumer_config(kafka_bootstrap))
    try:
        low, high = probe.get_watermark_offsets(TopicPartition(kafka_topic, 0), timeout=10)
    finally:
        probe.close()
    assert (low, high) == (0, 5)


def test_existing_broker_is_used_when_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kafka.BOOTSTRAP_ENV, "broker.example:9092")
    with kafka.running_broker() as address:
        assert address == "broker.example:9092"
