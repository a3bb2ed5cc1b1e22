"""What one pass over each message in the JVM costs, against Spark's own ``from_json`` on the same column, same run.

``java/OnePassCanalJson.java`` (compiled here with ``javac`` against the running Spark's jars) parses a Canal-JSON
message with Jackson's streaming parser and types every value by its column's ``mysqlType``: the cost floor of a
decoder that parses and types in one pass, as ``cdc_spark.decode`` does in two (a parse the batch is cached as, then
the typing over that cache). It is not a decoder (none of the codecs' rules): the figure says how far that design
can go. The input is ``bench_spark_decode.py``'s (``CDC_BENCH_DECODE_COPIES`` copies of a realistic changefeed).

    nox -s bench -- benchmarks/bench_java_one_pass.py -s
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_timing import bench_session, best_of, kafka_frames, noop

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_DECODE_COPIES", "20"))
SOURCE = Path(__file__).parent / "java" / "OnePassCanalJson.java"
TYPED = (
    "database string, table string, type string, ts bigint, rows int, bad int, integers array<bigint>,"
    " decimals array<decimal(38,10)>, doubles array<double>, texts array<string>, dates array<date>,"
    " datetimes array<timestamp_ntz>"
)


def _jar(into: Path) -> Path:
    """The probe compiled against the Spark jars pyspark ships (the running Spark's own), as a jar in ``into``."""
    import pyspark

    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac (a JDK) is needed to compile the probe")
    classes = into / "classes"
    spark_jars = Path(pyspark.__file__).parent / "jars"
    subprocess.run([javac, "-cp", f"{spark_jars}/*", "-d", str(classes), str(SOURCE)], check=True)
    jar = into / "one-pass.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for compiled in classes.rglob("*.class"):
            archive.write(compiled, compiled.relative_to(classes).as_posix())
    return jar


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    jar = _jar(tmp_path_factory.mktemp("one-pass"))
    with bench_session("bench-one-pass", driver_memory="2g") as session:
        session.sql(f"ADD JAR '{jar}'")  # the executors' class path, and the driver's for the registration
        session.udf.registerJavaFunction("one_pass_canal_json", "cdc.bench.OnePassCanalJson", TYPED)
        yield session


def test_one_pass_against_from_json(benchmark: Any, spark: Any) -> None:
    from pyspark.sql import functions as F

    from cdc_testing.changefeed import encode, generate

    _, many = kafka_frames(spark, encode(generate(seed=11, transactions=TRANSACTIONS), "canal-json"), COPIES)
    values = many.select(F.col("value").cast("string").alias("json"))
    sample = [r["json"] for r in values.limit(500).collect()]
    inferred = spark.read.json(spark.sparkContext.parallelize(sample)).schema

    def baseline() -> None:
        noop(values.select(F.from_json("json", inferred).alias("doc")).select("doc.*"))

    def one_pass() -> None:
        noop(values.select(F.call_udf("one_pass_canal_json", F.col("json")).alias("doc")).select("doc.*"))

    typed = values.select(F.call_udf("one_pass_canal_json", F.col("json")).alias("doc"))
    assert typed.where(F.col("doc.bad") > 0).count() < typed.count()  # it typed values, not only failed to
    large = many.count()
    baseline()  # warm the JVM paths once before timing anything
    raw = large / best_of(3, baseline)
    benchmark.pedantic(one_pass, rounds=3, iterations=1, warmup_rounds=1)
    single = large / benchmark.stats.stats.min
    print(
        f"\ncanal-json: from_json {raw:,.0f} rows/s, one pass in Java {single:,.0f} rows/s"
        f" ({single / raw:.2f}x; {large} messages)"
    )
