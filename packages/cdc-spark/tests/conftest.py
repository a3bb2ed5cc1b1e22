"""One local SparkSession per pytest process, built by the package's own session builder (Spark's Kafka and Avro
connectors, Delta Lake and Iceberg; local[2], UTC, no UI, warehouse in a temporary directory)."""

from __future__ import annotations

import atexit
import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, Final

import pytest

from cdc_core.message import Message

# Set by `nox -s mutate` only: the session outlives pytest runs, so that mutmut's runs in its own process (stats,
# clean run) and the forked child testing each mutant all use the one JVM started first (see kept_session).
KEEP_SESSION: Final = "CDC_TEST_SPARK_KEEP"


def _jvm_settings(scratch: str) -> dict[str, str]:
    """The parallel collector: the suite is CPU-bound on CI's two cores and G1's concurrent threads and barriers
    took a share of them. 25 decode-equality tests: 203 s and 210 s against 216-239 s with G1 (docs/development.md,
    "Where the suite's time goes"). Pauses do not matter to a test. A whole suite's JVM compiles with both of the
    JIT's tiers: the last switch given wins over the first tier only of SPARK_SUBMIT_OPTS."""
    from cdc_spark.runtime.jit import EXECUTOR_OPTIONS, with_huge_methods
    from cdc_testing.plugin import SHORT_JVM_OPTIONS, SHORT_RUN_ENV

    driver = f"-Dderby.system.home={scratch} -XX:+UseParallelGC"
    if os.environ.get(SHORT_RUN_ENV) != "1":
        return {"spark.driver.extraJavaOptions": f"{driver} -XX:TieredStopAtLevel=4"}
    return {"spark.driver.extraJavaOptions": driver, EXECUTOR_OPTIONS: with_huge_methods(SHORT_JVM_OPTIONS)}


def _build(scratch: str) -> Any:
    from cdc_spark.session import build_session

    return build_session(
        os.environ.get("CDC_TEST_SPARK_MASTER", "local[2]"),
        app_name="cdc-spark-tests",
        conf={
            "spark.sql.warehouse.dir": os.path.join(scratch, "warehouse"),
            **_jvm_settings(scratch),
            # Spark keeps each query's plan and metrics for its UI, by default the last 1,000: in one JVM that
            # runs many tests (the suite, a kept mutation session) they held most of the live heap (463 MB after
            # 139 SCD2 mutants, over a million SQLPlanMetric objects); no test reads them.
            "spark.sql.ui.retainedExecutions": "50",
            "spark.ui.retainedJobs": "100",
            "spark.ui.retainedStages": "100",
            # Local mode runs the tasks in this heap too, and Spark ends the JVM on an OutOfMemoryError in a task
            # (no crash file): a kept mutation session's JVM ended so after about 450 SCD2 mutants at 1 GB.
            "spark.driver.memory": "2g",
            # An error thrown in the JVM shows its Java stack in the test's output: a rare failure in CI
            # ("requirement failed", from a summary query of the Avro job test) came with none to trace it by.
            "spark.sql.pyspark.jvmStacktrace.enabled": "true",
        },
        log_level="ERROR",
    )


def kept_session(build: Callable[[str], Any]) -> Any:
    """The session started by an earlier pytest run of this process (or of the process this one was forked from),
    else a new one that is never stopped (the JVM ends with the process that started it). A forked child talks to
    it over a connection of its own and releases what it made (:mod:`cdc_testing.spark_fork`)."""
    from pyspark.sql import SparkSession

    from cdc_testing.spark_fork import own_connection

    session = SparkSession._instantiatedSession
    if session is None or session._sc._jsc is None:
        scratch = tempfile.mkdtemp(prefix="cdc-spark-tests-")
        atexit.register(shutil.rmtree, scratch, True)  # the forked children leave with os._exit: not theirs
        session = build(scratch)
        os.register_at_fork(after_in_child=own_connection)
    return session


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A forked child's pytest run ends with the JVM told of every object the child dropped: the child then
    leaves with os._exit, and its releasing thread with it."""
    from cdc_testing.spark_fork import release_dropped

    release_dropped()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    if os.environ.get(KEEP_SESSION) == "1":
        yield kept_session(_build)
        return
    with tempfile.TemporaryDirectory(prefix="cdc-spark-tests-") as scratch:
        session = _build(scratch)
        yield session
        session.stop()


_MOST_MESSAGES: Final = 2_000  # no test using batch_expressions decodes a larger batch


@pytest.fixture
def batch_expressions(request: pytest.FixtureRequest) -> Iterator[None]:
    """The test's queries run with the expressions ``cdc apply`` gives a batch of its size: Spark's interpreted ones
    (:mod:`cdc_spark.expression_mode`), where Spark would generate and compile each task's projections. A test
    marked ``compiled`` runs Spark's generated code, as a large batch would. A file opts in with
    ``pytestmark = pytest.mark.usefixtures("batch_expressions")``; a test without Spark starts none."""
    if "spark" not in request.fixturenames:
        yield
        return
    from cdc_spark.expression_mode import FACTORY_MODE, expression_mode
    from cdc_spark.session_conf import session_conf

    compiled = request.node.get_closest_marker("compiled") is not None
    mode = expression_mode(None if compiled else _MOST_MESSAGES)
    with session_conf(request.getfixturevalue("spark"), {FACTORY_MODE: mode}):
        yield


@pytest.fixture
def kafka_frame(spark: Any) -> Callable[[list[Message]], Any]:
    """Messages as a Kafka-source DataFrame: topic ``shop``, partition = the message's modulo 3, offset = index."""
    from cdc_spark.source.columns import KAFKA_COLUMNS

    def build(messages: list[Message]) -> Any:
        stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
        rows = [(m.key, m.value, "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
        return spark.createDataFrame(rows, KAFKA_COLUMNS)

    return build


def sorted_changes(frame: Any) -> list[Any]:
    return sorted(
        frame.collect(), key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"])
    )


@pytest.fixture
def change_rows() -> Callable[[Any], list[Any]]:
    """A change frame's rows in the contract's total order (partition, offset, position)."""
    return sorted_changes


@pytest.fixture(scope="session")
def kitchen_sink_canal() -> Callable[[int], list[Message]]:
    """Row changes of every column type (zero dates included) as official Canal writes them, with TiDB's
    extension fields and TIMESTAMPs in Asia/Shanghai, spread over three partitions."""
    from hypothesis import HealthCheck, given, settings

    from cdc_core.events import RowChange
    from cdc_core.registry import get_codec
    from cdc_testing.strategies import kitchen_sink_schema, row_changes

    def build(count: int) -> list[Message]:
        events: list[RowChange] = []

        @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(row_changes(kitchen_sink_schema(), zero_dates=True))
        def draw(change: RowChange) -> None:
            events.append(change)

        draw()
        encoder = get_codec("canal-json").encoder(
            {
                "flavour": "canal",
                "content-compatible": True,
                "enable-tidb-extension": True,
                "time-zone": "Asia/Shanghai",
            }
        )
        return [
            Message(value=m.value, key=m.key, partition=number % 3)
            for number, event in enumerate(events)
            for m in encoder.encode(event)
        ]

    return build


@pytest.fixture
def case_sensitive(spark: Any) -> Iterator[None]:
    """The test's plans built and run with case-sensitive column names, as a session may set them: a plan must then
    name each of its own columns exactly as it made it (Spark's default, case-insensitive, hides a misspelt case)."""
    setting = "spark.sql.caseSensitive"
    previous = spark.conf.get(setting)
    spark.conf.set(setting, "true")
    yield
    spark.conf.set(setting, previous)
