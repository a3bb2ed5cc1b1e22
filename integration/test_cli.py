"""The ``cdc`` command line end to end, as a subprocess, on TiCDC's Debezium golden messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_core.message import Message
from cdc_core.messagelines import format_line, parse_line
from cdc_testing import kafka
from cdc_testing.corpus import corpus_dir

pytest.importorskip("cdc_debezium")

GOLDEN = corpus_dir() / "tiflow" / "pkg" / "sink" / "codec" / "debezium" / "codec_test.extracted"


def _cdc(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cdc_core.cli", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=False)


def _line(name: str, offset: int) -> str:
    compact = json.dumps(json.loads((GOLDEN / name).read_text()))
    return format_line(Message(value=compact.encode(), topic="ticdc", partition=0, offset=offset))


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_protocols_lists_installed_codecs_and_install_hints() -> None:
    result = _cdc("protocols")
    assert result.returncode == 0
    assert result.stdout.startswith("canal-json") or "debezium  (cdc-debezium)" in result.stdout
    assert "    decimal.handling.mode (str; one of precise, string, double" in result.stdout


def test_decode_golden_insert_and_watermark_to_canonical_events(tmp_path: Path) -> None:
    lines = [_line("TestEncodeInsert.02.value.L758.json", 5), _line("TestCheckPointEvent.02.value.L563.json", 6)]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")

    result = _cdc("decode", "--protocol", "debezium", str(source))

    assert result.returncode == 0, result.stderr
    insert, watermark = _events(result.stdout)
    # From the message: op "c" on test.table1, after {"tiny": 1}, source.commit_ts 1. The message carries no
    # schema, so the column is text as written (docs/protocols/debezium.md, "What it loses").
    assert (insert["kind"], insert["op"], insert["database"], insert["table"]) == ("row", "insert", "test", "table1")
    assert (insert["before"], insert["after"], insert["commit_ts"]) == (None, {"tiny": "1"}, 1)
    assert insert["source"] == {"topic": "ticdc", "partition": 0, "offset": 5, "timestamp": None}
    # op "m" with source.commit_ts 3 is TiCDC's watermark.
    assert (watermark["kind"], watermark["ts"]) == ("watermark", 3)


def test_document_flag_reads_a_pretty_printed_file() -> None:
    result = _cdc("decode", "-p", "debezium", "--document", str(GOLDEN / "TestEncodeInsert.02.value.L758.json"))
    assert result.returncode == 0, result.stderr
    assert _events(result.stdout)[0]["after"] == {"tiny": "1"}  # schemaless: text as written


def test_error_policies_fail_skip_and_dead_letter(tmp_path: Path) -> None:
    good = _line("TestEncodeInsert.02.value.L758.json", 1)
    bad = format_line(Message(value=b'{"payload": 1}', topic="ticdc", partition=0, offset=2))
    stdin = "\n".join([good, bad, "{broken", good]) + "\n"

    failed = _cdc("decode", "-p", "debezium", stdin=stdin)
    assert failed.returncode == 1
    assert len(_events(failed.stdout)) == 1
    assert "<stdin>:2" in failed.stderr and "ticdc[0]@2" in failed.stderr and "payload" in failed.stderr

    skipped = _cdc("decode", "-p", "debezium", "--on-error", "skip", stdin=stdin)
    assert skipped.returncode == 0
    assert len(_events(skipped.stdout)) == 2
    assert skipped.stderr.count("cdc: skipped") == 2

    dead = tmp_path / "dead.jsonl"
    lettered = _cdc("decode", "-p", "debezium", "--on-error", f"dead-letter={dead}", stdin=stdin)
    assert lettered.returncode == 0
    records = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [r["line"] for r in records] == [bad, "{broken"]
    assert records[0]["error_type"] == "DecodeError"
    assert records[1]["error_type"] == "MessageLineError"


def test_unknown_option_and_protocol_are_usage_errors() -> None:
    unknown = _cdc("decode", "-p", "debezium", "--option", "no-such=1", stdin="")
    assert unknown.returncode == 2
    assert "unknown option(s) no-such" in unknown.stderr and "table-schema" in unknown.stderr
    missing = _cdc("decode", "-p", "nope", stdin="")
    assert missing.returncode == 2
    assert "unknown protocol 'nope'" in missing.stderr


def test_encode_then_decode_gives_back_the_events(tmp_path: Path) -> None:
    # The message with its schema: encoders need the column types.
    decoded = _cdc("decode", "-p", "debezium", stdin=_line("TestEncodeInsert.04.value.L816.json", 1) + "\n")
    encoded = _cdc("encode", "-p", "debezium", stdin=decoded.stdout)
    assert encoded.returncode == 0, encoded.stderr
    messages = [parse_line(line, line=n) for n, line in enumerate(encoded.stdout.splitlines(), 1)]
    assert messages and all(m.value for m in messages)
    again = _cdc("decode", "-p", "debezium", stdin=encoded.stdout)
    first, second = _events(decoded.stdout)[0], _events(again.stdout)[0]
    assert (second["op"], second["after"], second["commit_ts"]) == (first["op"], first["after"], first["commit_ts"])


def test_convert_debezium_to_canal_json() -> None:
    pytest.importorskip("cdc_canal")
    stdin = _line("TestEncodeInsert.04.value.L816.json", 1) + "\n"
    converted = _cdc("convert", "--from", "debezium", "--to", "canal-json", stdin=stdin)
    assert converted.returncode == 0, converted.stderr
    (line,) = converted.stdout.splitlines()
    canal = json.loads(parse_line(line, line=1).value or b"")
    assert (canal["database"], canal["table"], canal["type"]) == ("test", "table1", "INSERT")
    assert canal["data"] == [{"tiny": "1"}]


@pytest.mark.kafka
def test_tail_decodes_a_live_topic_and_commits(kafka_bootstrap: str, kafka_topic: str) -> None:
    value = json.dumps(json.loads((GOLDEN / "TestEncodeInsert.02.value.L758.json").read_text())).encode()
    key = json.dumps(json.loads((GOLDEN / "TestEncodeInsert.01.key.L749.json").read_text())).encode()
    kafka.produce(kafka_bootstrap, kafka_topic, [Message(value=value, key=key)] * 3)
    args = ["tail", "-b", kafka_bootstrap, "-t", kafka_topic, "-p", "debezium", "--from-beginning"]
    result = _cdc(*args, "--group", "cli-tail", "--max-messages", "3", "--no-schema")
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    assert [e["after"] for e in events] == [{"tiny": "1"}] * 3  # schemaless: text as written
    assert [e["source"]["offset"] for e in events] == [0, 1, 2]  # type: ignore[index]
    # The group committed every printed message: a second tail with the same group reads nothing.
    again = _cdc(*args, "--group", "cli-tail", "--idle-timeout", "4")
    assert again.returncode == 0
    assert again.stdout == ""
