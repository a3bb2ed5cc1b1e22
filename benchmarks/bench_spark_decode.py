"""Rows per second of ``cdc_spark`` decode against Spark's own ``from_json`` on the same value column, same run.

The input is a realistic changefeed (several tables, every column type the generator knows, updates, deletes, a
DDL) encoded with the project's own encoders into Kafka-shaped rows. The baseline parses the value column with
``from_json`` and a schema inferred from the messages (no typing, no schema tracking, no dead letters); the
decoders produce the full change-frame contract: the executor plan (the default), the driver plan, and for
Canal-JSON the native plan (``from_json`` and casts in the JVM). Each run forces every output column through
Spark's ``noop`` sink, and the ratio printed is decode rows/s over ``from_json`` rows/s.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000
PROTOCOLS = [p for p in ("debezium", "canal-json", "simple") if p in installed_codecs()]


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


def _kafka_frame(spark: Any, protocol: str) -> Any:
    from cdc_spark.source.columns import KAFKA_COLUMNS
    from cdc_testing.changefeed import encode, generate

    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    messages = list(encode(generate(seed=11, transactions=TRANSACTIONS), protocol))
    rows = [(m.key, m.value, "bench", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    return spark.createDataFrame(rows, KAFKA_COLUMNS).repartition(2).cache()


def _best_of(runs: int, action: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_decode_against_from_json(benchmark: Any, spark: Any, protocol: str) -> None:
    from pyspark.sql import functions as F

    from cdc_spark import decode as executor
    from cdc_spark import driver_decode as driver

    frame = _kafka_frame(spark, protocol)
    messages = frame.count()
    values = frame.select(F.col("value").cast("string").alias("json"))
    sample = [r["json"] for r in values.limit(200).collect()]
    inferred = spark.read.json(spark.sparkContext.parallelize(sample)).schema

    def baseline() -> None:
        values.select(F.from_json("json", inferred).alias("doc")).select("doc.*").write.format("noop").mode(
            "overwrite"
        ).save()

    def run(decode: Callable[..., Any]) -> Callable[[], None]:
        def action() -> None:
            decoded = decode(frame, protocol)
            for database, table in decoded.tables():
                decoded.table(database, table).write.format("noop").mode("overwrite").save()
            decoded.dead_letters().write.format("noop").mode("overwrite").save()
            release = getattr(decoded, "release", None)
            if release is not None:
                release()

        return action

    baseline()  # warm the JVM paths once before timing anything
    raw = _best_of(3, baseline)
    figures = {"driver": messages / _best_of(2, run(driver.decode))}
    if protocol == "canal-json":
        figures["native"] = messages / _best_of(2, run(lambda df, p: executor.decode(df, p, plan="native")))
    benchmark.pedantic(run(executor.decode_in_executors), rounds=2, iterations=1)  # the default plan
    figures["executor"] = messages / benchmark.stats.stats.min
    parts = [f"{name} {rate:,.0f} rows/s ({rate * raw / messages:.2f}x)" for name, rate in figures.items()]
    print(f"\n{protocol}: {messages} messages; from_json {messages / raw:,.0f} rows/s; " + "; ".join(parts))
