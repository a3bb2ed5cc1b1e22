"""The cdc-messages file source: message lines as Kafka-shaped rows, batch and streaming by file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_core.messagelines import format_line
from cdc_spark.source import register

pytestmark = pytest.mark.spark


def _write(path: Path, messages: list[Message]) -> None:
    path.write_text("".join(format_line(m) + "\n" for m in messages))


def test_batch_rows_keep_coordinates_and_number_the_rest(spark: Any, tmp_path: Path) -> None:
    register(spark)
    _write(tmp_path / "a.jsonl", [Message(value=b"x", topic="orders", partition=3, offset=70), Message(value=None)])
    _write(tmp_path / "b.jsonl", [Message(value=b"\xff\x00", key=b"k")])
    rows = spark.read.format("cdc-messages").option("path", str(tmp_path)).load().orderBy("topic", "offset").collect()
    summary = [(r["topic"], r["partition"], r["offset"], r["value"] and bytes(r["value"])) for r in rows]
    # Lines without coordinates take the file stem as topic, partition 0 and their position as offset.
    assert summary == [("a", 0, 1, None), ("b", 0, 0, b"\xff\x00"), ("orders", 3, 70, b"x")]


def test_stream_reads_new_files_once(spark: Any, tmp_path: Path) -> None:
    register(spark)
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "001.jsonl", [Message(value=b"1"), Message(value=b"2")])
    seen: list[bytes] = []

    def run() -> None:
        stream = spark.readStream.format("cdc-messages").option("path", str(folder))
        query = stream.load().writeStream.foreachBatch(lambda f, _: seen.extend(bytes(r["value"]) for r in f.collect()))
        query.trigger(availableNow=True).option("checkpointLocation", str(tmp_path / "cp")).start().awaitTermination(60)

    run()
    _write(folder / "002.jsonl", [Message(value=b"3")])
    run()
    assert sorted(seen) == [b"1", b"2", b"3"]


def test_max_files_per_trigger_is_a_clear_error(spark: Any, tmp_path: Path) -> None:
    register(spark)
    _write(tmp_path / "001.jsonl", [Message(value=b"1")])
    stream = spark.readStream.format("cdc-messages").option("path", str(tmp_path)).option("maxFilesPerTrigger", "1")
    query = stream.load().writeStream.foreachBatch(lambda f, _: f.count())
    with pytest.raises(Exception, match="maxFilesPerTrigger needs read limits"):
        query.trigger(availableNow=True).option("checkpointLocation", str(tmp_path / "cp")).start().awaitTermination(60)


def test_a_bad_line_fails_the_read_naming_file_and_line(spark: Any, tmp_path: Path) -> None:
    register(spark)
    (tmp_path / "bad.jsonl").write_text('{"value": "ok"}\n{"value": 5}\n')
    with pytest.raises(Exception, match=r"bad.jsonl:2 field value"):
        spark.read.format("cdc-messages").option("path", str(tmp_path / "bad.jsonl")).load().collect()
