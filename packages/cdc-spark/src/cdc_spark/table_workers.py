"""A micro-batch's tables applied side by side: each table's statements in a session of its own, on its own thread.

A table's batch is a chain of small Spark jobs (summary, state resolution, two MERGEs), most of whose time is
planning on the driver, a single thread per query. Tables are independent (their own target, state table and
commit mark), so running them at once keeps both the driver's and the executors' cores busy.

The sinks mark their commits through session settings (Delta's ``txnAppId``/``txnVersion``) and register their
merge sources as temporary views: each table therefore runs in a clone of the batch's session (same settings and
views, a conf of its own), and its change frame is re-bound to that clone. The cached data they read is shared by
every session of the application.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DEFAULT_TABLE_PARALLELISM: Final = 4

T = TypeVar("T")


def in_own_session(frame: DataFrame) -> DataFrame:
    """``frame`` bound to a clone of its session: the same rows, settings and temporary views, a conf of its own."""
    from pyspark.sql import DataFrame as PyDataFrame
    from pyspark.sql import SparkSession

    parent = frame.sparkSession
    jparent: Any = parent._jsparkSession
    clone = SparkSession(parent.sparkContext, jparent.cloneSession())
    jvm: Any = parent._jvm
    plan = frame._jdf.queryExecution().analyzed()
    rebound = jvm.org.apache.spark.sql.classic.Dataset.ofRows(clone._jsparkSession, plan)
    return PyDataFrame(rebound, clone)


def run_each(tasks: Sequence[tuple[str, Callable[[], T]]], parallelism: int) -> dict[str, T]:
    """Every task's result by name, at most ``parallelism`` at once. Every task runs to its end even when one
    fails (a table must not be left mid-write by its neighbour's error); then the first failure is raised."""
    if parallelism <= 1 or len(tasks) <= 1:
        return {name: task() for name, task in tasks}
    results: dict[str, T] = {}
    with ThreadPoolExecutor(max_workers=min(parallelism, len(tasks)), thread_name_prefix="cdc-table") as pool:
        futures = [(name, pool.submit(task)) for name, task in tasks]
        failures = [future.exception() for _, future in futures]
    for (name, future), failure in zip(futures, failures, strict=True):
        if failure is not None:
            raise failure
        results[name] = future.result()
    return results


__all__ = ["DEFAULT_TABLE_PARALLELISM", "in_own_session", "run_each"]
