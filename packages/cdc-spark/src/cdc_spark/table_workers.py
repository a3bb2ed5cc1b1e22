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

from cdc_spark.runtime.java_names import static_method

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_TABLE_PARALLELISM: Final = 4

T = TypeVar("T")


def bound_to(frame: DataFrame, session: SparkSession) -> DataFrame:
    """``frame``'s analyzed plan in ``session`` (a clone of its own, or its parent): the same rows, and the cached
    data its plan has in any session of the application."""
    if frame.sparkSession is session:
        return frame
    return plan_in(frame._jdf.queryExecution().analyzed(), session)


def plan_in(plan: Any, session: SparkSession) -> DataFrame:
    """The analyzed logical ``plan`` (a JVM object) as a frame of ``session``."""
    from pyspark.sql import DataFrame as PyDataFrame

    jvm: Any = session._jvm
    return PyDataFrame(
        static_method(jvm, "org.apache.spark.sql.classic.Dataset", "ofRows")(session._jsparkSession, plan), session
    )


def own_session(parent: SparkSession) -> SparkSession:
    """A clone of ``parent``: its settings and temporary views, a conf of its own."""
    from pyspark.sql import SparkSession

    jparent: Any = parent._jsparkSession
    return SparkSession(parent.sparkContext, jparent.cloneSession())


def in_own_session(frame: DataFrame) -> DataFrame:
    """``frame`` bound to a clone of its session: the same rows, settings and temporary views, a conf of its own."""
    return bound_to(frame, own_session(frame.sparkSession))


def run_each(tasks: Sequence[tuple[str, Callable[[], T]]], parallelism: int) -> dict[str, T]:
    """Every task's result by name, at most ``parallelism`` at once. Every task runs to its end even when one
    fails (a table must not be left mid-write by its neighbour's error); then the first failure is raised."""
    if parallelism <= 1 or len(tasks) <= 1:
        return {name: task() for name, task in tasks}
    results: dict[str, T] = {}
    with ThreadPoolExecutor(max_workers=min(parallelism, len(tasks)), thread_name_prefix="cdc-table") as pool:
        futures = [(name, pool.submit(_inheriting(task))) for name, task in tasks]
        failures = [future.exception() for _, future in futures]
    for (name, future), failure in zip(futures, failures, strict=True):
        if failure is not None:
            raise failure
        results[name] = future.result()
    return results


def _inheriting(task: Callable[[], T]) -> Callable[[], T]:
    """``task`` run with the caller's job group, description, scheduler pool and tags (a pool thread starts with
    none of them): the batch's Spark jobs stay one group to watch and to cancel."""
    from pyspark.sql import SparkSession
    from pyspark.util import inheritable_thread_target

    session = SparkSession.getActiveSession()
    if session is None:
        return task
    wrapped: Callable[[], T] = inheritable_thread_target(session)(task)
    return wrapped


__all__ = ["DEFAULT_TABLE_PARALLELISM", "bound_to", "in_own_session", "own_session", "plan_in", "run_each"]
