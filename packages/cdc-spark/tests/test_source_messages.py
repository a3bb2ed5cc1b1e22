"""Files of message lines as Kafka-shaped rows: the cdc-messages batch source, and the stream on Spark's own file
source (Trigger.AvailableNow, read limits)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_core.message import Message
from cdc_core.messagelines import format_line
from cdc_spark.source import register
from cdc_spark.source.file_stream import listing_uri, message_stream, stream_path

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


def _drain(spark: Any, stream: Any, checkpoint: Path) -> list[list[Any]]:
    """Every micro-batch's rows of one ``Trigger.AvailableNow`` run."""
    batches: list[list[Any]] = []
    query = stream.writeStream.foreachBatch(lambda f, _: batches.append(f.collect()))
    query.trigger(availableNow=True).option("checkpointLocation", str(checkpoint)).start().awaitTermination(120)
    return batches


def test_stream_reads_new_files_once_with_their_coordinates(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "001.jsonl", [Message(value=b"1", headers=(("h", b"v"),)), Message(value=b"2", partition=2)])
    first = _drain(spark, message_stream(spark, str(folder)), tmp_path / "cp")
    _write(folder / "002.jsonl", [Message(value=b"3", topic="orders", offset=70)])
    second = _drain(spark, message_stream(spark, str(folder)), tmp_path / "cp")
    again = _drain(spark, message_stream(spark, str(folder)), tmp_path / "cp")
    rows = [r for batch in first + second for r in batch]
    assert [(r["topic"], r["partition"], r["offset"], bytes(r["value"])) for r in rows] == [
        ("001", 0, 0, b"1"), ("001", 2, 1, b"2"), ("orders", 0, 70, b"3"),
    ]  # fmt: skip
    assert [(h["key"], bytes(h["value"])) for h in rows[0]["headers"]] == [("h", b"v")]
    assert again == []  # nothing new: no batch at all


def test_the_batch_functions_refuse_a_stream_and_say_what_to_do_instead(spark: Any, tmp_path: Path) -> None:
    # decode and apply run Spark jobs over a batch's rows; on a stream Spark refuses them with an analysis error that
    # names neither the function nor foreachBatch
    from cdc_spark.apply import apply_changes, apply_tables
    from cdc_spark.decoding import decode
    from cdc_spark.merge import build_spec

    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "001.jsonl", [Message(value=b"{}")])
    stream = message_stream(spark, str(folder))
    for plan in ("jvm", "python"):
        with pytest.raises(ConfigError, match=r"^decode takes a batch frame, .*foreachBatch"):
            decode(stream, "canal-json", plan=plan)
    changes = stream.selectExpr("offset AS id", "'insert' AS _cdc_op", "offset AS _cdc_sequence")
    with pytest.raises(ConfigError, match=r"^apply_changes takes a batch frame, .*foreachBatch"):
        apply_changes(changes, str(tmp_path / "lake"), ["id"], table="shop.t")
    spec = build_spec(changes, table="shop.t", keys=["id"])
    with pytest.raises(ConfigError, match=r"^apply_tables takes a batch frame, .*foreachBatch"):
        apply_tables([(changes, spec)], sink=None)  # type: ignore[arg-type]  # refused before the sink is used
    assert not (tmp_path / "lake").exists()


def test_the_stream_lists_files_without_reading_them_whole(spark: Any, tmp_path: Path) -> None:
    """Each file's lines are read a line at a time after the listing: content read by the file source is one
    binary value per file, and a 257 MB file of Debezium messages ran a 1 GB driver out of heap that way."""
    (tmp_path / "in").mkdir()
    _write(tmp_path / "in" / "001.jsonl", [Message(value=b"1")])
    stream = message_stream(spark, str(tmp_path / "in"))
    plan = _plan(stream)
    scans = [line for line in plan.splitlines() if "binaryFile" in line or "ReadSchema" in line]
    assert scans and all("content" not in line for line in scans), plan
    assert "ReadSchema: struct<path:string>" in plan, plan


def _plan(stream: Any) -> str:
    """The physical plan the stream's query runs (a streaming frame cannot explain itself before it starts)."""
    query = stream.writeStream.format("memory").queryName("listing_plan").trigger(availableNow=True).start()
    try:
        query.awaitTermination()
        return str(query._jsq.explainInternal(False))
    finally:
        query.stop()


def test_max_files_per_trigger_splits_an_available_now_run(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    for number, name in enumerate(("001", "002", "003")):
        _write(tmp_path / "in" / f"{name}.jsonl", [Message(value=name.encode())])
        os.utime(tmp_path / "in" / f"{name}.jsonl", (1_700_000_000 + number, 1_700_000_000 + number))  # read order
    stream = message_stream(spark, str(tmp_path / "in"), {"maxFilesPerTrigger": "1", "topic": "t"})
    batches = _drain(spark, stream, tmp_path / "cp")
    assert [[(r["topic"], bytes(r["value"])) for r in batch] for batch in batches] == [
        [("t", b"001")], [("t", b"002")], [("t", b"003")],
    ]  # fmt: skip


def test_one_file_by_name_even_with_glob_characters_in_it(spark: Any, tmp_path: Path) -> None:
    _write(tmp_path / "a[1]{x}.jsonl", [Message(value=b"only")])
    _write(tmp_path / "a1x.jsonl", [Message(value=b"not this one")])
    batches = _drain(spark, message_stream(spark, str(tmp_path / "a[1]{x}.jsonl")), tmp_path / "cp")
    assert [bytes(r["value"]) for batch in batches for r in batch] == [b"only"]


def test_a_location_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file or directory"):
        stream_path(f"file://{tmp_path / 'nope'}")
    with pytest.raises(ConfigError, match="no directory"):
        stream_path(str(tmp_path / "nope" / "*.jsonl"))
    assert stream_path(str(tmp_path / "*.jsonl")) == str(tmp_path / "*.jsonl")  # a glob may match nothing yet


def test_the_files_are_listed_on_the_local_file_system_whatever_the_default_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "in").mkdir()
    monkeypatch.chdir(tmp_path)
    assert listing_uri("in") == f"file:{tmp_path / 'in'}"
    assert listing_uri("file://in/*.jsonl") == f"file:{tmp_path / 'in' / '*.jsonl'}"


def test_a_bad_line_fails_the_read_naming_file_and_line(spark: Any, tmp_path: Path) -> None:
    register(spark)
    (tmp_path / "bad.jsonl").write_text('{"value": "ok"}\n{"value": 5}\n')
    with pytest.raises(Exception, match=r"bad.jsonl:2 field value"):
        spark.read.format("cdc-messages").option("path", str(tmp_path / "bad.jsonl")).load().collect()
