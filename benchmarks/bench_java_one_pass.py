"""What passes over each message in the JVM cost, against Spark's own ``from_json`` on the same column, same run.

Two Java UDFs in ``java/`` (compiled here with ``javac`` against the running Spark's jars) stand for the passes of a
decoder of the project's own: ``OnePassCanalJson`` parses a Canal-JSON message with Jackson's streaming parser and
types every value by its column's ``mysqlType``; ``ShapePassCanalJson`` reads only what a shape is (table, type maps,
key names) and skips the rows. ``cdc_spark.decode`` does both in Spark SQL today: a parse the batch is cached as,
whose aggregate finds the shapes, then the typing over that cache. Neither UDF is a decoder (none of the codecs'
rules): the figures say how far that design can go. The shape pass is also timed with ``from_json`` and a schema of
the envelope without its rows. The input is ``bench_spark_decode.py``'s (``CDC_BENCH_DECODE_COPIES`` copies of a
realistic changefeed).

    nox -s bench -- benchmarks/bench_java_one_pass.py -s
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from java_probes import probe_jar
from spark_timing import bench_session, best_of, kafka_frames, noop

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_DECODE_COPIES", "20"))
SOURCES = Path(__file__).parent / "java"
TYPED = (
    "database string, table string, type string, ts bigint, rows int, bad int, integers array<bigint>,"
    " decimals array<decimal(38,10)>, doubles array<double>, texts array<string>, dates array<date>,"
    " datetimes array<timestamp_ntz>"
)
SHAPED = "database string, table string, type string, ts bigint, shape bigint"
# Canal-JSON's envelope without its rows: what the SQL shape pass parses
LEAN = (
    "database string, table string, type string, isDdl boolean, ts bigint, pkNames array<string>,"
    " mysqlType map<string,string>, sqlType map<string,int>, _tidb struct<commitTs:decimal(20,0)>"
)


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    jar = probe_jar(SOURCES, tmp_path_factory.mktemp("one-pass"), "one-pass.jar")
    with bench_session("bench-one-pass", driver_memory="2g") as session:
        session.sql(f"ADD JAR '{jar}'")  # the executors' class path, and the driver's for the registration
        session.udf.registerJavaFunction("one_pass_canal_json", "cdc.bench.OnePassCanalJson", TYPED)
        session.udf.registerJavaFunction("shape_pass_canal_json", "cdc.bench.ShapePassCanalJson", SHAPED)
        yield session


@pytest.fixture(scope="module")
def values(spark: Any) -> Any:
    """The benchmark's messages: their value column as text (``json``), cached."""
    from pyspark.sql import functions as F

    from cdc_testing.changefeed import encode, generate

    _, many = kafka_frames(spark, encode(generate(seed=11, transactions=TRANSACTIONS), "canal-json"), COPIES)
    return many.select(F.col("value").cast("string").alias("json")).cache()


def _from_json_rows_per_second(spark: Any, values: Any) -> float:
    """``from_json`` with a schema inferred from the messages, as ``bench_spark_decode.py``'s baseline (best of 3)."""
    from pyspark.sql import functions as F

    sample = [r["json"] for r in values.limit(500).collect()]
    inferred = spark.read.json(spark.sparkContext.parallelize(sample)).schema

    def baseline() -> None:
        noop(values.select(F.from_json("json", inferred).alias("doc")).select("doc.*"))

    baseline()  # warm the JVM paths once before timing anything
    return float(values.count()) / best_of(3, baseline)


def test_one_pass_against_from_json(benchmark: Any, spark: Any, values: Any) -> None:
    from pyspark.sql import functions as F

    def one_pass() -> None:
        noop(values.select(F.call_udf("one_pass_canal_json", F.col("json")).alias("doc")).select("doc.*"))

    typed = values.select(F.call_udf("one_pass_canal_json", F.col("json")).alias("doc"))
    assert typed.where(F.col("doc.bad") > 0).count() < typed.count()  # it typed values, not only failed to
    large = values.count()
    raw = _from_json_rows_per_second(spark, values)
    benchmark.pedantic(one_pass, rounds=3, iterations=1, warmup_rounds=1)
    single = large / benchmark.stats.stats.min
    print(
        f"\ncanal-json: from_json {raw:,.0f} rows/s, one pass in Java {single:,.0f} rows/s"
        f" ({single / raw:.2f}x; {large} messages)"
    )


def test_shape_pass_against_from_json(benchmark: Any, spark: Any, values: Any) -> None:
    """Each shape pass ends in the aggregate that finds the shapes and their newest commit ts."""
    from pyspark.sql import functions as F

    from cdc_spark.decoding.canal import _shape_digest

    def in_sql() -> None:
        doc = F.col("doc")
        types, codes = doc["mysqlType"], doc["sqlType"]
        shape = _shape_digest(
            F.map_keys(types), F.map_values(types), F.map_keys(codes), F.map_values(codes), doc["pkNames"]
        )
        parsed = values.select(F.from_json("json", LEAN).alias("doc"))
        parsed.groupBy(doc["database"], doc["table"], shape).agg(F.max(doc["ts"])).collect()

    def in_java() -> None:
        doc = F.col("doc")
        shaped = values.select(F.call_udf("shape_pass_canal_json", F.col("json")).alias("doc"))
        shaped.groupBy(doc["database"], doc["table"], doc["shape"]).agg(F.max(doc["ts"])).collect()

    shaped = values.select(F.call_udf("shape_pass_canal_json", F.col("json")).alias("doc"))
    assert shaped.select("doc.shape").distinct().count() >= 3  # three tables, each with a shape at least

    large = values.count()
    raw = _from_json_rows_per_second(spark, values)
    in_sql()
    sql = large / best_of(3, in_sql)
    benchmark.pedantic(in_java, rounds=3, iterations=1, warmup_rounds=1)
    java = large / benchmark.stats.stats.min
    print(
        f"\ncanal-json: from_json {raw:,.0f} rows/s; shape pass in SQL (the envelope without rows) {sql:,.0f} rows/s"
        f" ({sql / raw:.2f}x), in Java {java:,.0f} rows/s ({java / raw:.2f}x; {large} messages)"
    )
