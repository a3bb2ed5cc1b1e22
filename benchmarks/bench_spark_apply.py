"""Changed keys per second of ``apply_changes`` (SCD1 into Delta Lake, MERGE run by Spark) against a plain Spark
Delta append of the same rows, measured in the same run.

The target holds ``CDC_BENCH_APPLY_ROWS`` rows (default 10^6) and every round changes every one of its keys: 10 %
deletes, 20 % partial updates (one column set, the others absent), 70 % full updates, each round ordered after
the previous ones. The baseline appends the same rows (the table's columns) to a Delta table with Spark: no net
change, no state, no join. A second reference, the bare MERGE, runs one Delta ``MERGE INTO`` of the same changes
into a table of the same 10^6 rows (delete, update every column, insert; no sequence check, no state table, no
partial updates): what any apply that merges pays at least. Printed: changed keys/s of each, the ratios (goal:
apply at least 0.25 of the append's rate), and the driver's JVM heap and Python memory before and after (nothing
is collected to the driver, so both stay flat), with the heap before each round. Each of the three runs one round
first that is not timed: the first batch a process applies compiles the code its plans generate, and a changefeed
applies one batch after another. The three take turns round by round (append, bare MERGE, apply of a generation),
so that the machine's slow and fast stretches fall on all of them; ``CDC_BENCH_APPLY_ROUNDS`` sets the timed rounds
(default 3).

    nox -s bench -- benchmarks/bench_spark_apply.py -s
    CDC_BENCH_APPLY_ROWS=100000 nox -s bench -- benchmarks/bench_spark_apply.py -s   # a quick run
    CDC_BENCH_APPLY_SPREAD=1 nox -s bench -- benchmarks/bench_spark_apply.py -s      # changes as decode gives them

The generator's rows come partitioned by key range, which spares the apply's fold the shuffle it needs on changes
read from Kafka (the bare MERGE's join shuffles either way). ``CDC_BENCH_APPLY_SPREAD=1`` spreads them over the
partitions round robin first, as a decode of a topic's partitions leaves them.
"""

from __future__ import annotations

import itertools
import os
import resource
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_timing import bench_session

ROWS = int(os.environ.get("CDC_BENCH_APPLY_ROWS", "1000000"))
ROUNDS = int(os.environ.get("CDC_BENCH_APPLY_ROUNDS", "3"))
SPREAD = os.environ.get("CDC_BENCH_APPLY_SPREAD", "") not in ("", "0")
SPREAD_NOTE = " (changes spread round robin)"
SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
TABLE = "bench.accounts"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-apply", driver_memory="3g") as session:
        yield session


def changes(spark: Any, generation: int) -> Any:
    """One change per key. Generation 0 inserts every key; later ones delete every 10th key (which the next
    generation inserts again), update every 5th partially (``amount`` only) and the rest fully."""
    from pyspark.sql import functions as F

    key = F.col("id")
    ts = F.lit(generation * 10**9) + key
    op = F.lit("insert")
    changed = F.lit(None).cast("array<string>")
    if generation:
        deleted = (key + generation) % 10 == 0
        partial = ~deleted & ((key + generation) % 5 == 1)
        op = F.when(deleted, "delete").when((key + generation - 1) % 10 == 0, "insert").otherwise("update")
        changed = F.when(partial, F.array(F.lit("amount"))).otherwise(changed)
    else:
        partial = F.lit(False)
    frame = spark.range(ROWS).select(
        key.cast("bigint").alias("id"),
        F.when(~partial, F.concat(F.lit(f"name-{generation}-"), key.cast("string"))).alias("name"),
        ((key * 7 + generation) % 100_000 / 100).cast("decimal(12,2)").alias("amount"),
        F.when(~partial, key % 3 == 0).alias("active"),
        F.when(~partial, F.timestamp_seconds(F.lit(1_700_000_000) + key)).alias("created_at"),
        op.alias("_cdc_op"),
        F.struct(ts.alias("commit_ts"), F.lit(0).alias("partition"), ts.alias("offset"), F.lit(0).alias("position"))
        .cast(SEQ)
        .alias("_cdc_sequence"),
        changed.alias("_cdc_changed_columns"),
    )
    return (frame.repartition(spark.sparkContext.defaultParallelism) if SPREAD else frame).cache()


