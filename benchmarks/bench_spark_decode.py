"""Rows per second of ``cdc_spark.decode`` against Spark's own ``from_json`` on the same value column, same run.

The input is a realistic changefeed (several tables, every column type the generator knows, updates, deletes, a
DDL) encoded with the project's own encoders into Kafka-shaped rows, then replicated in the JVM
(``CDC_BENCH_DECODE_COPIES`` copies, default 20: about 200,000 messages) with distinct offsets. The baseline parses
the value column with ``from_json`` and a schema inferred from the messages: no typing, no schema tracking, no dead
letters. ``plan="jvm"`` (the default) produces the full change-frame contract on the same input; ``plan="python"``
(every message through the codec) runs on one copy only, as it is an order of magnitude slower. Each run forces
every output column through Spark's ``noop`` sink; the ratio printed is decode rows/s over ``from_json`` rows/s.

    nox -s bench -- benchmarks/bench_spark_decode.py -s
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_DECODE_COPIES", "20"))
PROTOCOLS = [p for p in ("canal-json", "debezium", "simple") if p in installed_codecs()]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from cdc_spark.session import build_session

    owned = SparkSession.getActiveSession() is None
    session = build_session("local[2]", app_name="bench-decode", conf={"spark.driver.memory": "2g"}, log_level="ERROR")
    yield session
    if owned:
        session.stop()


def _kafka_frames(spark: Any, protocol: str) -> tuple[Any, Any]:
    """One copy of the encoded changefeed, and ``COPIES`` copies of it with distinct offsets (both cached)."""
    from pyspark.sql import functions as F

    from cdc_spark.source.columns import KAFKA_COLUMNS
    from cdc_testing.changefeed import encode, generate

    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    messages = list(encode(generate(seed=11, transactions=TRANSACTIONS), protocol))
    rows = [(m.key, m.value, "bench", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    one = spark.createDataFrame(rows, KAFKA_COLUMNS).repartition(2).cache()
    copies = spark.range(COPIES).withColumnRenamed("id", "copy")
    many = (
        one.crossJoin(copies)
        .withColumn("offset", F.col("copy") * len(rows) + F.col("offset"))
        .drop("copy")
        .repartition(2)
        .cache()
    )
    return one, many


def _best_of(runs: int, action: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def _noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_decode_against_from_json(benchmark: Any, spark: Any, protocol: str) -> None:
    from pyspark.sql import functions as F

    from cdc_spark.decoding import decode

    one, many = _kafka_frames(spark, protocol)
    small, large = one.count(), many.count()
    values = many.select(F.col("value").cast("string").alias("json"))
    sample = [r["json"] for r in values.limit(500).collect()]
    inferred = spark.read.json(spark.sparkContext.parallelize(sample)).schema

    def baseline() -> None:
        _noop(values.select(F.from_json("json", inferred).alias("doc")).select("doc.*"))

    def run(frame: Any, plan: str, paths: dict[str, int]) -> Callable[[], None]:
        def action() -> None:
            decoded = decode(frame, protocol, plan=plan)
            try:
                for database, table in decoded.tables():
                    _noop(decoded.table(database, table))
                _noop(decoded.control())
                _noop(decoded.dead_letters())
                paths.update(decoded.paths)
            finally:
                decoded.release()

        return action

    baseline()  # warm the JVM paths once before timing anything
    raw = large / _best_of(3, baseline)
    python_paths: dict[str, int] = {}
    python = small / _best_of(1, run(one, "python", python_paths))
    jvm_paths: dict[str, int] = {}
    benchmark.pedantic(run(many, "jvm", jvm_paths), rounds=2, iterations=1)
    jvm = large / benchmark.stats.stats.min
    print(
        f"\n{protocol}: from_json {raw:,.0f} rows/s ({large} messages);"
        f" jvm {jvm:,.0f} rows/s ({jvm / raw:.2f}x; typed in the JVM {jvm_paths.get('jvm', 0)},"
        f" through the codec {jvm_paths.get('codec', 0)});"
        f" python {python:,.0f} rows/s ({python / raw:.2f}x, {small} messages)"
    )
