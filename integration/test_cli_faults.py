"""Every failure of ``cdc decode`` and ``cdc tail`` on the real parts: one line on stderr with its exit code, nothing
committed past a message that was not printed or durably dead-lettered, a rerun that loses nothing, and a summary
line at the end of every run.

The broker is stopped for real (a broker of this module's own). The registry outage is made by a loopback proxy in
front of the real registry (:mod:`cdc_testing.faults`): Apicurio keeps its schemas in memory, so a registry that
was stopped would come back without the ones the messages name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_core import canonical
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.messagelines import format_line, parse_line
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import parse_type_text
from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.faults import proxied, reopenable_port

pytest.importorskip("cdc_debezium")

SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=(
        Column(name="id", data_type=parse_type_text("int"), nullable=False),
        Column(name="note", data_type=parse_type_text("varchar(20)")),
    ),
    indexes=(Index(name="PRIMARY", columns=("id",), unique=True, primary=True),),
)
BAD = b'{"payload": 1}'  # a Debezium message with no envelope: bad data


def _cdc(*args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cdc_core.cli", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)


def _changes(first: int, count: int) -> list[RowChange]:
    return [
        RowChange(op=Op.INSERT, database="shop", table="orders", after={"id": n, "note": f"n{n}"},
                  commit_ts=1000 + n, schema=SCHEMA)
        for n in range(first, first + count)
    ]  # fmt: skip


def _debezium(first: int, count: int) -> list[Message]:
    encoder = get_codec("debezium").encoder({"enable-tidb-extension": True})
    return [message for change in _changes(first, count) for message in encoder.encode(change)]


def _ids(stdout: str) -> list[int]:
    return [json.loads(line)["after"]["id"] for line in stdout.splitlines()]


def _only_line(stderr: str, command: str) -> str:
    """The failure line; the run's summary line may come before it, nothing else may."""
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr and all(line.startswith(f"cdc {command}:") for line in lines), stderr
    return lines[-1]


# ------------------------------------------------------------------------------------------ decode


def test_decode_dead_letters_every_bad_line_then_says_so_and_a_limit_fails_the_run(tmp_path: Path) -> None:
    lines = [format_line(Message(value=BAD, topic="t", partition=0, offset=n)) for n in range(4)]
    dead = tmp_path / "dead.jsonl"
    done = _cdc("decode", "-p", "debezium", "--on-error", f"dead-letter={dead}", stdin="\n".join(lines))
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.strip() == f"cdc decode: 4 messages read; no row changes; 4 dead letters in {dead}"
    assert [json.loads(line)["line"] for line in dead.read_text().splitlines()] == lines
    limited = _cdc("decode", "-p", "debezium", "--on-error", "skip", "--max-dead-letters", "0", stdin=lines[0])
    assert limited.returncode == 1
    assert "one failed message more than --max-dead-letters 0 allows" in _only_line(limited.stderr, "decode")


def test_decode_with_a_dead_letter_file_that_cannot_be_written_reads_nothing(tmp_path: Path) -> None:
    stdin = "\n".join(format_line(m) for m in _debezium(1, 2))
    dead = tmp_path / "no-such-dir" / "dead.jsonl"
    done = _cdc("decode", "-p", "debezium", "-o", "time-zone=UTC", "--on-error", f"dead-letter={dead}", stdin=stdin)
    assert done.returncode == 2 and done.stdout == ""
    assert _only_line(done.stderr, "decode").startswith(f"cdc decode: cannot write dead letters to {dead}")


def test_an_unknown_flag_is_one_line_that_points_to_help() -> None:
    done = _cdc("decode", "-p", "debezium", "--no-such-flag")
    assert done.returncode == 2
    assert done.stderr == "cdc decode: unrecognized arguments: --no-such-flag (cdc decode --help)\n"


def test_debug_prints_the_trace_then_the_line() -> None:
    bad = format_line(Message(value=BAD, topic="t", partition=0, offset=9))
    for args, env in ((["--debug"], {}), ([], {"CDC_DEBUG": "1"})):
        done = subprocess.run(
            [sys.executable, "-m", "cdc_core.cli", "decode", "-p", "debezium", *args], input=bad, text=True,
            capture_output=True, timeout=60, check=False, env={**os.environ, **env},
        )  # fmt: skip
        assert done.returncode == 1
        assert "Traceback (most recent call last)" in done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("cdc decode: <stdin>:1: debezium: message t[0]@9")


