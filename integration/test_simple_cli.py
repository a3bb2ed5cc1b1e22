"""The `cdc` command line with Simple: the spec's examples decode; JSON converts to Avro and back unchanged."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

from cdc_testing.corpus import shared_dir

ORDER = ["ALTER", "INSERT", "UPDATE", "DELETE", "WATERMARK", "BOOTSTRAP"]


def cdc(*args: str, stdin: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "cdc_core.cli", *args], input=stdin, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _spec_lines() -> str:
    text = (shared_dir() / "specs" / "ticdc-simple-protocol.en.txt").read_text(encoding="utf-8")
    blocks = re.findall(r"^\{\n.*?^\}$", text, flags=re.S | re.M)
    messages = {d["type"]: d for d in (json.loads(b) for b in blocks) if "type" in d}
    return "".join(json.dumps({"value": json.dumps(messages[k]), "offset": i}) + "\n" for i, k in enumerate(ORDER))


def _events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines()]


def test_spec_examples_decode_on_the_command_line() -> None:
    events = _events(cdc("decode", "-p", "simple", stdin=_spec_lines()))
    assert [e["kind"] for e in events] == ["ddl", "row", "row", "row", "watermark", "bootstrap"]
    assert events[1]["after"] == {"id": 1, "name": "John Doe", "age": 25, "score": 90.5}
    assert events[2]["before"]["score"] == 90.5 and events[2]["after"]["score"] == 95.0


def test_convert_json_to_avro_and_back() -> None:
    lines = _spec_lines()
    avro = cdc(
        "convert",
        "--from",
        "simple",
        "--to",
        "simple",
        "--to-option",
        "encoding-format=avro",
        "--to-option",
        "send-bootstrap-in-msg-count=0",
        stdin=lines,
    )
    back = cdc("decode", "-p", "simple", "--option", "encoding-format=avro", "--no-schema", stdin=avro)
    direct = cdc("decode", "-p", "simple", "--no-schema", stdin=lines)

    def strip(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k not in ("source", "meta")} for e in events]

    assert strip(_events(back)) == strip(_events(direct))
