"""Sinks write one batch's merge plan (:class:`cdc_spark.apply.MergePlan`) to a target table atomically.

* :class:`~cdc_spark.sinks.delta.DeltaSink` (the embedded default): Delta tables written with the ``deltalake``
  package, exactly once through the Delta app-transaction of each commit.
* :class:`~cdc_spark.sinks.spark_merge.SparkMergeSink`: ``MERGE INTO`` on a Spark catalog that supports it
  (Delta Lake or Iceberg jars on the cluster); selected with ``sink=spark-merge``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from cdc_spark.apply import MergePlan


@attrs.frozen(kw_only=True)
class BatchInfo:
    """Identifies a micro-batch: a replay of the same ``batch_id`` under the same ``app_id`` is a no-op."""

    app_id: str
    batch_id: int
    offsets: str | None = None  # the source offsets of the batch as JSON, recorded in the commit


class Sink(Protocol):
    """Writes merge plans for tables named ``database.table``; reads stored rows back for SCD2."""

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None: ...

    def committed(self, table: str, batch: BatchInfo) -> bool: ...

    def write(self, plan: MergePlan, batch: BatchInfo | None) -> bool: ...

    def live(self, spark: SparkSession, table: str) -> DataFrame: ...