# ------------------------------------------------------------------------------------------ the registry


@pytest.fixture
def registry_behind_proxy(schema_registry: ApicurioRegistry) -> Iterator[tuple[str, object]]:
    port = reopenable_port()
    with proxied(schema_registry.port, port) as proxy:
        yield schema_registry.url.replace(f":{schema_registry.port}/", f":{port}/"), proxy


def _avro(url: str, first: int, count: int) -> list[Message]:
    encoder = get_codec("avro").encoder({"schema-registry": url, "enable-tidb-extension": True})
    return [message for change in _changes(first, count) for message in encoder.encode(change)]


REGISTRY_BOUNDS = ("-o", "schema-registry-max-retries=1", "-o", "schema-registry-retry-backoff-ms=10",
                   "-o", "schema-registry-timeout=2")  # fmt: skip


def test_decode_with_the_registry_down_fails_with_exit_3_and_skips_nothing(
    registry_behind_proxy: tuple[str, object],
) -> None:
    pytest.importorskip("cdc_avro")
    url, proxy = registry_behind_proxy
    stdin = "\n".join(format_line(m) for m in _avro(url, 1, 3))
    args = ("decode", "-p", "avro", "-o", f"schema-registry={url}", *REGISTRY_BOUNDS, "--on-error", "skip")
    with proxy.outage():  # type: ignore[attr-defined]
        down = _cdc(*args, stdin=stdin)
    assert down.returncode == 3 and down.stdout == ""
    line = _only_line(down.stderr, "decode")
    assert "schema registry" in line and "failed after 2 attempt(s)" in line and "rerun once it is back" in line
    assert down.stderr.splitlines()[-2] == "cdc decode: 1 message read; no row changes; 0 messages skipped"
    back = _cdc(*args, stdin=stdin)
    assert back.returncode == 0, back.stderr
    assert _ids(back.stdout) == [1, 2, 3]


@pytest.mark.kafka
def test_tail_with_the_registry_down_commits_nothing_past_it(
    registry_behind_proxy: tuple[str, object], kafka_bootstrap: str, kafka_topic: str
) -> None:
    pytest.importorskip("cdc_avro")
    url, proxy = registry_behind_proxy
    kafka.produce(kafka_bootstrap, kafka_topic, _avro(url, 1, 3))
    args = ("tail", "-b", kafka_bootstrap, "-t", kafka_topic, "-p", "avro", "-o", f"schema-registry={url}",
            *REGISTRY_BOUNDS, "--group", "registry-down", "--from-beginning", "--idle-timeout", "5",
            "--on-error", "skip")  # fmt: skip
    with proxy.outage():  # type: ignore[attr-defined]
        down = _cdc(*args)
    assert down.returncode == 3 and down.stdout == ""
    assert "schema registry" in _only_line(down.stderr, "tail")
    back = _cdc(*args)
    assert back.returncode == 0, back.stderr
    assert _ids(back.stdout) == [1, 2, 3]  # nothing was committed past the message the registry failed


# ------------------------------------------------------------------------------------------ tail and the broker


