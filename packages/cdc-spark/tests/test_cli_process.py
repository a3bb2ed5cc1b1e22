"""``cdc apply`` as a scheduler runs it: its script started by absolute path from an empty environment (no
virtualenv on PATH, no PYSPARK_PYTHON, no SPARK_HOME). Spark's Python workers must still find the packages, so
the session points them at the interpreter of the script; the tables it writes equal the source state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cdc_core.messagelines import write_lines
from cdc_spark.demo import differences
from cdc_testing.changefeed import encode, generate

pytest.importorskip("cdc_debezium")
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_cdc_apply_by_absolute_path_from_a_bare_environment(tmp_path: Path) -> None:
    feed = generate(seed=4, transactions=8)
    messages = tmp_path / "changes.jsonl"
    with messages.open("w", encoding="utf-8") as handle:
        write_lines(encode(feed, "debezium", {"enable-tidb-extension": True}), handle)
    script = Path(sys.executable).parent / "cdc"
    target = tmp_path / "tables"
    command = [str(script), "apply", "--protocol", "debezium", "--source", f"file://{messages}",
               "--target", str(target), "--once", "--master", "local[1]"]  # fmt: skip
    bare = {"HOME": str(Path.home())}  # Maven's and Ivy's caches; nothing else
    done = subprocess.run(command, env=bare, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "batch 0:" in done.stdout
    assert differences(str(target), feed) == []


def test_a_driver_jvm_that_cannot_start_is_one_typed_line_and_status_2(tmp_path: Path) -> None:
    messages = tmp_path / "changes.jsonl"
    messages.write_text('{"value": null}\n', encoding="utf-8")
    strict = f"-Xshare:on -XX:SharedArchiveFile={tmp_path / 'missing.jsa'}"  # a JVM option the JVM cannot honour
    command = [sys.executable, "-m", "cdc_spark.cli", "apply", "--protocol", "debezium",
               "--source", f"file://{messages}", "--target", str(tmp_path / "tables"), "--once",
               "--master", "local[1]", "--conf", f"spark.driver.extraJavaOptions={strict}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("cdc apply: the Spark driver JVM (master local[1]) exited before the session started")
    assert "spark.driver.extraJavaOptions" in last
    assert "Traceback" not in done.stderr
