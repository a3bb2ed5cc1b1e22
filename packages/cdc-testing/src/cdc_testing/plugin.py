"""pytest plugin (registered through the ``pytest11`` entry point): a real Apache Kafka broker and a real Schema
Registry per test session.

Fixtures:
- ``kafka_bootstrap``: the bootstrap address of an Apache Kafka broker started once per session from the pinned
  Maven Central jars (or of the broker that ``CDC_TEST_KAFKA_BOOTSTRAP`` names).
- ``kafka_topic``: a fresh topic name with one partition created on that broker.
- ``apicurio_registry``: an Apicurio Registry started once per session (:mod:`cdc_testing.apicurio`).
- ``schema_registry``: that registry emptied for the test; ``.url`` is its Confluent-compatible endpoint.
- ``registry_double``: a fault-injecting HTTP double of a registry, for 5xx, slowness, forced rejections, auth
  and TLS (:mod:`cdc_testing.registry_double`).
- ``mariadb``, ``postgres``: a MariaDB / PostgreSQL server from the machine's Debian packages, started once per
  session in a temporary directory (:mod:`cdc_testing.databases`).
- ``connect_worker``: Kafka Connect standalone with Debezium's connectors on the session's broker
  (:mod:`cdc_testing.connect`).
- ``host_zone``: sets this host's time zone (``TZ``) for one test, ``host_zone("Asia/Tokyo")``: a value that
  depends on the consumer's clock instead of the changefeed's zone then shows.

Every JVM a test starts through ``spark-submit`` (each ``cdc apply`` a test runs as a process) compiles with the
JIT's first tier only (:data:`SHORT_JVM_OPTIONS` in ``SPARK_SUBMIT_OPTS``, unless that is set already): such a JVM
lives for one short run, and the second tier's compiler took a third of its CPU. The benchmarks, which measure
the JVM users get, undo it (:func:`keep_jvm_defaults`).

A part that cannot be had here (no Java or Maven, or it fails to start) skips the tests that need it, with the
reason; with ``CI=true`` those tests fail instead, so that CI never passes by skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Callable, Iterator, MutableMapping
from typing import Final, NoReturn

import pytest

from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry, ApicurioUnavailableError
from cdc_testing.connect import ConnectWorker
from cdc_testing.databases import MariaDB, PostgreSQL, missing_mariadb, missing_postgres
from cdc_testing.processes import FIRST_TIER_ONLY, SUBMIT_OPTIONS_ENV
from cdc_testing.registry_double import registry_double  # noqa: F401 (fixture: fault-injecting registry double)

# A cold `cdc apply --once` of 19 messages on local[2]: 33-34 s and 45 s of CPU with these, 40-44 s and 71-77 s
# without (docs/development.md, "Where the suite's time goes"). The tests' own long-lived session overrides them.
SHORT_JVM_OPTIONS: Final = FIRST_TIER_ONLY
# Set by a test that runs a few tests in a child pytest (cdc-spark's test_cluster.py): that child's session, whose
# JVMs live for one short run too, then keeps the first tier for its driver and its executors. Its two tests on
# local-cluster[2,1,1024]: 158-162 s against 181-186 s with both tiers.
SHORT_RUN_ENV: Final = "CDC_TEST_SHORT_RUN"


# whether this run's plugin set SPARK_SUBMIT_OPTS (not the developer)
SHORT_JVMS_SET: Final = pytest.StashKey[bool]()


def short_jvms(environ: MutableMapping[str, str]) -> bool:
    """Give the JVMs started with ``environ`` the first tier only, unless their options are set already; whether
    it did."""
    if SUBMIT_OPTIONS_ENV in environ:
        return False
    environ[SUBMIT_OPTIONS_ENV] = SHORT_JVM_OPTIONS
    return True


def keep_jvm_defaults(config: pytest.Config) -> None:
    """Undo :func:`short_jvms` for a run that measures the JVM users get (the benchmarks' ``conftest.py``)."""
    if config.stash.get(SHORT_JVMS_SET, False):
        os.environ.pop(SUBMIT_OPTIONS_ENV, None)
        config.stash[SHORT_JVMS_SET] = False


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SHORT_JVMS_SET] = short_jvms(os.environ)


@pytest.fixture
def host_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason`` locally; fail it under CI (``CI=true``), where every real part must run."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"{reason} (CI=true: a missing test dependency fails the run)", pytrace=False)
    pytest.skip(reason)


def _missing_for_broker() -> str | None:
    """Why no broker can be had here, or None."""
    if importlib.util.find_spec("confluent_kafka") is None:
        return "needs confluent-kafka (pip install 'cdc-testing[kafka]')"
    if os.environ.get(kafka.BOOTSTRAP_ENV):
        return None
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"needs {' and '.join(missing)} to run Apache Kafka from Maven Central" if missing else None


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


@pytest.fixture(scope="session")
def apicurio_registry() -> Iterator[ApicurioRegistry]:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        unavailable(f"needs {' and '.join(missing)} to run Apicurio Registry from Maven Central")
    registry = ApicurioRegistry()
    try:
        try:
            registry.start()
        except ApicurioUnavailableError as exc:
            unavailable(str(exc))
        yield registry
    finally:
        registry.close()


@pytest.fixture
def schema_registry(apicurio_registry: ApicurioRegistry) -> ApicurioRegistry:
    """The session's real registry with no subjects left from earlier tests."""
    apicurio_registry.reset()
    return apicurio_registry


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
