"""What the Spark benchmarks share: their session, the Kafka-shaped input replicated in the JVM, and how
``decode`` is timed against a bare Spark baseline on the same input in the same run.

Every output is forced through Spark's ``noop`` sink, so a run computes every column without collecting
anything to the driver.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cdc_core.message import Message

# The one ingest time of every benchmark row (the timestamp column of Spark's Kafka source).
STAMP = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


@contextlib.contextmanager
def bench_session(app_name: str, driver_memory: str) -> Iterator[Any]:
    """A ``local[2]`` session for one benchmark module; stopped at the end unless one was already active."""
    from pyspark.sql import SparkSession

    from cdc_spark.session import build_session

    owned = SparkSession.getActiveSession() is None
    # local mode runs the executors in the driver's heap: a 10^6-message run needs more than the default
    conf = {"spark.driver.memory": os.environ.get("CDC_BENCH_DRIVER_MEMORY", driver_memory)}
    # a setting to compare against the session's own, e.g. CDC_BENCH_SPARK_CONF="spark.buffer.pageSize=64m"
    for setting in filter(None, os.environ.get("CDC_BENCH_SPARK_CONF", "").split(";")):
        key, _, value = setting.partition("=")
        conf[key.strip()] = value.strip()
    session = build_session("local[2]", app_name=app_name, conf=conf, log_level="ERROR")
    try:
        yield session
    finally:
        if owned:
            session.stop()


def own_partition(_position: int, message: Message) -> int:
    """The partition the encoder chose (0 when it chose none), of three."""
    return (message.partition or 0) % 3


def _source_frame(spark: Any, messages: Iterable[Message], partition: Callable[[int, Message], int]) -> Any:
    """``messages`` as the rows of Spark's Kafka source (topic ``bench``, offset the position), cached in offset
    order: two ranges, for the two cores, as the Kafka source reads them."""
    from cdc_spark.source.columns import KAFKA_COLUMNS

    rows = [(m.key, m.value, "bench", partition(i, m), i, STAMP, 0, None) for i, m in enumerate(messages)]
    return _in_offset_order(spark.createDataFrame(rows, KAFKA_COLUMNS))


def _in_offset_order(frame: Any) -> Any:
    coordinates = ("topic", "partition", "offset")
    return frame.repartitionByRange(2, *coordinates).sortWithinPartitions(*coordinates).cache()


def kafka_frames(
    spark: Any, messages: Iterable[Message], copies: int, partition: Callable[[int, Message], int] = own_partition
) -> tuple[Any, Any]:
    """``messages`` as the rows of Spark's Kafka source (topic ``bench``, ``partition(position, message)``,
    offset the position), and ``copies`` copies of them with distinct offsets; both cached. As the Kafka source
    reads them, each Spark partition holds ranges of offsets in offset order: two, for the two cores (a
    topic-partition is split between them, as the source's ``minPartitions`` splits one)."""
    from pyspark.sql import functions as F

    one = _source_frame(spark, messages, partition)
    copy = spark.range(copies).withColumnRenamed("id", "copy")
    offset = F.col("copy") * one.count() + F.col("offset")
    many = _in_offset_order(one.crossJoin(copy).withColumn("offset", offset).drop("copy"))
    return one, many


def kafka_runs(
    spark: Any, runs: Sequence[Sequence[Message]], partition: Callable[[int, Message], int] = own_partition
) -> tuple[Any, Any]:
    """As :func:`kafka_frames`, but the copies are ``runs`` (each its own messages, in the order a producer sent
    them): ``one`` the first, ``many`` all of them one after another, offset their position among them."""
    return _source_frame(spark, runs[0], partition), _source_frame(spark, [m for run in runs for m in run], partition)


def noop(frame: Any) -> None:
    frame.write.format("noop").mode("overwrite").save()


def value_schemas(one: Any, registry: Any) -> list[tuple[bytearray, str]]:
    """Each schema id's Confluent header and writer schema among the value records of ``one``."""
    from pyspark.sql import functions as F

    found = one.select(F.substring("value", 1, 5).alias("h")).distinct().collect()
    ids = sorted(int.from_bytes(r["h"][1:], "big") for r in found if r["h"])
    return [(bytearray(b"\x00" + i.to_bytes(4, "big")), registry.schema(i)) for i in ids]


def from_avro_baseline(many: Any, values: list[tuple[bytearray, str]]) -> Callable[[], None]:
    """A bare ``from_avro`` of ``many``'s value records, one per schema id (header cut off), each written to
    ``noop``: no keys, no typing, no dead letters."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    def baseline() -> None:
        for prefix, schema in values:
            body = F.substring("value", 6, 1 << 30)
            records = many.where(F.substring("value", 1, 5) == F.lit(prefix)).select(from_avro(body, schema).alias("r"))
            noop(records.select("r.*"))

    return baseline


# The decode's timed rounds after its warm-up (pytest-benchmark's figure is the fastest)
TIMED_ROUNDS = 5

# The most warm-up rounds a decode gets before it is timed (see warm_up)
WARMUP_MOST = int(os.environ.get("CDC_BENCH_WARMUP_MOST", "10"))


def warm_up(action: Callable[[], None], *, least: int = 2, most: int = WARMUP_MOST) -> list[float]:
    """Run ``action`` until it stops getting faster, and return the times: at least ``least`` runs, then until two
    runs in a row are each not 5 % faster than the fastest before them, at most ``most``. The JIT compiles a
    decode's code over many rows and in tiers: at 10^5 messages a round, one round that gained nothing was followed
    by three that cut the shapes' step from 0.90 s to 0.61 s (TiCDC Avro, 2026-12-05), so one flat round is a step
    between tiers, not the end of the warm-up."""
    times: list[float] = []
    flat = 0  # runs in a row not 5 % faster than the fastest before them
    while len(times) < most:
        started = time.perf_counter()
        action()
        took = time.perf_counter() - started
        flat = flat + 1 if times and took > 0.95 * min(times) else 0
        times.append(took)
        if len(times) >= least and flat >= 2:
            break
    return times


def best_of(runs: int, action: Callable[[], None]) -> float:
    """The shortest of ``runs`` timed calls, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def decode_everything(
    frame: Any,
    protocol: str,
    options: dict[str, Any],
    plan: str,
    *,
    paths: dict[str, int],
    steps: list[dict[str, float]],
) -> None:
    """``decode`` with ``plan``, every table, the control frame and the dead letters through the noop sink;
    ``paths`` gets the decode's count of changes per path (typed in the JVM, through the codec), ``steps`` one
    entry per run: the decode's steps (``DecodedChanges.steps``) and ``outputs``, the time writing them took."""
    from cdc_spark.decoding import decode

    decoded = decode(frame, protocol, options, plan=plan)
    try:
        started = time.perf_counter()
        for database, table in decoded.tables():
            noop(decoded.table(database, table))
        noop(decoded.control())
        noop(decoded.dead_letters())
        paths.update(decoded.paths)
        steps.append({**decoded.steps, "outputs": time.perf_counter() - started})
    finally:
        decoded.release()


def time_decode_against(
    benchmark: Any,
    baseline: Callable[[], None],
    baseline_name: str,
    *,
    one: Any,
    many: Any,
    protocol: str,
    options: dict[str, Any] | None = None,
    between: Callable[[], None] | None = None,
) -> dict[str, int]:
    """Rows/s of ``baseline`` on ``many`` (the best of 3 before the decode's rounds, one before each timed round and
    3 after them), of ``decode`` plan ``python`` on ``one`` (it is several times slower) and plan ``jvm`` on
    ``many`` (pytest-benchmark's figure, best of :data:`TIMED_ROUNDS` after warm-up rounds until it stops getting
    faster, :func:`warm_up`, whose times are printed too); prints them and the ratios, returns the jvm run's
    changes per path. ``between`` runs before each timed round too, after the baseline, untimed by
    pytest-benchmark: a bench times its own reference there. References and decode take turns, so a machine whose
    speed drifts within a run slows both alike."""
    small, large = one.count(), many.count()

    steps: list[dict[str, float]] = []

    def run(frame: Any, plan: str, paths: dict[str, int]) -> Callable[[], None]:
        return lambda: decode_everything(frame, protocol, options or {}, plan, paths=paths, steps=steps)

    baseline()  # warm the JVM paths once before timing anything
    bare = best_of(3, baseline)
    python_paths: dict[str, int] = {}
    python = small / best_of(1, run(one, "python", python_paths))
    jvm_paths: dict[str, int] = {}
    # Warm-up rounds first (at least two): the JIT compiles the typing's generated code in the first batch of a job,
    # and a Java row typer's second batch is the first typed in its shapes' pass (another plan, compiled in its
    # turn); every later batch of a stream runs both compiled. The warm-up rounds' times are printed with the timed
    # ones, and the baseline is timed again after them, as warm as the decode.
    from cdc_spark.decoding import Decoder

    planned = Decoder.shared(many.sparkSession).jvm  # what the jvm rounds planned, counted by the decoder they use
    speculated = dict(planned.speculated)
    clocks = dict(planned.running_clocks)
    warm = warm_up(run(many, "jvm", jvm_paths))
    bare_between: list[float] = []

    def turn() -> None:
        """Before each timed round: the baseline timed (it and the decode take turns), then ``between``."""
        bare_between.append(best_of(1, baseline))
        if between is not None:
            between()

    benchmark.pedantic(run(many, "jvm", jvm_paths), setup=turn, rounds=TIMED_ROUNDS, iterations=1)
    bare_after = best_of(3, baseline)
    raw = large / min(bare, *bare_between, bare_after)
    # how the running clock of changes without a commit ts was read: by the tasks as they read, or sorted
    running = {k: v - clocks.get(k, 0) for k, v in planned.running_clocks.items() if v != clocks.get(k, 0)}
    # how each round was typed: in its shapes' pass (typed), again after a miss (retyped), or unspeculated
    ways = {k: v - speculated.get(k, 0) for k, v in planned.speculated.items() if v != speculated.get(k, 0)}
    jvm = large / benchmark.stats.stats.min
    timed = steps[-TIMED_ROUNDS:]  # the timed rounds' steps, the warm-ups' before them
    fastest = min(timed, key=lambda s: sum(s.values()))
    rounds = [{k: round(v, 2) for k, v in s.items()} for s in steps[-(len(warm) + TIMED_ROUNDS) :]]
    print(
        f"\n{protocol}: {baseline_name} {raw:,.0f} rows/s ({large} messages; best of 3 before the decode"
        f" {large / bare:,.0f}, of {len(bare_between)} taking turns with its timed rounds"
        f" {large / min(bare_between):,.0f}, of 3 after it {large / bare_after:,.0f});"
        f" jvm {jvm:,.0f} rows/s ({jvm / raw:.2f}x; typed in the JVM {jvm_paths.get('jvm', 0)},"
        f" through the codec {jvm_paths.get('codec', 0)});"
        f" python {python:,.0f} rows/s ({python / raw:.2f}x, {small} messages)"
        f"\n{protocol}: the fastest jvm round's steps: {', '.join(f'{k} {v:.2f} s' for k, v in fastest.items())}"
        f"\n{protocol}: every jvm round's steps, {len(warm)} warm-ups first: {rounds};"
        f" typed in the shapes' pass {ways or 'never'}; running clock {running or 'not needed'}"
    )
    return jvm_paths
