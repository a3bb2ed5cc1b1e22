"""One local SparkSession per pytest process (local[2], UTC, no UI, warehouse in a temporary directory)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with tempfile.TemporaryDirectory(prefix="cdc-spark-tests-") as scratch:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("cdc-spark-tests")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
            .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        yield session
        session.stop()
