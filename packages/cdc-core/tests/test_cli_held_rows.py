"""Simple rows whose schema never arrives (no BOOTSTRAP or DDL before the input ends) are dead letters of ``decode``,
``convert`` and ``tail``, never dropped; ``tail`` commits no offset past a row it holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cdc_core.cli import main
from cdc_core.cli import tail as tail_module
from cdc_testing.corpus import spec_json_blocks

pytest.importorskip("cdc_simple")


def spec_messages() -> dict[str, str]:
    """TiCDC's Simple examples: rows of simple.user at schema version 447984074911121426, and that version's
    BOOTSTRAP (the spec's names the table new_user, under the same tableID and version: named user here)."""
    blocks = {b["type"]: b for b in spec_json_blocks("ticdc-simple-protocol.en.txt") if "type" in b}
    blocks["BOOTSTRAP"]["tableSchema"]["table"] = "user"
    return {kind: json.dumps(block, separators=(",", ":")) for kind, block in blocks.items()}


SPEC = spec_messages()
NO_SCHEMA = "no schema for simple.user version 447984074911121426 arrived"


def _input(tmp_path: Path, *kinds: str) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(SPEC[kind] + "\n" for kind in kinds), encoding="utf-8")
    return str(path)


def _last_line(err: str) -> str:
    return err.strip().splitlines()[-1]


def test_rows_without_their_schema_fail_the_decode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path, "INSERT", "WATERMARK")
    assert main(["decode", "-p", "simple", source]) == 1
    out, err = capsys.readouterr()
    assert [json.loads(line)["kind"] for line in out.splitlines()] == ["watermark"]
    assert _last_line(err).startswith(f"cdc decode: {source}:1: simple: {NO_SCHEMA} by the end of the input (")


def test_rows_without_their_schema_are_dead_letters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path, "INSERT", "UPDATE", "WATERMARK")
    dead = tmp_path / "dead.jsonl"
    assert main(["decode", "-p", "simple", "--on-error", f"dead-letter={dead}", source]) == 0
    assert _last_line(capsys.readouterr().err) == (
        f"cdc decode: 3 messages read; no row changes; 1 other event; 2 dead letters in {dead}"
    )
    records = [json.loads(line) for line in dead.read_text(encoding="utf-8").splitlines()]
    reasons = [f"{source}:{n}: simple: {NO_SCHEMA} by the end of the input" for n in (1, 2)]
    assert [r["error"] for r in records] == reasons
    assert [r["error_type"] for r in records] == ["SchemaError", "SchemaError"]
    assert [r["line"] for r in records] == [SPEC["INSERT"], SPEC["UPDATE"]]  # replayable as they were read


def test_held_rows_count_against_max_dead_letters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path, "INSERT", "WATERMARK")
    assert main(["decode", "-p", "simple", "--on-error", "skip", "--max-dead-letters", "0", source]) == 1
    assert "more than --max-dead-letters 0 allows" in _last_line(capsys.readouterr().err)


def test_rows_released_by_a_later_bootstrap_are_no_dead_letters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _input(tmp_path, "INSERT", "UPDATE", "DELETE", "BOOTSTRAP")
    assert main(["decode", "-p", "simple", "--max-dead-letters", "0", source]) == 0
    assert _last_line(capsys.readouterr().err) == (
        "cdc decode: 4 messages read; changes: simple.user (1 insert, 1 update, 1 delete); 1 other event; "
        "0 dead letters"
    )


def test_convert_does_not_drop_held_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _input(tmp_path, "INSERT")
    assert main(["convert", "--from", "simple", "--to", "canal-json", "--on-error", "skip", source]) == 0
    err = capsys.readouterr().err
    assert f"cdc: skipped: {source}:1: simple: {NO_SCHEMA}" in err
    assert _last_line(err) == "cdc convert: 1 message read; no row changes; 1 message skipped"


# ---------------------------------------------------------------------------------------------------------- tail


class _Record:
    def __init__(self, value: str, offset: int) -> None:
        self._value, self._offset = value.encode(), offset

    def value(self) -> bytes:
        return self._value

    def key(self) -> None:
        return None

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, 1708923662983)

    def headers(self) -> None:
        return None


class _Consumer:
    """Gives the records, then nothing; records each commit (the next offset) with the dead letters written by then."""

    records: ClassVar[list[_Record]] = []
    dead: ClassVar[Path | None] = None
    commits: ClassVar[list[tuple[int, int]]] = []

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        self.assigned_at = 0.0
        self._left = list(self.records)

    def poll(self, _seconds: float) -> _Record | None:
        return self._left.pop(0) if self._left else None

    def commit(self, record: _Record) -> None:
        written = len(self.dead.read_text().splitlines()) if self.dead is not None and self.dead.exists() else 0
        type(self).commits.append((record.offset() + 1, written))

    def since(self, _group: str | None) -> str:
        return "?"

    def close(self) -> None:
        pass


def _tail(monkeypatch: pytest.MonkeyPatch, kinds: list[str], *args: str, dead: Path | None = None) -> int:
    _Consumer.records = [_Record(SPEC[kind], offset) for offset, kind in enumerate(kinds)]
    _Consumer.dead, _Consumer.commits = dead, []
    monkeypatch.setattr(tail_module, "BoundedConsumer", _Consumer)
    policy = ["--on-error", f"dead-letter={dead}"] if dead is not None else []
    command = ["tail", "-p", "simple", "-b", "h:9092", "-t", "t", "-g", "g", "--max-messages", str(len(kinds))]
    return main([*command, *policy, *args])


def test_tail_commits_a_held_row_only_once_dead_lettered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = tmp_path / "dead.jsonl"
    assert _tail(monkeypatch, ["INSERT", "WATERMARK"], dead=dead) == 0
    assert _Consumer.commits == [(2, 1)]  # nothing past offset 0 before its dead letter was on disk
    record = json.loads(dead.read_text(encoding="utf-8"))
    assert record["error"] == f"t[0]@0: simple: {NO_SCHEMA} before the run ended"
    assert _last_line(capsys.readouterr().err) == (
        f"cdc tail: 2 messages read; no row changes; 1 other event; 1 dead letter in {dead}; offsets reached: t[0]@2"
    )


def test_tail_commits_nothing_past_a_held_row_it_fails_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _tail(monkeypatch, ["INSERT", "WATERMARK"]) == 1
    assert _Consumer.commits == []
    assert _last_line(capsys.readouterr().err).startswith(f"cdc tail: t[0]@0: simple: {NO_SCHEMA} before the run")


def test_tail_commits_held_rows_once_their_bootstrap_releases_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = tmp_path / "dead.jsonl"
    assert _tail(monkeypatch, ["INSERT", "WATERMARK", "BOOTSTRAP", "UPDATE"], dead=dead) == 0
    assert _Consumer.commits == [(3, 0), (4, 0)]
    assert not dead.read_text()
    assert "changes: simple.user (1 insert, 1 update)" in capsys.readouterr().err
