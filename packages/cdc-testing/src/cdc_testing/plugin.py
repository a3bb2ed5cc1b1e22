"""pytest plugin (registered through the ``pytest11`` entry point): a real Apache Kafka broker per test session.

Fixtures:
- ``kafka_bootstrap``: the bootstrap address of an Apache Kafka broker started once per session from the pinned
  Maven Central jars (or of the broker that ``CDC_TEST_KAFKA_BOOTSTRAP`` names).
- ``kafka_topic``: a fresh topic name with one partition created on that broker.
- ``mariadb``, ``postgres``: a MariaDB / PostgreSQL server from the machine's Debian packages, started once per
  session in a temporary directory (:mod:`cdc_testing.databases`).
- ``connect_worker``: Kafka Connect standalone with Debezium's connectors on the session's broker
  (:mod:`cdc_testing.connect`).

Where a part cannot be had (a binary or a Python client missing) the tests that need it are skipped with the
reason, except under CI (``CI=true``), where a missing part fails the run: CI must not pass on skipped tests.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator

import pytest

from cdc_testing import kafka
from cdc_testing.connect import ConnectWorker
from cdc_testing.databases import MariaDB, PostgreSQL, missing_mariadb, missing_postgres
from cdc_testing.registry import schema_registry  # noqa: F401 (fixture: Schema Registry test double)


def _missing_for_broker() -> str | None:
    """Why no broker can be had here, or None."""
    if importlib.util.find_spec("confluent_kafka") is None:
        return "needs confluent-kafka (pip install 'cdc-testing[kafka]')"
    if os.environ.get(kafka.BOOTSTRAP_ENV):
        return None
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"needs {' and '.join(missing)} to run Apache Kafka from Maven Central" if missing else None


def unavailable(reason: str) -> None:
    """Skip the test for ``reason``, or fail it under CI (where every real part must be there)."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    reason = _missing_for_broker()
    if reason is not None:
        unavailable(reason)
    with kafka.running_broker() as address:
        yield address


@pytest.fixture
def kafka_topic(kafka_bootstrap: str) -> str:
    topic = kafka.unique_topic()
    kafka.create_topic(kafka_bootstrap, topic)
    return topic


def _missing_client(module: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"needs the Python client {module} (pip install 'cdc-testing[databases]')"
    return None


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDB]:
    reason = missing_mariadb() or _missing_client("pymysql")
    if reason is not None:
        unavailable(reason)
    server = MariaDB()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgreSQL]:
    reason = missing_postgres() or _missing_client("psycopg")
    if reason is not None:
        unavailable(reason)
    server = PostgreSQL()
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture(scope="session")
def connect_worker(kafka_bootstrap: str) -> Iterator[ConnectWorker]:
    worker = ConnectWorker(kafka_bootstrap)
    try:
        yield worker.start()
    finally:
        worker.close()
