"""apply_changes per 10^5 changed keys (SCD1 net change + Delta MERGE) against a plain overwrite of the same rows.

The baseline is the cheapest possible write of the batch's rows: Spark -> Arrow -> ``write_deltalake`` overwrite,
with no net-change computation, no sequence check and no merge. Both are measured in the same run; the ratio
(apply time / overwrite time) is printed.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

KEYS = 100_000
SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    yield session


def changes(spark: Any, generation: int) -> Any:
    """One change per key (every 10th a delete), ordered after every earlier generation."""
    from pyspark.sql import functions as F

    base = spark.range(KEYS).select(F.col("id").cast("int").alias("id"))
    ts = F.lit(generation * 10**9) + F.col("id")
    return base.select(
        "id",
        F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"),
        (F.col("id") * 7 % 1000).cast("decimal(12,2)").alias("amount"),
        (F.col("id") % 3 == 0).alias("active"),
        F.timestamp_seconds(F.lit(1_700_000_000) + F.col("id")).alias("created_at"),
        F.when((F.col("id") % 10 == 0) & F.lit(generation > 0), "delete").otherwise("update").alias("_cdc_op"),
        F.struct(ts.alias("commit_ts"), F.lit(0).alias("partition"), ts.alias("offset"), F.lit(0).alias("position"))
        .cast(SEQ)
        .alias("_cdc_sequence"),
    ).cache()


def test_apply_per_100k_changed_keys(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    from deltalake import write_deltalake

    from cdc_spark.apply import apply_changes

    target = str(tmp_path / "target")
    apply_changes(changes(spark, 0), target, keys=["id"])  # the table exists with every key
    generation = itertools.count(1)
    batches = {g: changes(spark, g) for g in range(1, 5)}
    for frame in batches.values():
        frame.count()

    baseline_times = []
    for g in range(1, 4):
        start = time.perf_counter()
        rows = batches[g].drop("_cdc_op", "_cdc_sequence").toArrow()
        write_deltalake(str(tmp_path / "baseline"), rows, mode="overwrite")
        baseline_times.append(time.perf_counter() - start)

    def apply_one() -> None:
        apply_changes(batches[next(generation)], target, keys=["id"])

    benchmark.pedantic(apply_one, rounds=3, iterations=1)
    baseline = statistics.median(baseline_times)
    applied = benchmark.stats.stats.median
    print(
        f"\napply_changes: {KEYS / applied:,.0f} changed keys/s ({applied:.2f} s per 10^5 keys); "
        f"plain overwrite baseline: {KEYS / baseline:,.0f} rows/s ({baseline:.2f} s); "
        f"ratio apply/overwrite time = {applied / baseline:.2f}x"
    )
