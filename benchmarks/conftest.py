"""Lets the benchmark modules share ``workload.py`` (pytest runs with ``--import-mode=importlib``); and keeps the
JVM's defaults, which the tests' plugin changes for the short-lived JVMs of tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cdc_testing.plugin import keep_jvm_defaults

sys.path.insert(0, str(Path(__file__).parent))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    keep_jvm_defaults(config)
