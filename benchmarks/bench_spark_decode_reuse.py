"""A streaming job's later batches: the same shapes decoded again, the typing projections and the shapes'
readers rebuilt against reused.

The input is the Canal-JSON changefeed of ``bench_spark_decode.py`` (several tables, every column type, updates,
deletes, a DDL), replicated in the JVM (``CDC_BENCH_REUSE_COPIES`` copies, default 5: about 50,000 messages).
Each batch is a whole ``decode`` of that frame with every output forced through Spark's ``noop`` sink. The
baseline decodes it with the kept projections and shapes emptied before each batch (what every batch did before
the reuse); the measured run decodes it with them kept, as a job's second and later batches with unchanged shapes
do (no projection built, no sample fetched or decoded). Printed: the driver's wall time until ``decode`` returns
(shapes job, expressions, typing job), the whole batch's, and the py4j calls of each, with the ratios of the
reused over the rebuilt batch.

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
PROTOCOL = "canal-json"

pytestmark = pytest.mark.skipif(PROTOCOL not in installed_codecs(), reason="needs cdc-canal")


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


def _batch(spark: Any, frame: Any, *, reuse: bool) -> tuple[float, float, int]:
    """One whole batch: (seconds until ``decode`` returned, seconds in all, py4j calls)."""
    from cdc_spark.decoding import decode, jvm_path

    if not reuse:
        jvm_path.TYPINGS.clear()
        jvm_path.SHAPES.clear()
    with counted_py4j_calls(spark) as calls:
        started = time.perf_counter()
        decoded = decode(frame, PROTOCOL, {})
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


def test_later_batches_reuse_the_typing(benchmark: Any, spark: Any) -> None:
    from cdc_spark.decoding import jvm_path
    from cdc_testing.changefeed import encode, generate

    _, frame = kafka_frames(spark, encode(generate(seed=11, transactions=TRANSACTIONS), PROTOCOL), COPIES)
    messages = frame.count()
    _batch(spark, frame, reuse=False)  # warm: code generation, the JIT, the cache of generated classes
    rebuilt = [_batch(spark, frame, reuse=False) for _ in range(3)]
    _batch(spark, frame, reuse=True)  # a job's batch before: what it builds is kept
    builds, shapes = jvm_path.TYPINGS.builds, jvm_path.SHAPES.builds
    reused: list[tuple[float, float, int]] = []
    benchmark.pedantic(lambda: reused.append(_batch(spark, frame, reuse=True)), rounds=3, iterations=1)
    assert jvm_path.TYPINGS.builds == builds, "a batch with the same shapes built its projections again"
    assert jvm_path.SHAPES.builds == shapes, "a batch with the same shapes described them again"

    def best(runs: list[tuple[float, float, int]], field: int) -> float:
        return min(run[field] for run in runs)

    print(
        f"\n{PROTOCOL}, {messages} messages a batch, best of 3: rebuilt: decode returned in {best(rebuilt, 0):.2f} s,"
        f" whole batch {best(rebuilt, 1):.2f} s, {best(rebuilt, 2):,.0f} py4j calls; reused: decode returned in"
        f" {best(reused, 0):.2f} s ({best(reused, 0) / best(rebuilt, 0):.2f}x), whole batch {best(reused, 1):.2f} s"
        f" ({best(reused, 1) / best(rebuilt, 1):.2f}x), {best(reused, 2):,.0f} py4j calls"
        f" ({best(reused, 2) / best(rebuilt, 2):.2f}x)"
    )
