"""A Python worker's fixed cost per task: Python's own cache invalidation against the package's (re-reading a zip
archive only when it changed, ``cdc_spark.runtime.worker_imports``).

A small ``mapInArrow`` job (``CDC_BENCH_TASKS`` tasks, default 8, over a few hundred rows: the shape of a decode's
Python stage on a micro-batch) runs on the same workers of one session, first with every task restoring Python's
own invalidation for the next (the baseline: 3.10-3.12 re-read pyspark.zip, py4j and spark-core's jar before every
task), then with every task making it lazy. Printed: the best of the rounds of each, per job and per task, and their
ratio. On Python 3.13 and later both are Python's own and the ratio is about 1.

    nox -s bench -- benchmarks/bench_worker_tasks.py -s
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from spark_timing import bench_session

TASKS = int(os.environ.get("CDC_BENCH_TASKS", "8"))
ROUNDS = 8


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-worker-tasks", driver_memory="1g") as session:
        yield session


def _passing(lazy: bool) -> Any:
    """A task's function that passes its rows on, leaving the worker's invalidation lazy or as Python has it for
    the next task the worker runs (a task's invalidation comes before its function)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import zipimport

        from cdc_spark.runtime.worker_imports import PATCHED_MARK, reread_changed_archives_only

        current = zipimport.zipimporter.invalidate_caches
        if lazy:
            reread_changed_archives_only()
        elif getattr(current, PATCHED_MARK, False):
            # restores the method the package patched (functools.wraps keeps it as __wrapped__)
            zipimport.zipimporter.invalidate_caches = current.__wrapped__  # type: ignore[method-assign,attr-defined]
        yield from batches

    return run


def _best_job_seconds(spark: Any, lazy: bool) -> float:
    frame = spark.range(0, 400, 1, TASKS).cache()
    frame.count()
    job = frame.mapInArrow(_passing(lazy), frame.schema)
    job.collect()
    job.collect()  # every worker has run one task of this kind: the next tasks see its setting
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        job.collect()
        times.append(time.perf_counter() - start)
    frame.unpersist()
    return min(times)


def test_a_python_task_skips_re_reading_unchanged_archives(benchmark: Any, spark: Any) -> None:
    eager = _best_job_seconds(spark, lazy=False)
    lazy: list[float] = []
    benchmark.pedantic(lambda: lazy.append(_best_job_seconds(spark, lazy=True)), rounds=1, iterations=1)
    cores = spark.sparkContext.defaultParallelism
    print(
        f"\n{TASKS} Python tasks a job on {cores} cores, best of {ROUNDS}: Python's invalidation {eager * 1000:.0f} ms"
        f" a job ({eager * cores / TASKS * 1000:.0f} ms a task), re-reading changed archives only"
        f" {lazy[0] * 1000:.0f} ms ({lazy[0] * cores / TASKS * 1000:.0f} ms a task): {lazy[0] / eager:.2f}x"
    )
