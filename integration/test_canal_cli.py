"""The `cdc` command line with Canal-JSON: decode the corpus, encode it back, convert to Debezium and back."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import orjson

from cdc_testing.corpus import corpus_files

CORPUS = "tiflow/pkg/sink/codec/canal/canal_json_txn_event_decoder_test.extracted/*.json"


def cdc(*args: str, stdin: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "cdc_core.cli", *args], input=stdin, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _corpus_lines() -> tuple[list[dict[str, Any]], str]:
    documents = [orjson.loads(p.read_bytes()) for p in corpus_files(CORPUS)]
    return documents, "".join(
        json.dumps({"value": json.dumps(d), "partition": 0, "offset": i}) + "\n" for i, d in enumerate(documents)
    )


def test_decode_then_encode_gives_back_the_corpus_documents() -> None:
    documents, lines = _corpus_lines()
    events = [json.loads(line) for line in cdc("decode", "-p", "canal-json", stdin=lines).splitlines()]
    assert [e["op"] for e in events] == ["insert", "update", "delete"]
    assert events[1]["before"]["OfficeLocation"] == "New York" and events[1]["after"]["id"] == 101
    encoded = cdc("encode", "-p", "canal-json", stdin="".join(json.dumps(e) + "\n" for e in events))
    again = [orjson.loads(json.loads(line)["value"]) for line in encoded.splitlines()]
    for original, written in zip(documents, again, strict=True):
        assert {k: v for k, v in written.items() if k != "ts"} == {k: v for k, v in original.items() if k != "ts"}


def test_convert_to_debezium_and_back_keeps_the_rows() -> None:
    _, lines = _corpus_lines()
    debezium = cdc("convert", "--from", "canal-json", "--to", "debezium", stdin=lines)
    back = cdc("convert", "--from", "debezium", "--to", "canal-json", stdin=debezium)
    before = [json.loads(line) for line in cdc("decode", "-p", "canal-json", "--no-schema", stdin=lines).splitlines()]
    after = [json.loads(line) for line in cdc("decode", "-p", "canal-json", "--no-schema", stdin=back).splitlines()]
    assert [(e["op"], e["before"], e["after"]) for e in after] == [(e["op"], e["before"], e["after"]) for e in before]
