"""A streaming job's later batches: the same shapes decoded again, what the driver builds for them rebuilt against
reused.

The input is the changefeed of ``bench_spark_decode.py`` (several tables, every column type, updates, deletes, a
DDL) in Canal-JSON, Simple and TiCDC Avro (with ``enable-tidb-extension``, its schemas in a real Apicurio registry),
replicated in the JVM (``CDC_BENCH_REUSE_COPIES`` copies, default 5: about 50,000 messages). Each batch is a whole
``decode`` of that frame with every output forced through Spark's ``noop`` sink. The baseline decodes it with every
kept expression and shape emptied before each batch (what every batch did before the reuse); the measured run decodes
it with them kept, as a job's second and later batches with unchanged shapes do (no expression built, no sample
fetched or decoded where the shape fixes its readers). Printed: the driver's wall time until ``decode`` returns
(shapes job, expressions, typing job), the whole batch's, and the py4j calls of each, with the ratios of the reused
over the rebuilt batch.

    nox -s bench -- benchmarks/bench_spark_decode_reuse.py -s
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from spark_timing import bench_session, kafka_frames, noop

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_REUSE_COPIES", "5"))
PROTOCOLS = [p for p in ("canal-json", "simple", "avro") if p in installed_codecs()]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-decode-reuse", driver_memory="2g") as session:
        yield session


@contextlib.contextmanager
def counted_py4j_calls(spark: Any) -> Iterator[list[int]]:
    """Counts the commands the driver sends to the JVM (every ``Column`` operation is one)."""
    client = spark.sparkContext._gateway._gateway_client
    original = client.send_command
    count = [0]

    def send_command(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    client.send_command = send_command
    try:
        yield count
    finally:
        del client.send_command  # the class's method again


def _kept(spark: Any) -> tuple[Any, ...]:
    """Every map of expressions and shapes the decode keeps for the next batch (the speculation of the Java row typer
    is not one: it decides how a batch is typed, not what the driver builds): the application's decoder's."""
    from cdc_spark.decoding import Decoder
    from cdc_spark.decoding.avro import prepared_columns

    decoder = Decoder.shared(spark)
    jvm = decoder.jvm
    return (jvm.typings, jvm.shapes, jvm.row_calls, jvm.change_columns, jvm.parts, prepared_columns(decoder))


def _batch(
    spark: Any, frame: Any, protocol: str, options: dict[str, Any], known: list[Any], *, reuse: bool
) -> tuple[float, float, int]:
    """One whole batch, given the schema versions of earlier batches (``known``): (seconds until ``decode``
    returned, seconds in all, py4j calls)."""
    from cdc_spark.decoding import decode

    if not reuse:
        for kept in _kept(spark):
            kept.clear()
    with counted_py4j_calls(spark) as calls:
        started = time.perf_counter()
        decoded = decode(frame, protocol, options, known_versions=known)
        returned = time.perf_counter()
        try:
            for database, table in decoded.tables():
                noop(decoded.table(database, table))
            noop(decoded.control())
            noop(decoded.dead_letters())
        finally:
            decoded.release()
        ended = time.perf_counter()
    return returned - started, ended - started, calls[0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_later_batches_reuse_the_typing(benchmark: Any, spark: Any, protocol: str, request: Any) -> None:
    from cdc_testing.changefeed import encode, generate, schema_versions

    options: dict[str, Any] = {}
    encoder: dict[str, Any] = {}
    if protocol == "avro":
        options = {"schema-registry": request.getfixturevalue("schema_registry").url}
        encoder = {**options, "enable-tidb-extension": True}
    changefeed = list(encode(generate(seed=11, transactions=TRANSACTIONS), protocol, encoder))
    _, frame = kafka_frames(spark, changefeed, COPIES)
    messages = frame.count()
    # the schema versions a stream's earlier batches brought, as `cdc_spark.job` passes them (Simple's rows name one)
    known = schema_versions(changefeed, protocol, options)

    def batch(reuse: bool) -> tuple[float, float, int]:
        return _batch(spark, frame, protocol, options, known, reuse=reuse)

    batch(False)  # warm: code generation, the JIT, the cache of generated classes
    rebuilt = [batch(False) for _ in range(3)]
    batch(True)  # a job's batch before: what it builds is kept
    builds = [k.builds for k in _kept(spark)]
    reused: list[tuple[float, float, int]] = []
    benchmark.pedantic(lambda: reused.append(batch(True)), rounds=3, iterations=1)
    assert [k.builds for k in _kept(spark)] == builds, "a batch with the same shapes built expressions or readers again"

    def best(runs: list[tuple[float, float, int]], field: int) -> float:
        return min(run[field] for run in runs)

    print(
        f"\n{protocol}, {messages} messages a batch, best of 3: rebuilt: decode returned in {best(rebuilt, 0):.2f} s,"
        f" whole batch {best(rebuilt, 1):.2f} s, {best(rebuilt, 2):,.0f} py4j calls; reused: decode returned in"
        f" {best(reused, 0):.2f} s ({best(reused, 0) / best(rebuilt, 0):.2f}x), whole batch {best(reused, 1):.2f} s"
        f" ({best(reused, 1) / best(rebuilt, 1):.2f}x), {best(reused, 2):,.0f} py4j calls"
        f" ({best(reused, 2) / best(rebuilt, 2):.2f}x)"
    )