def bare_merge(spark: Any, table: str, changes: Any, columns: list[str]) -> None:
    """The changes merged into ``table`` (a Delta path) with one plain MERGE: the least a merging apply costs."""
    from cdc_spark.session_conf import temporary_views

    updates = ", ".join(f"t.{c} = s.{c}" for c in columns[1:])
    names, values = ", ".join(columns), ", ".join(f"s.{c}" for c in columns)
    # a view of its own, dropped without uncaching: replacing one view by the next batch's would free the cache of
    # the batch before, which the apply's rounds then read
    with temporary_views(spark, changes, prefix="bench_changes") as (view,):
        spark.sql(
            f"MERGE INTO delta.`{table}` t USING {view} s ON t.id = s.id"
            " WHEN MATCHED AND s._cdc_op = 'delete' THEN DELETE"
            f" WHEN MATCHED THEN UPDATE SET {updates}"
            f" WHEN NOT MATCHED AND s._cdc_op <> 'delete' THEN INSERT ({names}) VALUES ({values})"
        )


def driver_memory(spark: Any) -> tuple[float, float]:
    """(JVM heap in use after a GC, Python peak RSS) of the driver, in MiB."""
    runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
    spark.sparkContext._jvm.java.lang.System.gc()
    heap = (runtime.totalMemory() - runtime.freeMemory()) / 2**20
    return heap, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_apply_changed_keys_against_a_plain_delta_append(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    from cdc_spark.apply import apply_changes

    target = str(tmp_path / "target")
    initial = changes(spark, 0)  # every key, once: the apply's target and the bare MERGE's table start from it
    apply_changes(initial, target, ["id"], table=TABLE)
    # generation 1 warms each of the three up (its first run compiles its code), generations 2 on are timed
    batches = {g: changes(spark, g) for g in range(1, ROUNDS + 2)}
    for frame in batches.values():
        frame.count()  # generating the input is not measured
    columns = ["id", "name", "amount", "active", "created_at"]

    merged = str(tmp_path / "merged")
    initial.select(*columns).write.format("delta").save(merged)
    generation = itertools.count(1)
    current: dict[str, int] = {}
    baseline_times: list[float] = []
    merge_times: list[float] = []
    heaps: list[float] = []

    def references() -> None:
        """Before each apply round (untimed by the benchmark): the driver's heap, then the round's append and bare
        MERGE of the same changes, timed here. The three take turns, so a slow stretch of the machine falls on
        all of them rather than on one."""
        heaps.append(driver_memory(spark)[0])
        current["g"] = g = next(generation)
        start = time.perf_counter()
        batches[g].select(*columns).write.format("delta").mode("append").save(str(tmp_path / "baseline"))
        baseline_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        bare_merge(spark, merged, batches[g], columns)
        merge_times.append(time.perf_counter() - start)

    def apply_one() -> None:
        apply_changes(batches[current["g"]], target, ["id"], table=TABLE)

    before = driver_memory(spark)
    benchmark.pedantic(apply_one, setup=references, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    after = driver_memory(spark)
    heaps.append(after[0])
    del baseline_times[0], merge_times[0], heaps[0]  # the warm-up round's
    baseline = statistics.median(baseline_times)
    merge = statistics.median(merge_times)
    applied = benchmark.stats.stats.median
    print(
        f"\napply_changes{SPREAD_NOTE if SPREAD else ''}: {ROWS / applied:,.0f} changed keys/s"
        f" ({applied:.1f} s per {ROWS:,} keys: 10 % deletes,"
        f" 20 % partial updates) into a Delta table of {ROWS:,} rows; plain Spark Delta append of the same rows:"
        f" {ROWS / baseline:,.0f} rows/s ({baseline:.1f} s); apply/append rate = {baseline / applied:.2f}x;"
        f" bare Delta MERGE of the same changes:"
        f" {ROWS / merge:,.0f} keys/s ({merge:.1f} s), merge/append rate ="
        f" {baseline / merge:.2f}x, apply/merge rate = {merge / applied:.2f}x;"
        f" driver JVM heap {before[0]:.0f} -> {after[0]:.0f} MiB, driver Python peak RSS {before[1]:.0f} ->"
        f" {after[1]:.0f} MiB; timed rounds after one warm-up each: apply"
        f" {' '.join(f'{t:.1f}' for t in benchmark.stats.stats.data)} s, bare MERGE"
        f" {' '.join(f'{t:.1f}' for t in merge_times)} s (apply/merge rate of each round:"
        f" {' '.join(f'{m / a:.2f}' for m, a in zip(merge_times, benchmark.stats.stats.data, strict=True))});"
        f" driver heap after a GC before each timed round and after the last: {' '.join(f'{h:.0f}' for h in heaps)}"
        f" MiB"
    )
