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
