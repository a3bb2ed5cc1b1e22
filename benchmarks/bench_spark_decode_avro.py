"""TiCDC Avro on Spark: ``decode`` plans ``jvm`` and ``python`` against a bare ``from_avro`` of the same records.

The input is the changefeed generator (three tables, an ADD COLUMN half way, updates and tombstone deletes)
written by the Avro encoder with ``enable-tidb-extension`` into a real Apicurio registry (fixture
``schema_registry``), as Kafka-shaped rows over three partitions: ``CDC_BENCH_AVRO_COPIES`` copies (default 10:
about 100,000 messages), each written an hour after the one before, so commit ts rise in every partition. The
baseline reads
each value record with spark-avro's ``from_avro`` and its writer schema (header cut off, one ``from_avro`` per
schema id): no keys, no tombstones, no typing to the contract, no dead letters. ``plan="jvm"`` produces the full
change-frame contract on the same input; ``plan="python"`` runs on one copy only (it is several times slower).
Every run forces each output through Spark's ``noop`` sink; the ratios printed are rows/s over the baseline's,
measured in the same run.

The run also times the least any decode that caches the batch once does (``floor``): every key and value record
read by ``from_avro`` into a cache kept as the decode keeps its own (``cdc_spark.batch_cache``), then each
schema's records written from it, with no routing, checks, typing, clock, control or dead letters. Its ratio
bounds what the JVM plan can reach on this input. The floor runs before each of the decode's timed rounds, so the
two take turns on a machine whose speed drifts within a run; the ratio printed is of their fastest rounds.

    nox -s bench -- benchmarks/bench_spark_decode_avro.py -s
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from spark_timing import bench_session, best_of, from_avro_baseline, kafka_runs, noop, time_decode_against

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000  # about 200 s of commits (up to 50 ms apart): a copy an hour later starts after the last
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
COPIES = int(os.environ.get("CDC_BENCH_AVRO_COPIES", "10"))

pytestmark = pytest.mark.skipif("avro" not in installed_codecs(), reason="needs cdc-avro")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-avro", driver_memory="2g") as session:
        yield session


def test_avro_decode_against_from_avro(benchmark: Any, spark: Any, schema_registry: Any) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from cdc_avro.registry import Registry, RegistrySettings
    from cdc_spark.batch_cache import persist_batch, release
    from cdc_testing.changefeed import encode, generate

    options = {"schema-registry": schema_registry.url}
    # each copy the same changefeed an hour later: every partition's commit ts rise, as TiCDC writes them (byte for
    # byte copies would go back at each copy, as a tail TiCDC sends again does, which the decode sorts for)
    runs = [
        list(encode(generate(seed=11, transactions=TRANSACTIONS, start=START + dt.timedelta(hours=copy)), "avro",
                    {**options, "enable-tidb-extension": True}))
        for copy in range(COPIES)
    ]  # fmt: skip
    one, many = kafka_runs(spark, runs, partition=lambda position, _message: position % 3)
    large = many.count()

    registry = Registry(RegistrySettings(url=schema_registry.url))

    def readers_of(part: str) -> list[tuple[bytearray, str]]:
        """Each schema id's header and writer schema among the batch's ``part`` records (key or value)."""
        header = F.substring(part, 1, 5)
        found = one.select(header.alias("h")).distinct().collect()
        ids = sorted(int.from_bytes(r["h"][1:], "big") for r in found if r["h"])
        return [(bytearray(b"\x00" + i.to_bytes(4, "big")), registry.schema(i)) for i in ids]

    def records_of(part: str, prefix: bytearray, schema: str) -> Any:
        """``part``'s records of one schema id, read where the header is that id's (null elsewhere)."""
        body = F.substring(part, 6, 1 << 30)
        return F.when(F.substring(part, 1, 5) == F.lit(prefix), from_avro(body, schema))

    values, keys = readers_of("value"), readers_of("key")

    baseline = from_avro_baseline(many, values)

    def floor() -> None:
        value_columns = [records_of("value", p, s).alias(f"v{n}") for n, (p, s) in enumerate(values)]
        key_columns = [records_of("key", p, s).alias(f"k{n}") for n, (p, s) in enumerate(keys)]
        cached = persist_batch(many.select(*value_columns, *key_columns))
        try:
            cached.select(F.count(F.lit(1))).collect()  # the one pass that fills the cache
            for n in range(len(values)):
                noop(cached.where(F.col(f"v{n}").isNotNull()).select(f"v{n}.*"))
        finally:
            release(cached)

    floors: list[float] = []

    def floor_between() -> None:
        """The floor, timed before each of the decode's timed rounds: both on the machine's state of the moment."""
        started = time.perf_counter()
        floor()
        floors.append(time.perf_counter() - started)

    floor()  # warmed as the baseline is, before the decode's rounds
    jvm_paths = time_decode_against(
        benchmark, baseline, "from_avro", one=one, many=many, protocol="avro", options=options, between=floor_between
    )
    assert jvm_paths.get("jvm", 0) > 0.9 * large, jvm_paths  # the JVM typed (nearly) every change
    least, bare = min(floors), best_of(3, baseline)
    decode = benchmark.stats.stats.min
    print(
        f"avro: floor (every record into a cache, each schema's records written from it) {large / least:,.0f} rows/s,"
        f" the fastest of {len(floors)} runs taking turns with the decode's timed rounds"
        f" ({', '.join(f'{t:.2f}' for t in floors)} s); the decode's fastest round {decode:.2f} s:"
        f" {least / decode:.2f}x of the floor; from_avro after them {large / bare:,.0f} rows/s"
        f" ({bare / least:.2f}x of the floor's time)"
    )
    many.unpersist()
    one.unpersist()
