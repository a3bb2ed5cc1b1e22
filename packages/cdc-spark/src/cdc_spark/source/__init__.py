"""Spark Python data sources whose rows have the columns of Spark's own Kafka source.

- ``cdc-kafka``: Kafka through confluent-kafka in the executors, batch and streaming (offsets, read limits,
  ``Trigger.AvailableNow``), for Spark installations without the Kafka connector jar.
- ``cdc-messages``: files of message lines (the ``cdc decode`` input format), for replays and tests.

Call :func:`register` once per session, then ``spark.read.format("cdc-kafka")`` or ``readStream``.
"""

from __future__ import annotations

from typing import Any

from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_spark.source.kafka import KafkaDataSource
from cdc_spark.source.messages import MessagesDataSource


def register(spark: Any) -> None:
    """Make ``cdc-kafka`` and ``cdc-messages`` available to ``spark.read`` and ``spark.readStream``."""
    spark.dataSource.register(KafkaDataSource)
    spark.dataSource.register(MessagesDataSource)


__all__ = ["KAFKA_COLUMNS", "KafkaDataSource", "MessagesDataSource", "register"]
