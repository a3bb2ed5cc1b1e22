"""Every way a ``cdc apply`` run over files can fail ends as one line on stderr with its exit code, nothing of the
failed batch is committed, and a rerun (once the cause is fixed) loses nothing; every run ends with a summary line.

The command runs in this process (``cdc_core.cli.main``, on the tests' Spark session); ``capfd`` also catches what
the JVM prints, so a Java trace or Spark's warnings would show here.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from cdc_core.cli.main import main as cdc
from cdc_core.cli.summary import changes_text
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.messagelines import format_line, write_lines
from cdc_core.registry import get_codec
from cdc_core.schema import Column, TableSchema
from cdc_core.types import parse_type_text
from cdc_spark.demo import differences, read_table
from cdc_testing.changefeed import Changefeed, encode, generate
from cdc_testing.faults import proxied, reopenable_port

pytest.importorskip("cdc_debezium")
pytestmark = pytest.mark.spark


def _apply(capfd: pytest.CaptureFixture[str], source: Path, target: Path, *args: str) -> tuple[int, str, str]:
    code = cdc(["apply", "--protocol", "debezium", "--source", f"file://{source}", "--target", str(target),
                "--once", "-o", "decode=python", *args])  # fmt: skip
    out, err = capfd.readouterr()
    return code, out, err


def _failure(err: str) -> str:
    """The run's one failure line, after checking that nothing else of a failure (a trace) was printed."""
    assert "Traceback" not in err and "\tat " not in err and "JVM stacktrace" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("cdc apply:") and "cdc apply: retry " not in line]
    assert len(lines) == 1, err[-3000:]
    return lines[0]


def _summary(out: str) -> str:
    return out.strip().splitlines()[-1]


def _feed(folder: Path, feed: Changefeed) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "changes.jsonl").open("w", encoding="utf-8") as handle:
        write_lines(encode(feed, "debezium", {"enable-tidb-extension": True}), handle)
    return folder


def _committed(checkpoint: Path) -> list[str]:
    commits = checkpoint / "stream" / "commits"
    return sorted(os.listdir(commits)) if commits.is_dir() else []


