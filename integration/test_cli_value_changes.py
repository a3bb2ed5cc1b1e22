"""``cdc encode`` and ``cdc convert`` as subprocesses: the issue's TiCDC Canal-JSON messages go through
``decode | encode`` unchanged, a value the target has to change is reported once per column, and ``--strict``
makes it an error with exit code 1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cdc_core.message import Message
from cdc_core.messagelines import format_line, parse_line
from cdc_testing.roundtrip import TICDC_CANAL


def _cdc(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cdc_core.cli", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=False)


def _messages(tmp_path: Path) -> Path:
    source = tmp_path / "canal.jsonl"
    lines = [
        format_line(Message(value=value, topic="orders", partition=0, offset=n)) for n, value in enumerate(TICDC_CANAL)
    ]
    source.write_text("\n".join(lines) + "\n")
    return source


def test_decode_then_encode_writes_ticdcs_messages_back(tmp_path: Path) -> None:
    decoded = _cdc("decode", "-p", "canal-json", str(_messages(tmp_path)))
    assert decoded.returncode == 0, decoded.stderr
    encoded = _cdc("encode", "-p", "canal-json", "--option", "enable-tidb-extension=true", stdin=decoded.stdout)
    assert encoded.returncode == 0, encoded.stderr
    # nothing changed, so nothing to report but the run's summary line
    assert encoded.stderr.splitlines() == [
        "cdc encode: 3 events read; changes: shop.orders (1 insert, 1 update, 1 delete); 0 dead letters"
    ]
    again = [
        json.loads(parse_line(text.encode(), line=n).value or b"") for n, text in enumerate(encoded.stdout.splitlines())
    ]
    original = [json.loads(value) for value in TICDC_CANAL]
    assert [{**doc, "ts": 0} for doc in again] == [{**doc, "ts": 0} for doc in original]


def test_convert_reports_a_changed_column_once(tmp_path: Path) -> None:
    result = _cdc("convert", "--from", "canal-json", "--to", "debezium", str(_messages(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 3
    assert result.stderr.splitlines() == [
        "cdc convert: warning: debezium: table shop.orders field c_decimal: value changed to fit: DECIMAL written as a "
        "double (Debezium's decimal.handling.mode=double) (first: 12345678901234.5678 written as 12345678901234.568)",
        "cdc convert: note: 2 values changed to fit in 1 column (--strict refuses them)",
        "cdc convert: 3 messages read; changes: shop.orders (1 insert, 1 update, 1 delete); 0 dead letters",
    ]


def test_strict_refuses_a_changed_value(tmp_path: Path) -> None:
    result = _cdc("convert", "--strict", "--from", "canal-json", "--to", "debezium", str(_messages(tmp_path)))
    assert result.returncode == 1
    assert result.stdout == ""  # the first message already holds the value
    assert "canal.jsonl:1: debezium: table shop.orders field c_decimal: value changed to fit" in result.stderr
    skipped = _cdc(
        "convert",
        "--strict",
        "--on-error",
        "skip",
        "--from",
        "canal-json",
        "--to",
        "debezium",
        str(_messages(tmp_path)),
    )
    assert skipped.returncode == 0
    assert len(skipped.stdout.splitlines()) == 1  # the delete of -0.0001, which a double holds exactly
