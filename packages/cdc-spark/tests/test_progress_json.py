"""``cdc apply --progress json``: one object per batch from the batch's report and Spark's listener, the lag behind
a real Kafka topic per partition, and the Prometheus form of the last object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cdc_core.message import Message
from cdc_spark.cli import main
from cdc_spark.job import BatchReport
from cdc_spark.metrics import last_record, prometheus, record, source_lag
from cdc_spark.metrics import main as metrics_main
from cdc_testing import kafka
from cdc_testing.changefeed import encode, generate

pytest.importorskip("cdc_debezium")


def test_lag_is_the_latest_offset_less_the_end_per_partition() -> None:
    end = '{"shop": {"0": 10, "1": 7}, "logs": {"0": 3}}'
    latest = '{"shop": {"1": 9, "0": 10}, "logs": {"0": 3}}'
    assert source_lag(end, latest) == {"shop": {"0": 0, "1": 2}, "logs": {"0": 0}}
    assert source_lag('{"files": 2}', '{"files": 3}') is None  # not a Kafka source's offsets
    assert source_lag(None, None) is None and source_lag("{", "{}") is None


def _report() -> BatchReport:
    return BatchReport(
        batch_id=2, messages=50, applied={"shop.orders": 30, "shop.items": 12}, skipped=("shop.x",), held=0,
        dead_letters=1, watermark=None, seconds=2.5, decoded={"codec": 50}, decode_seconds=0.5, apply_seconds=1.75,
        changes={"shop.orders": {"insert": 20, "delete": 10}, "shop.items": {"update": 12}},
        ddl=("TRUNCATE TABLE shop.x: rows removed",),
    )  # fmt: skip


class _Source:
    endOffset = '{"shop": {"0": 40, "1": 10}}'
    latestOffset = '{"shop": {"0": 45, "1": 10}}'


class _Progress:
    """The fields of Spark's StreamingQueryProgress that a record reads."""

    timestamp = "2026-01-01T00:00:00.000Z"
    inputRowsPerSecond = 12.5
    processedRowsPerSecond = float("nan")
    durationMs: ClassVar[dict[str, int]] = {"addBatch": 2400}
    sources: ClassVar[list[_Source]] = [_Source()]


def test_a_record_joins_the_report_with_spark_progress() -> None:
    document = record(_report(), _Progress())
    assert document["tables"] == {"shop.items": {"update": 12}, "shop.orders": {"insert": 20, "delete": 10}}
    assert (document["rows"], document["messages_per_second"], document["dead_letters"]) == (42, 20.0, 1)
    assert document["lag"] == {"shop": {"0": 5, "1": 0}} and document["lag_total"] == 5
    assert document["processed_rows_per_second"] is None  # NaN is no JSON
    assert document["ddl"] == ["TRUNCATE TABLE shop.x: rows removed"]
    assert json.loads(json.dumps(document)) == document
    alone = record(_report(), None)
    assert alone["lag"] is None and alone["time"] is None and alone["tables"] == document["tables"]


def test_prometheus_text_of_the_last_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = prometheus(record(_report(), _Progress()))
    assert "# TYPE cdc_apply_batch_rows gauge" in text
    assert 'cdc_apply_batch_rows{table="shop.orders",op="delete"} 10' in text
    assert 'cdc_apply_lag_messages{topic="shop",partition="0"} 5' in text
    assert "cdc_apply_messages_per_second 20.0" in text
    assert text.count("# HELP cdc_apply_batch_rows ") == 1
    path = tmp_path / "progress.jsonl"
    path.write_text(json.dumps({"batch": 1}) + "\n" + json.dumps(record(_report(), None)) + "\n\n")
    assert last_record(path.read_text().splitlines())["batch"] == 2  # type: ignore[index]
    assert metrics_main([str(path), "--prefix", "x"]) == 0
    assert capsys.readouterr().out.startswith("# HELP x_batch id of the last batch\n# TYPE x_batch gauge\nx_batch 2\n")
    assert metrics_main([str(tmp_path / "missing.jsonl")]) == 2


@pytest.mark.spark
@pytest.mark.kafka
def test_json_progress_of_a_kafka_source_shows_the_lag_each_batch_leaves(
    spark: Any, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = kafka.unique_topic("cdc-progress")
    kafka.create_topic(kafka_bootstrap, topic, partitions=2)
    messages = [
        Message(value=m.value, key=m.key, partition=i % 2)
        for i, m in enumerate(encode(generate(seed=12, transactions=12), "debezium", {}))
    ]
    kafka.produce(kafka_bootstrap, topic, messages)
    progress = tmp_path / "progress.jsonl"
    config = tmp_path / "pipeline.yaml"
    config.write_text(
        f"protocol: debezium\nsource: kafka://{kafka_bootstrap}/{topic}\ntarget: {tmp_path / 'tables'}\nonce: true\n"
        f"progress: json\nprogress-file: {progress}\n"
        "option: {source.maxOffsetsPerTrigger: 10, decode: python}\n"
    )
    code = main(["apply", "--config", str(config)])
    assert code == 0
    records = [json.loads(line) for line in progress.read_text().splitlines()]
    assert sum(r["messages"] for r in records) == len(messages) and len(records) >= 2
    left = len(messages)
    for document in records:  # what each batch leaves behind the topic's end
        left -= document["messages"]
        assert document["lag_total"] == left
        assert set(document["lag"]) == {topic} and set(document["lag"][topic]) == {"0", "1"}
    assert records[-1]["lag"] == {topic: {"0": 0, "1": 0}}
