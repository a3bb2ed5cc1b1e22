"""docs/quickstart.md, run as a reader runs it: every command of its ``sh`` blocks in a shell, in order, from a
working directory that holds the repository's docs. The broker's and the registry's ports are replaced by free
ones; the first command (pip install) is checked, not run: it would replace the workspace's editable installs
of the same packages, which ``nox`` made from the same directories."""

from __future__ import annotations

import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc_core import canonical
from cdc_core.events import RowChange
from cdc_core.messagelines import read_lines
from cdc_core.registry import get_codec
from cdc_spark.demo import differences
from cdc_testing import kafka

pytest.importorskip("cdc_canal")
pytest.importorskip("cdc_simple")
pytest.importorskip("cdc_avro")
pytest.importorskip("cdc_debezium")
pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "docs" / "quickstart.md"
STARTED = {
    "cdc-test-kafka": r"bootstrap=127\.0\.0\.1:\d+",
    "cdc-test-registry": r"schema-registry=http://127\.0\.0\.1:\d+/apis/ccompat/v7",
}


def command_blocks() -> list[list[str]]:
    """The commands of each ``sh`` block of the quickstart, in order."""
    text = QUICKSTART.read_text(encoding="utf-8")
    return [[c for c in block.splitlines() if c.strip()] for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def load_samples() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("quickstart_samples", ROOT / "docs" / "samples" / "make.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Reader:
    """Runs the quickstart's commands in ``home``, as a shell would, with the ports replaced."""

    def __init__(self, home: Path, ports: dict[str, str]) -> None:
        self.home = home
        self.ports = ports
        self.background: dict[str, subprocess.Popen[str]] = {}

    def text(self, command: str) -> str:
        for old, new in self.ports.items():
            command = command.replace(old, new)
        return command

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        command = self.text(command)
        if command.endswith("&"):
            return self.start(command.removesuffix("&").strip())
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command}"], cwd=self.home, capture_output=True, text=True,
            timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def start(self, command: str) -> subprocess.CompletedProcess[str]:
        """A server left running (``&``): its first line says where it serves."""
        words = shlex.split(command)
        process = subprocess.Popen(words, cwd=self.home, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        assert re.fullmatch(STARTED[words[0]], first), first
        self.background[words[0]] = process
        return subprocess.CompletedProcess(words, 0, first, "")

    def stop_all(self) -> dict[str, int]:
        """SIGTERM every server, as ``kill %1`` does; their exit codes."""
        codes: dict[str, int] = {}
        for name, process in self.background.items():
            process.send_signal(signal.SIGTERM)
            codes[name] = process.wait(timeout=60)
        return codes


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Reader]:
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    ports = {"9092": str(kafka.free_port()), "8081": str(kafka.free_port())}
    reading = Reader(tmp_path, ports)
    try:
        yield reading
    finally:
        for process in reading.background.values():
            if process.poll() is None:
                process.kill()


def test_the_quickstart_gets_every_protocol_from_a_topic_to_delta_tables(reader: Reader) -> None:
    blocks = command_blocks()
    assert [len(b) for b in blocks] == [5, 2, 2, 3]
    install, *commands = blocks[0]
    named = re.findall(r"\./packages/([\w-]+)", install)
    assert install.startswith("python3 -m pip install ") and all((ROOT / "packages" / n).is_dir() for n in named)
    assert {"cdc-core", "cdc-spark", "cdc-testing", "cdc-debezium"} <= set(named)
    for tool in ("cdc", "cdc-test-kafka", "cdc-test-registry"):  # what the install command puts on PATH
        assert shutil.which(tool) is not None, tool

    for command in commands:
        result = reader.run(command)
    feed = load_samples().changefeed()
    assert f"[{len(feed.state['orders'])} rows x 6 columns]" in result.stdout  # the table as pandas prints it
    assert differences(str(reader.home / "lake"), feed) == []

    for block, lake in zip(blocks[1:], ("lake-canal", "lake-simple", "lake-avro"), strict=True):
        for command in block:
            reader.run(command)
        assert differences(str(reader.home / lake), feed) == [], lake
    assert reader.stop_all() == {"cdc-test-kafka": 0, "cdc-test-registry": 0}


def changes(events: list[Any]) -> list[tuple[Any, ...]]:
    """Each row change by operation, table, key and commit ts (each protocol's values are compared where the
    quickstart applies them: with the tables)."""
    keys = {"customers": ("id",), "orders": ("order_id",), "items": ("order_id", "sku")}
    return [
        (e.op, e.database, e.table, tuple(e.image[k] for k in keys[e.table]), e.commit_ts)
        for e in events
        if isinstance(e, RowChange)
    ]


def test_the_samples_hold_the_changefeed_make_py_describes() -> None:
    """Each protocol's sample decodes to the changefeed's row changes, in order, with the coordinates a topic of
    three partitions gives them (not compared byte for byte: encoders stamp a message with the time)."""
    samples = load_samples()
    feed = samples.changefeed()
    for protocol in samples.OPTIONS:
        decoder = get_codec(protocol).decoder({})
        decoded: list[Any] = []
        offsets: dict[int, int] = {}
        with (ROOT / "docs" / "samples" / f"{protocol}.jsonl").open("rb") as stream:
            for _, message in read_lines(stream):
                assert message.topic == samples.TOPIC and message.partition is not None
                assert message.offset == offsets.get(message.partition, 0)
                offsets[message.partition] = message.offset + 1
                decoded += decoder.decode(message)
        assert changes(decoded) == changes(feed.events), protocol
        assert max(offsets) < samples.PARTITIONS, protocol
    events = (ROOT / "docs" / "samples" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert changes([canonical.loads(line) for line in events]) == changes(feed.events)
