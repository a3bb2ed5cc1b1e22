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

Each table's change frame is a filter of such a checkpoint by the table's index. Spark copies every row of a
checkpoint before a filter sees it, and a row of a batch of many tables (a struct per table) is too wide for
whole-stage code generation, so each query of each table would copy the whole batch's rows: :func:`table_rows`
filters them as the checkpoint is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.runtime.java_names import java_array, static_method

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_LOGICAL_RDD: Final = "org.apache.spark.sql.execution.LogicalRDD"


def persist_batch(frame: DataFrame) -> DataFrame:
    """``frame`` kept for the batch without its lineage (see the module doc); computed where it is first read."""
    return frame.localCheckpoint(eager=False)


def checkpoint_by_key(frame: DataFrame, keys: Sequence[str], partitions: int) -> DataFrame:
    """``frame`` computed now and kept for the batch without its lineage, as an eager local checkpoint; where the
    project's Java code is here, the frame says it is hash partitioned by ``keys`` into ``partitions`` (and sorted
    by them) when each of its rows proved to be (``cdc.spark.merge.KeyedCheckpoint`` hashes every row's key as it is
    written). A checkpoint of a full outer join by the key, or one planned adaptively, otherwise says nothing of its
    rows' place, and each later join by the key shuffles them again."""
    from pyspark.sql import DataFrame as PyDataFrame

    from cdc_spark.runtime.java_code import callable_here

    spark = frame.sparkSession
    if not callable_here(spark):
        return frame.localCheckpoint()
    names = java_array(spark, "java.lang.String", keys)
    kept = static_method(spark._jvm, "cdc.spark.merge.KeyedCheckpoint", "of")(frame._jdf, names, partitions)
    return PyDataFrame(kept, spark)


def release(frame: DataFrame) -> None:
    """Free what :func:`persist_batch` (or ``persist``) keeps of ``frame``; the frame is not read afterwards."""
    plan = frame._jdf.queryExecution().analyzed()
    if plan.getClass().getName() == _LOGICAL_RDD:
        plan.rdd().unpersist(False)
    else:
        frame.unpersist()


def table_rows(wide: DataFrame, index: int, column: str = "__tidx") -> DataFrame:
    """``wide``'s rows of table ``index`` (its int ``column``) where ``wide`` is projections and filters over a
    checkpoint: filtered as the checkpoint is read, before Spark copies its rows (``cdc.spark.plans.TableRows``),
    so each of a table's queries copies its own rows, not the batch's. Else, or without the project's Java code,
    ``wide`` itself (the caller's filter by ``column`` gives the same rows)."""
    from pyspark.sql import DataFrame as PyDataFrame

    from cdc_spark.runtime.java_code import callable_here

    spark = wide.sparkSession
    if not callable_here(spark):
        return wide
    jvm: Any = spark._jvm
    rows = static_method(jvm, "cdc.spark.plans.TableRows", "of")(wide._jdf, column, index)
    return wide if rows is None else PyDataFrame(rows, spark)


__all__ = ["checkpoint_by_key", "persist_batch", "release", "table_rows"]
