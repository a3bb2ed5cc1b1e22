"""pytest plugin (registered through the ``pytest11`` entry point): a real Apache Kafka broker per test session.

Fixtures:
- ``kafka_bootstrap``: the bootstrap address of an Apache Kafka broker started once per session from the pinned
  Maven Central jars (or of the broker that ``CDC_TEST_KAFKA_BOOTSTRAP`` names).
- ``kafka_topic``: a fresh topic name with one partition created on that broker.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator

import pytest

from cdc_testing import kafka
from cdc_testing.registry import schema_registry  # noqa: F401 (fixture: Schema Registry test double)


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
        pytest.skip(reason)
    with kafka.running_broker() as address:
        yield address


@pytest.fixture
def kafka_topic(kafka_bootstrap: str) -> str:
    topic = kafka.unique_topic()
    kafka.create_topic(kafka_bootstrap, topic)
    return topic
