"""The end-to-end job tests on a cluster's shape: ``local-cluster[2,1,1024]`` runs two executor JVMs besides the
driver, so decode, the merges and the Delta and Iceberg writes all happen in executor processes, and anything
that only worked through driver-local state (a Python object, a temporary file, a session setting the executors
never see) fails there.

The tests run in a child pytest process because a process holds one SparkContext (the suite shares a local one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_testing.plugin import SHORT_RUN_ENV

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MASTER = "local-cluster[2,1,1024]"


def test_job_tests_pass_on_two_executor_jvms(tmp_path: Path) -> None:
    tests = Path(__file__).with_name("test_job.py")
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--benchmark-disable",
        "--basetemp", str(tmp_path / "run"), "-k", "truncate", str(tests),
    ]  # fmt: skip
    env = {**os.environ, "CDC_TEST_SPARK_MASTER": MASTER, SHORT_RUN_ENV: "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "2 passed" in done.stdout
