"""TiCDC Avro on Spark: ``decode`` plans ``jvm`` and ``python`` against a bare ``from_avro`` of the same records.

The input is the changefeed generator (three tables, an ADD COLUMN half way, updates and tombstone deletes)
written by the Avro encoder with ``enable-tidb-extension`` into a real Apicurio registry (fixture
``schema_registry``), as Kafka-shaped rows over three partitions, then replicated in the JVM
(``CDC_BENCH_AVRO_COPIES`` copies, default 10: about 100,000 messages) with distinct offsets. The baseline reads
each value record with spark-avro's ``from_avro`` and its writer schema (header cut off, one ``from_avro`` per
schema id): no keys, no tombstones, no typing to the contract, no dead letters. ``plan="jvm"`` produces the full
change-frame contract on the same input; ``plan="python"`` runs on one copy only (it is several times slower).
Every run forces each output through Spark's ``noop`` sink; the ratios printed are rows/s over the baseline's,
measured in the same run.

    nox -s bench -- benchmarks/bench_spark_decode_avro.py -s
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
COPIES = int(os.environ.get("CDC_BENCH_AVRO_COPIES", "10"))

pytestmark = pytest.mark.skipif("avro" not in installed_codecs(), reason="needs cdc-avro")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    from cdc_spark.session import build_session

    owned = SparkSession.getActiveSession() is None
    session = build_session("local[2]", app_name="bench-avro", conf={"spark.driver.memory": "2g"}, log_level="ERROR")
    yield session
    if owned:
        session.stop()


def _best_of(runs: int, action: Callable[[], None]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def _noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def test_avro_decode_against_from_avro(benchmark: Any, spark: Any, schema_registry: Any) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from cdc_avro.registry import Registry, RegistrySettings
    from cdc_spark.decoding import decode
    from cdc_spark.source.columns import KAFKA_COLUMNS
    from cdc_testing.changefeed import encode, generate

    options = {"schema-registry": schema_registry.url}
    changefeed = generate(seed=11, transactions=TRANSACTIONS)
    messages = list(encode(changefeed, "avro", {**options, "enable-tidb-extension": True}))
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "bench", i % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
    one = spark.createDataFrame(rows, KAFKA_COLUMNS).repartition(2).cache()
    copies = spark.range(COPIES).withColumnRenamed("id", "copy")
    offset = F.col("copy") * len(rows) + F.col("offset")
    many = one.crossJoin(copies).withColumn("offset", offset).drop("copy").repartition(2).cache()
    small, large = one.count(), many.count()

    registry = Registry(RegistrySettings(url=schema_registry.url))
    header = F.substring("value", 1, 5)
    ids = sorted(
        int.from_bytes(r["h"][1:], "big") for r in one.select(header.alias("h")).distinct().collect() if r["h"]
    )
    readers = [(bytearray(b"\x00" + i.to_bytes(4, "big")), registry.schema(i)) for i in ids]

    def baseline() -> None:
        for prefix, schema in readers:
            body = F.substring("value", 6, 1 << 30)
            records = many.where(header == F.lit(prefix)).select(from_avro(body, schema).alias("r"))
            _noop(records.select("r.*"))

    def run(frame: Any, plan: str, paths: dict[str, int]) -> Callable[[], None]:
        def action() -> None:
            decoded = decode(frame, "avro", options, plan=plan)
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
    assert jvm_paths.get("jvm", 0) > 0.9 * large, jvm_paths  # the JVM typed (nearly) every change
    print(
        f"\navro: from_avro {raw:,.0f} rows/s ({large} messages);"
        f" jvm {jvm:,.0f} rows/s ({jvm / raw:.2f}x; typed in the JVM {jvm_paths.get('jvm', 0)},"
        f" through the codec {jvm_paths.get('codec', 0)});"
        f" python {python:,.0f} rows/s ({python / raw:.2f}x, {small} messages)"
    )
    many.unpersist()
    one.unpersist()
