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

import os
from collections.abc import Iterator
from typing import Any

import pytest
from spark_timing import bench_session, kafka_frames, noop, time_decode_against

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_DECODE_COPIES", "20"))
PROTOCOLS = [p for p in ("canal-json", "debezium", "simple") if p in installed_codecs()]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-decode", driver_memory="2g") as session:
        yield session


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_decode_against_from_json(benchmark: Any, spark: Any, protocol: str) -> None:
    from pyspark.sql import functions as F

    from cdc_testing.changefeed import encode, generate

    messages = encode(generate(seed=11, transactions=TRANSACTIONS), protocol)
    one, many = kafka_frames(spark, messages, COPIES)
    values = many.select(F.col("value").cast("string").alias("json"))
    sample = [r["json"] for r in values.limit(500).collect()]
    inferred = spark.read.json(spark.sparkContext.parallelize(sample)).schema

    def baseline() -> None:
        noop(values.select(F.from_json("json", inferred).alias("doc")).select("doc.*"))

    time_decode_against(benchmark, baseline, "from_json", one=one, many=many, protocol=protocol)
