"""A table's work on few rows run as one Spark task, with no shuffle.

Under adaptive execution every shuffle of a query is a stage that Spark runs as a job of its own, planning the rest
of the query again once it ends. A table's resolve (a window per key over its changes, joined with its stored
keys) ran three such jobs before its checkpoint, and a small table's rewrite (its rows joined with the resolved
batch) two before its write: a batch of 50 tables of 200 changes, 358 Spark jobs. Where a table's work reads few
rows, its inputs are coalesced to one partition instead: a window or a join over inputs of one partition each needs
no shuffle, so the query is one job of one task. Spark keeps the one partition only for inputs it can size under
``spark.sql.maxSinglePartitionBytes``, and a checkpoint it cannot size; :func:`planned_as_one_task` raises
the limit for the block.

"Few" is the rows under which the expressions are interpreted too (:data:`cdc_spark.expression_mode.INTERPRETED_ROWS`):
the same small-batch work, where a Spark job's fixed cost outweighs what a second core does with the rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from cdc_spark.expression_mode import INTERPRETED_ROWS
from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ONE_TASK_ROWS: Final = INTERPRETED_ROWS
SINGLE_PARTITION_BYTES: Final = "spark.sql.maxSinglePartitionBytes"
# Spark's largest byte size: the limit then never sends a query of one-partition inputs back to shuffles
_ANY_SIZE: Final = str(2**63 - 1)


def in_one_task(rows: int | None) -> bool:
    """Whether work reading ``rows`` rows (a table's stored keys and changes; None: not counted) runs as one task."""
    return rows is not None and rows < ONE_TASK_ROWS


def one_partition(frame: DataFrame, one: bool) -> DataFrame:
    """``frame`` in one partition where ``one`` (no shuffle: its partitions are read by one task), else as it is."""
    return frame.coalesce(1) if one else frame


@contextmanager
def planned_as_one_task(spark: SparkSession, one: bool) -> Iterator[None]:
    """While open, where ``one``: ``spark`` plans a join or window over inputs of one partition each without a
    shuffle, whatever size it estimates for them (the setting is restored afterwards)."""
    if not one:
        yield
        return
    with session_conf(spark, {SINGLE_PARTITION_BYTES: _ANY_SIZE}):
        yield


__all__ = ["ONE_TASK_ROWS", "SINGLE_PARTITION_BYTES", "in_one_task", "one_partition", "planned_as_one_task"]
