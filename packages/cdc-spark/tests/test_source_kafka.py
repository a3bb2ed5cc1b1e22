"""The cdc-kafka source against a real Kafka-protocol broker: batch ranges, streaming with read limits,
Trigger.AvailableNow, restart from the checkpoint, starting offsets by JSON and by timestamp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_core.message import Message
from cdc_spark.source import register
from cdc_spark.source.kafka import capped
from cdc_testing import kafka

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


@pytest.fixture
def topic(kafka_bootstrap: str) -> str:
    name = kafka.unique_topic("src")
    kafka.create_topic(kafka_bootstrap, name, partitions=2)
    return name


def _send(bootstrap: str, topic: str, start: int, count: int) -> None:
    messages = [
        Message(value=f"v{i}".encode(), key=f"k{i}".encode(), partition=i % 2, headers=(("n", str(i).encode()),))
        for i in range(start, start + count)
    ]
    kafka.produce(bootstrap, topic, messages)


def _values(rows: list[Any]) -> list[str]:
    return sorted(bytes(row["value"]).decode() for row in rows)


def test_batch_read_has_spark_kafka_columns_and_every_message(spark: Any, kafka_bootstrap: str, topic: str) -> None:
    register(spark)
    _send(kafka_bootstrap, topic, 0, 10)

    frame = spark.read.format("cdc-kafka").option("kafka.bootstrap.servers", kafka_bootstrap)
    frame = frame.option("subscribe", topic).load()
    rows = frame.collect()

    assert frame.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert _values(rows) == sorted(f"v{i}" for i in range(10))
    by_partition = {p: sorted(r["offset"] for r in rows if r["partition"] == p) for p in (0, 1)}
    assert by_partition == {0: [0, 1, 2, 3, 4], 1: [0, 1, 2, 3, 4]}
    first = next(r for r in rows if bytes(r["value"]) == b"v3")
    assert bytes(first["key"]) == b"k3"
    assert first["partition"] == 1
    assert [(h["key"], bytes(h["value"])) for h in first["headers"]] == [("n", b"3")]
    assert first["timestamp"] is not None and first["timestampType"] == 0


def test_batch_offsets_json_select_a_range(spark: Any, kafka_bootstrap: str, topic: str) -> None:
    register(spark)
    _send(kafka_bootstrap, topic, 0, 10)
    reader = (
        spark.read.format("cdc-kafka").option("kafka.bootstrap.servers", kafka_bootstrap).option("subscribe", topic)
    )
    reader = reader.option("startingOffsets", json.dumps({topic: {"0": 3, "1": -2}}))
    reader = reader.option("endingOffsets", json.dumps({topic: {"0": 4, "1": 1}}))
    # Partition 0 holds v0, v2, v4, v6, v8 (offset 3 is v6); partition 1 holds v1 first.
    assert _values(reader.load().collect()) == ["v1", "v6"]


def test_stream_available_now_with_limit_then_restart(
    spark: Any, kafka_bootstrap: str, topic: str, tmp_path: Path
) -> None:
    register(spark)
    _send(kafka_bootstrap, topic, 0, 10)
    batches: list[tuple[int, list[str]]] = []

    def collect(frame: Any, batch_id: int) -> None:
        batches.append((batch_id, _values(frame.collect())))

    def run() -> None:
        stream = (
            spark.readStream.format("cdc-kafka")
            .option("kafka.bootstrap.servers", kafka_bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "4")
            .load()
        )
        query = stream.writeStream.foreachBatch(collect).trigger(availableNow=True)
        query.option("checkpointLocation", str(tmp_path / "checkpoint")).start().awaitTermination(120)

    run()
    first_run = [values for _, values in batches if values]
    assert sorted(v for values in first_run for v in values) == sorted(f"v{i}" for i in range(10))
    assert all(len(values) <= 4 for values in first_run)
    assert len(first_run) >= 3

    batches.clear()
    _send(kafka_bootstrap, topic, 10, 3)
    run()
    # From the checkpoint: only the new messages, each once.
    assert sorted(v for _, values in batches for v in values) == ["v10", "v11", "v12"]


def test_capped_shares_the_limit_in_proportion() -> None:
    start = {("t", 0): 0, ("t", 1): 10}
    latest = {("t", 0): 30, ("t", 1): 20}
    end = capped(start, latest, 8)
    assert sum(end[tp] - start[tp] for tp in start) == 8
    assert end == {("t", 0): 6, ("t", 1): 12}
    assert capped(start, latest, 100) == latest


def test_missing_options_are_config_errors(spark: Any, kafka_bootstrap: str) -> None:
    from cdc_spark.source.kafka import KafkaMetadata, client_config

    with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
        client_config({"subscribe": "t"})
    with pytest.raises(ConfigError, match="exactly one of"):
        KafkaMetadata({"kafka.bootstrap.servers": kafka_bootstrap}).topic_partitions()
