"""A Spark Python data source whose rows have the columns of Spark's own Kafka source.

- ``cdc-messages``: files of message lines (the ``cdc decode`` input format), for replays and tests.

Kafka itself is read with Spark's own ``kafka`` format (the ``spark-sql-kafka`` connector that
:func:`cdc_spark.session.build_session` configures). Call :func:`register` once per session, then
``spark.read.format("cdc-messages")`` or ``readStream``.
"""

from __future__ import annotations

from typing import Any

from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_spark.source.messages import MessagesDataSource


def register(spark: Any) -> None:
    """Make ``cdc-messages`` available to ``spark.read`` and ``spark.readStream``."""
    spark.dataSource.register(MessagesDataSource)


__all__ = ["KAFKA_COLUMNS", "MessagesDataSource", "register"]