@pytest.mark.kafka
def test_tail_dead_letters_durably_then_commits_and_a_rerun_finds_nothing_new(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    good = _debezium(1, 2)
    bad = [Message(value=BAD) for _ in range(3)]
    kafka.produce(kafka_bootstrap, kafka_topic, [good[0], *bad, good[1]])
    dead = tmp_path / "dead.jsonl"
    args = ("tail", "-b", kafka_bootstrap, "-t", kafka_topic, "-p", "debezium", "--group", "dead-letters",
            "--from-beginning", "--idle-timeout", "4", "--on-error", f"dead-letter={dead}")  # fmt: skip
    done = _cdc(*args)
    assert done.returncode == 0, done.stderr
    assert _ids(done.stdout) == [1, 2]
    letters = [json.loads(line) for line in dead.read_text().splitlines()]
    assert [parse_line(r["line"], line=1).offset for r in letters] == [1, 2, 3]
    assert all(r["error_type"] == "DecodeError" and f"{kafka_topic}[0]@" in r["error"] for r in letters)
    assert done.stderr.strip() == (
        f"cdc tail: 5 messages read; changes: shop.orders (2 inserts); 3 dead letters in {dead};"
        f" offsets reached: {kafka_topic}[0]@5"
    )
    again = _cdc(*args)
    assert again.returncode == 0 and again.stdout == ""
    assert again.stderr.strip() == f"cdc tail: nothing new since {kafka_topic}[0]@5 (group dead-letters)"
    assert len(dead.read_text().splitlines()) == 3


@pytest.mark.kafka
def test_tail_stops_at_the_limit_without_committing_and_a_rerun_loses_nothing(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    first, second = _debezium(1, 2)
    kafka.produce(kafka_bootstrap, kafka_topic, [first, Message(value=BAD), second])
    args = ("tail", "-b", kafka_bootstrap, "-t", kafka_topic, "-p", "debezium", "--group", "limit",
            "--from-beginning", "--idle-timeout", "4")  # fmt: skip
    unwritable = tmp_path / "missing" / "dead.jsonl"
    refused = _cdc(*args, "--on-error", f"dead-letter={unwritable}")
    assert refused.returncode == 2 and refused.stdout == ""  # before reading anything
    assert "cannot write dead letters" in _only_line(refused.stderr, "tail")
    limited = _cdc(*args, "--on-error", "skip", "--max-dead-letters", "0")
    assert limited.returncode == 1
    assert _ids(limited.stdout) == [1]
    assert f"{kafka_topic}[0]@1" in _only_line(limited.stderr, "tail")
    dead = tmp_path / "dead.jsonl"
    rerun = _cdc(*args, "--on-error", f"dead-letter={dead}")
    assert rerun.returncode == 0, rerun.stderr
    assert _ids(rerun.stdout) == [2]  # from the message the limit stopped at: it, then the rest
    assert [parse_line(json.loads(r)["line"], line=1).offset for r in dead.read_text().splitlines()] == [1]


@pytest.mark.kafka
def test_tail_of_a_topic_that_does_not_exist_is_a_usage_error(kafka_bootstrap: str) -> None:
    done = _cdc("tail", "-b", kafka_bootstrap, "-t", "no-such-topic", "-p", "debezium", "--idle-timeout", "2")
    assert done.returncode == 2
    assert _only_line(done.stderr, "tail") == (
        f"cdc tail: kafka: no topic no-such-topic on {kafka_bootstrap}: check --topic or the sink URI"
    )


def test_tail_without_a_broker_fails_within_the_broker_timeout() -> None:
    pytest.importorskip("confluent_kafka")
    closed = f"127.0.0.1:{kafka.free_port()}"
    started = time.monotonic()
    done = _cdc("tail", "-b", closed, "-t", "t", "-p", "debezium", "--broker-timeout", "2", timeout=60)
    assert done.returncode == 3
    assert time.monotonic() - started < 30
    assert done.stderr.strip().startswith(
        f"cdc tail: kafka: no broker of {closed} answered within 2 s (--broker-timeout) while reading the topics"
    )
    assert len(done.stderr.strip().splitlines()) == 1  # no librdkafka log lines


@pytest.fixture(scope="module")
def own_broker() -> Iterator[kafka.KafkaBroker]:
    """A broker of this module's own, to stop for real (its log is kept across a stop and a start)."""
    if os.environ.get(kafka.BOOTSTRAP_ENV):
        pytest.skip("needs a broker of its own to stop")
    broker = kafka.KafkaBroker()
    try:
        broker.start()
    except kafka.BrokerUnavailableError as exc:
        pytest.skip(str(exc))
    try:
        yield broker
    finally:
        broker.close()


@pytest.mark.kafka
@pytest.mark.slow
def test_tail_fails_when_the_broker_stops_and_a_rerun_loses_nothing(own_broker: kafka.KafkaBroker) -> None:
    topic = kafka.unique_topic()
    kafka.create_topic(own_broker.bootstrap, topic)
    kafka.produce(own_broker.bootstrap, topic, _debezium(1, 3))
    # a fresh broker loads its group coordinator on the first group's use, which can outlast the 3 s below under
    # load (seen in CI): a reader of another group waits for it first, so that those 3 s bound only the stop
    warm = _cdc("tail", "-b", own_broker.bootstrap, "-t", topic, "-p", "debezium", "--group", "warm",
                "--from-beginning", "--idle-timeout", "5", "--broker-timeout", "120", timeout=300)  # fmt: skip
    assert _ids(warm.stdout) == [1, 2, 3], warm.stderr
    # the restarted broker keeps this member in the group until its session times out, and the rerun's join waits
    # for that: the broker's shortest session (6 s) instead of the client's default 45 s, with a beat a second so
    # that a loaded machine does not lose the member (a beat missed in a 3 s interval is half the session)
    command = [sys.executable, "-m", "cdc_core.cli", "tail", "-b", own_broker.bootstrap, "-t", topic, "-p",
               "debezium", "--group", "stopped", "--from-beginning", "--broker-timeout", "3",
               "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=1000"]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as tail:
        assert tail.stdout is not None and tail.stderr is not None
        printed = [tail.stdout.readline() for _ in range(3)]  # every message printed (and committed)
        own_broker.stop()
        try:
            code = tail.wait(timeout=60)
        finally:
            own_broker.start()
        stderr = tail.stderr.read()
    assert _ids("".join(printed)) == [1, 2, 3], stderr
    assert code == 3, stderr
    assert "no broker of" in _only_line(stderr, "tail")
    kafka.produce(own_broker.bootstrap, topic, _debezium(4, 2))
    # a restarted broker loads its groups' offsets before it serves them: the rerun waits for that (bounded)
    rerun = _cdc("tail", "-b", own_broker.bootstrap, "-t", topic, "-p", "debezium", "--group", "stopped",
                 "--idle-timeout", "10", "--broker-timeout", "120", timeout=300)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert _ids(rerun.stdout) == [4, 5]  # the rest, nothing twice


def test_encode_and_convert_help_say_what_they_do() -> None:
    encode = _cdc("encode", "--help").stdout
    assert "an event that cannot be read or encoded" in " ".join(encode.split())
    convert = " ".join(_cdc("convert", "--help").stdout.split())
    assert "--from PROTOCOL the protocol of the input" in convert and "--to PROTOCOL the protocol to write" in convert


def test_canonical_summary_counts_every_operation() -> None:
    lines = [canonical.dumps(change) for change in _changes(1, 2)]
    done = _cdc("encode", "-p", "debezium", stdin="\n".join(lines))
    assert done.returncode == 0
    assert done.stderr.strip() == "cdc encode: 2 events read; changes: shop.orders (2 inserts); 0 dead letters"


def test_decode_with_the_claim_check_store_failing_fails_with_exit_3_and_skips_nothing(tmp_path: Path) -> None:
    pytest.importorskip("cdc_canal")
    store = tmp_path / "claims"
    big = RowChange(op=Op.INSERT, database="shop", table="orders", after={"id": 7, "note": "y" * 2000},
                    commit_ts=1 << 40, schema=SCHEMA)  # fmt: skip
    encoder = get_codec("canal-json").encoder({
        "enable-tidb-extension": True, "max-message-bytes": 1000, "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": store.as_uri(),
    })  # fmt: skip
    stdin = "\n".join(format_line(m) for m in encoder.encode(big))
    (tmp_path / "broken").write_text("a file where the store's directory should be")
    args = ("decode", "-p", "canal-json", "--on-error", "skip", "-o")
    down = _cdc(*args, f"claim-check-storage-uri={(tmp_path / 'broken' / 'claims').as_uri()}", stdin=stdin)
    assert down.returncode == 3 and down.stdout == ""
    assert "cannot be read from file storage" in _only_line(down.stderr, "decode")
    back = _cdc(*args, f"claim-check-storage-uri={store.as_uri()}", stdin=stdin)
    assert back.returncode == 0, back.stderr
    assert [json.loads(line)["after"] for line in back.stdout.splitlines()] == [{"id": 7, "note": "y" * 2000}]
