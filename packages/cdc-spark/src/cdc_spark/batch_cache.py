"""A micro-batch's decoded frames kept without their lineage: every table's apply reads them.

A persisted frame (``DataFrame.persist``) stays in every plan that reads it as the plan that computed it, and every
task that reads it carries that lineage. For the decode's caches that is the whole decode: the wide typing of every
table, with its generated code. Applying a batch of fifty tables reads the cache in hundreds of queries and tasks.

:func:`persist_batch` keeps the frame as a local checkpoint instead: its rows are computed by the first job that
reads them and stored by the executors, in memory and spilled to disk; later plans start from those blocks. A batch
of fifty tables applied one at a time took 12% less time (``docs/spark.md``, "The decode's caches kept without their
lineage"). The trade: a block lost with its executor is not computed again, so the batch fails and is run again
from its offsets instead of recomputing the partition. The resolve's checkpoint (:mod:`cdc_spark.sinks.scd1_batch`)
makes the same trade. :func:`release` frees the blocks at the end of the batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_LOGICAL_RDD: Final = "org.apache.spark.sql.execution.LogicalRDD"


def persist_batch(frame: DataFrame) -> DataFrame:
    """``frame`` kept for the batch without its lineage (see the module doc); computed where it is first read."""
    return frame.localCheckpoint(eager=False)


def release(frame: DataFrame) -> None:
    """Free what :func:`persist_batch` (or ``persist``) keeps of ``frame``; the frame is not read afterwards."""
    plan = frame._jdf.queryExecution().analyzed()
    if plan.getClass().getName() == _LOGICAL_RDD:
        plan.rdd().unpersist(False)
    else:
        frame.unpersist()


__all__ = ["persist_batch", "release"]