def test_a_source_that_does_not_exist_is_an_error_before_anything_is_written(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _apply(capfd, tmp_path / "nope", tmp_path / "tables")
    assert code == 2
    assert _failure(err).startswith(f"cdc apply: source file://{tmp_path / 'nope'}: no such file or directory")
    assert not (tmp_path / "tables").exists()  # no checkpoint, no batch 0
    feed = generate(seed=2, transactions=10)
    _feed(tmp_path / "nope", feed)  # the source is there now: the rerun takes all of it
    code, _, err = _apply(capfd, tmp_path / "nope", tmp_path / "tables")
    assert code == 0, err[-3000:]
    assert differences(str(tmp_path / "tables"), feed) == []


def test_an_unknown_option_is_one_line_before_any_batch(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = _feed(tmp_path / "in", generate(seed=3, transactions=10))
    code, _, err = _apply(capfd, source, tmp_path / "tables", "-o", "nosuch=1")
    assert code == 2
    assert "unknown option(s) nosuch" in _failure(err)
    assert _committed(tmp_path / "tables" / "_checkpoint") == []


def test_file_runs_drain_with_available_now_then_find_nothing_new(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=5, transactions=10)
    source = _feed(tmp_path / "in", feed)
    code, out, err = _apply(capfd, source, tmp_path / "tables")
    assert code == 0, err[-3000:]
    assert "AvailableNow" not in err and "WARN" not in err  # Spark's file source drains it, quietly
    changes: dict[str, Counter[str]] = {}
    for event in feed.events:
        if isinstance(event, RowChange):
            changes.setdefault(f"{event.database}.{event.table}", Counter())[event.op.value] += 1
    messages = len(list(encode(feed, "debezium", {"enable-tidb-extension": True})))
    assert _summary(out) == (
        f"cdc apply: 1 batch, {messages} messages read; changes: {changes_text(changes)}; 0 dead letters;"
        f" offsets reached: changes[0]@{messages}"
    )
    assert differences(str(tmp_path / "tables"), feed) == []
    code, out, err = _apply(capfd, source, tmp_path / "tables")
    assert code == 0
    assert re.fullmatch(r"cdc apply: nothing new since batch 0 of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", _summary(out))


def test_dead_letters_over_the_limit_fail_the_batch_whole_and_a_rerun_loses_nothing(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=6, transactions=10)
    source = _feed(tmp_path / "in", feed)
    bad = [Message(value=b'{"payload": 1}', topic="changes", partition=1, offset=n) for n in range(3)]
    (source / "bad.jsonl").write_text("".join(format_line(m) + "\n" for m in bad), encoding="utf-8")
    code, out, err = _apply(capfd, source, tmp_path / "tables", "--max-dead-letters", "2")
    assert code == 1
    line = _failure(err)
    assert "3 message(s) could not be decoded, more than --max-dead-letters 2" in line, line
    assert "nothing of the batch was committed" in line and "changes[1]@" in line
    assert _committed(tmp_path / "tables" / "_checkpoint") == []
    assert not (tmp_path / "tables" / "shop").exists()  # no table written either: dead letters go first
    code, out, err = _apply(capfd, source, tmp_path / "tables", "--max-dead-letters", "3")
    assert code == 0, err[-3000:]
    assert f"3 dead letters in delta.`{tmp_path / 'tables' / '_dead_letters'}`" in _summary(out)
    assert differences(str(tmp_path / "tables"), feed) == []
    letters = read_table(str(tmp_path / "tables"), "_dead_letters").to_pylist()
    assert sorted(r["offset"] for r in letters) == [0, 1, 2]


def test_a_dead_letter_table_that_cannot_be_written_fails_before_any_table(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=7, transactions=10)
    source = _feed(tmp_path / "in", feed)
    (source / "bad.jsonl").write_text(format_line(Message(value=b"[]", topic="x")) + "\n", encoding="utf-8")
    target = tmp_path / "tables"
    target.mkdir()
    (target / "_dead_letters").write_text("a file where the dead-letter table goes")
    code, _, err = _apply(capfd, source, target)
    assert code == 2
    assert "_dead_letters" in _failure(err)
    assert _committed(target / "_checkpoint") == [] and not (target / "shop").exists()
    (target / "_dead_letters").unlink()
    code, out, err = _apply(capfd, source, target)
    assert code == 0, err[-3000:]
    assert differences(str(target), feed) == [] and "1 dead letter in" in _summary(out)


def test_a_target_that_cannot_be_created_is_one_line_and_a_rerun_elsewhere_loses_nothing(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=8, transactions=10)
    source = _feed(tmp_path / "in", feed)
    (tmp_path / "file").write_text("not a directory")
    code, _, err = _apply(capfd, source, tmp_path / "file" / "tables")
    assert code == 2
    assert "check --target" in _failure(err)
    code, _, err = _apply(capfd, source, tmp_path / "tables")
    assert code == 0, err[-3000:]
    assert differences(str(tmp_path / "tables"), feed) == []


def _keyless(database: str, table: str) -> list[Message]:
    columns = (Column(name="id", data_type=parse_type_text("int")),
               Column(name="note", data_type=parse_type_text("varchar(20)")))  # fmt: skip
    schema = TableSchema(database=database, table=table, columns=columns, indexes=())
    encoder = get_codec("debezium").encoder({"enable-tidb-extension": True})
    changes = [
        RowChange(op=Op.INSERT, database=database, table=table, after={"id": n, "note": f"n{n}"}, commit_ts=100 + n,
                  schema=schema)
        for n in range(3)
    ]  # fmt: skip
    return [message for change in changes for message in encoder.encode(change)]


def test_a_table_without_a_key_says_to_pass_keys_and_a_rerun_with_them_loses_nothing(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "shop.jsonl").write_text("".join(format_line(m) + "\n" for m in _keyless("shop", "nopk")))
    code, _, err = _apply(capfd, folder, tmp_path / "tables")
    assert code == 2
    line = _failure(err)
    assert line == (
        "cdc apply: table shop.nopk has no primary or unique key in its schema: pass --keys 'shop\\.nopk=COLUMNS'"
    )
    assert _committed(tmp_path / "tables" / "_checkpoint") == []
    code, out, err = _apply(capfd, folder, tmp_path / "tables", "--keys", "shop\\.nopk=id")
    assert code == 0, err[-3000:]
    assert "shop.nopk (3 inserts)" in _summary(out)
    rows = read_table(str(tmp_path / "tables"), "shop.nopk").to_pylist()
    assert sorted((r["id"], r["note"]) for r in rows) == [(0, "n0"), (1, "n1"), (2, "n2")]


def test_debug_prints_the_whole_trace_before_the_line(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "shop.jsonl").write_text("".join(format_line(m) + "\n" for m in _keyless("shop", "nopk")))
    code, _, err = _apply(capfd, folder, tmp_path / "tables", "--debug")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("cdc apply: table shop.nopk has no primary or unique key")


def test_a_line_that_is_no_message_line_fails_naming_file_and_line(
    capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    feed = generate(seed=9, transactions=10)
    source = _feed(tmp_path / "in", feed)
    (source / "zz.jsonl").write_text('{"value": "ok"}\n{"value": 5}\n', encoding="utf-8")  # raised in an executor
    code, _, err = _apply(capfd, source, tmp_path / "tables")
    assert code == 1
    assert re.search(r"^cdc apply: .*zz\.jsonl:2 field value: ", _failure(err)), err[-2000:]
    assert _committed(tmp_path / "tables" / "_checkpoint") == []
    (source / "zz.jsonl").unlink()
    code, _, err = _apply(capfd, source, tmp_path / "tables")
    assert code == 0, err[-3000:]
    assert differences(str(tmp_path / "tables"), feed) == []


@pytest.mark.parametrize("plan", ["python", "jvm"])
def test_a_registry_that_is_down_fails_the_run_with_exit_3_and_a_rerun_loses_nothing(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, request: pytest.FixtureRequest, plan: str
) -> None:
    pytest.importorskip("cdc_avro")
    registry = request.getfixturevalue("schema_registry")
    feed = generate(seed=10, transactions=10)
    port = reopenable_port()
    url = registry.url.replace(f":{registry.port}/", f":{port}/")
    with proxied(registry.port, port) as proxy:
        folder = tmp_path / "in"
        folder.mkdir()
        with (folder / "changes.jsonl").open("w", encoding="utf-8") as handle:
            write_lines(encode(feed, "avro", {"schema-registry": url, "enable-tidb-extension": True}), handle)
        args = ["--protocol", "avro", "--source", f"file://{folder}", "--target", str(tmp_path / "tables"), "--once",
                "-o", f"schema-registry={url}", "-o", f"decode={plan}", "-o", "schema-registry-max-retries=1",
                "-o", "schema-registry-retry-backoff-ms=10", "--retries", "1", "--retry-backoff", "0.1"]  # fmt: skip
        with proxy.outage():
            code = cdc(["apply", *args])
            _, err = capfd.readouterr()
        assert code == 3
        line = _failure(err)
        assert "avro: schema registry" in line and "rerun once it is back" in line, line
        assert "cdc apply: retry 1 of 1 in 0.1 s, from the checkpoint, after: avro: schema registry" in err
        assert _committed(tmp_path / "tables" / "_checkpoint") == []
        code = cdc(["apply", *args])
        _, err = capfd.readouterr()
    assert code == 0, err[-3000:]
    assert differences(str(tmp_path / "tables"), feed) == []
