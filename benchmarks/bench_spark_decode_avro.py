"""TiCDC Avro on Spark: decode plan ``jvm`` and plan ``python`` against a bare ``from_avro`` of the same records.

The input is the project's changefeed generator (three tables, an ADD COLUMN half way, updates and tombstone
deletes) written by the Avro encoder with ``enable-tidb-extension`` into a real Apicurio registry (fixture
``schema_registry``), as Kafka-shaped rows over three partitions. The baseline reads each value record with
spark-avro's ``from_avro`` and its writer schema (header cut off, one ``from_avro`` per schema id; no keys, no
tombstones, no typing to the contract, no dead letters). The plans produce the full change-frame contract. Every run
forces each output through Spark's ``noop`` sink; the ratios printed are each plan's rows/s over the baseline's,
measured in the same run.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc_core.registry import installed_codecs

TRANSACTIONS = 10_000

pytestmark = pytest.mark.skipif("avro" not in installed_codecs(), reason="needs cdc-avro")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from cdc_spark.session import build_session

    with tempfile.TemporaryDirectory(prefix="cdc-bench-") as scratch:
        session = build_session(
            "local[2]",
            app_name="cdc-bench-avro",
            conf={"spark.sql.warehouse.dir": scratch, "spark.sql.shuffle.partitions": "2"},
            log_level="ERROR",
        )
        yield session
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
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS).repartition(2).cache()
    count = frame.count()

    registry = Registry(RegistrySettings(url=schema_registry.url))
    header = F.substring("value", 1, 5)
    ids = sorted(
        int.from_bytes(r["h"][1:], "big") for r in frame.select(header.alias("h")).distinct().collect() if r["h"]
    )
    readers = [(bytearray(b"\x00" + i.to_bytes(4, "big")), registry.schema(i)) for i in ids]

    def baseline() -> None:
        for prefix, schema in readers:
            body = F.substring("value", 6, 1 << 30)
            records = frame.where(header == F.lit(prefix)).select(from_avro(body, schema).alias("r"))
            _noop(records.select("r.*"))

    def plan(name: str) -> Callable[[], None]:
        def action() -> None:
            decoded = decode(frame, "avro", options, plan=name)
            try:
                for database, table in decoded.tables():
                    _noop(decoded.table(database, table))
                _noop(decoded.dead_letters())
                assert name != "jvm" or decoded.paths["jvm"] > 0.9 * count, decoded.paths
            finally:
                decoded.release()

        return action

    baseline()  # warm the JVM paths once before timing anything
    plan("jvm")()
    raw = _best_of(3, baseline)
    figures = {"python": count / _best_of(1, plan("python"))}
    benchmark.pedantic(plan("jvm"), rounds=3, iterations=1)
    figures["jvm"] = count / benchmark.stats.stats.min
    parts = [f"plan {name} {rate:,.0f} rows/s ({rate * raw / count:.2f}x)" for name, rate in figures.items()]
    print(f"\navro: {count} messages; from_avro {count / raw:,.0f} rows/s; " + "; ".join(parts))
