"""What a micro-batch costs per table: ``cdc apply``'s batch of T tables against two plain Spark loops over the same
tables, measured in the same session.

The changefeed is Canal-JSON over the 20-column mixed row of ``workload.py`` (JSON, TIME, SET, BIT, ENUM, binary,
unsigned...), spread over T tables with the same total of changes. Batch 0 inserts every key (it creates the
tables, not timed); each later batch changes them: 70 % updates, 10 % deletes, 20 % inserts of new keys, each
table's changes interleaved with the others' in commit order as a changefeed delivers them. Every later batch is
a round: ``cdc apply``, then the two plain loops, on the same batch; the last round is the figure (the JVM's JIT
compiler keeps working for minutes, so the three are compared equally warm).

* ``cdc apply``: the job's batch function (:class:`cdc_spark.job.BatchProcessor`, the code ``cdc apply`` runs per
  micro-batch): decode, then every table applied with its state; the default ``table-parallelism``;
* the bare-MERGE loop: one plain Delta ``MERGE INTO`` per table, one after the other, of the same changes already
  decoded and cached (its input costs it nothing): delete, update every column, insert; no sequence check, no
  state, no partial updates;
* a plain Delta append of the same rows, per table, one after the other.

Printed per T (``CDC_BENCH_ROUNDS`` rounds, default 3): seconds per table-batch of each in the last round, and
``cdc apply``'s time as a ratio of the bare-MERGE loop's (goal at T = 50: 0.5x or less); with the batch's Spark
jobs and where its time went (decode, apply). Then the small batches: micro-batches of about 100 messages over 3
tables, each batch's seconds after the first (goal: 2 s). Then batches of new rows only (``CDC_BENCH_NEW_ROW_TABLES``
tables, default 10), which ``cdc apply`` appends instead of MERGEing. ``CDC_BENCH_TABLE_FORMAT=iceberg`` has
``cdc apply`` write Iceberg tables; ``CDC_BENCH_SMALL_BATCHES`` (default 6, at least 2) sets how many small batches run.

    nox -s bench -- benchmarks/bench_spark_apply_tables.py -s
    CDC_BENCH_TABLES=1,10,50 CDC_BENCH_TABLE_CHANGES=5000 nox -s bench -- benchmarks/bench_spark_apply_tables.py -s
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pytest
from spark_timing import bench_session, kafka_frames
from workload import ROW, SCHEMA

from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.tso import compose
from cdc_spark.session_conf import temporary_views
from cdc_testing.spark_plans import compiled_classes

COUNTS = [int(t) for t in os.environ.get("CDC_BENCH_TABLES", "1,10,50,200").split(",")]
NEW_ROW_TABLES = int(os.environ.get("CDC_BENCH_NEW_ROW_TABLES", "10"))  # the batches of new rows only
TOTAL = int(os.environ.get("CDC_BENCH_TABLE_CHANGES", "10000"))
ROUNDS = int(os.environ.get("CDC_BENCH_ROUNDS", "3"))  # measured batches after the one that creates the tables
SMALL_BATCHES = max(2, int(os.environ.get("CDC_BENCH_SMALL_BATCHES", "6")))  # a first batch and a later one
# the table format cdc apply writes (the plain loops' tables are Delta's whatever it is)
TABLE_FORMAT = os.environ.get("CDC_BENCH_TABLE_FORMAT", "delta")
# the encoder's: TiCDC's extension fields in the messages, which the decoder reads without being told
ENCODER_OPTIONS = {"enable-tidb-extension": "true"}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-apply-tables", driver_memory="4g") as session:
        yield session


def _row(rng: random.Random, key: int, generation: int) -> dict[str, Any]:
    return {
        **ROW,
        "id": key,
        "name": f"name-{key}-{generation}",
        "balance": Decimal(rng.randint(0, 10**8)) / 100,
        "score": rng.random(),
        "counter": rng.randint(0, 4_000_000_000),
    }


def changefeed(tables: int, per_table: int, generation: int, seed: int = 7, new_rows: bool = False) -> list[Message]:
    """Generation 0 inserts keys 0..per_table-1 of every table; later ones update 70 %, delete 10 % and insert
    20 % new keys (``new_rows``: only insert new keys); the tables' changes interleaved in commit order."""
    rng = random.Random(seed + generation)
    encoder = get_codec("canal-json").encoder(ENCODER_OPTIONS)
    base = 1_709_280_000_000 + generation * 10_000_000
    messages: list[Message] = []
    for n in range(per_table):
        for index in range(tables):
            schema = attrs.evolve(SCHEMA, table=f"t{index:03d}", table_id=1000 + index)
            key, draw = n, rng.random() if generation else 1.0
            if generation == 0:
                op, before, after = Op.INSERT, None, _row(rng, key, 0)
            elif draw < 0.1 and not new_rows:
                op, before, after = Op.DELETE, _row(rng, key, generation - 1), None
            elif draw < 0.3 or new_rows:
                key = per_table * generation + n
                op, before, after = Op.INSERT, None, _row(rng, key, generation)
            else:
                op, before, after = Op.UPDATE, _row(rng, key, generation - 1), _row(rng, key, generation)
            event = RowChange(
                op=op,
                database="shop",
                table=schema.table,
                before=before,
                after=after,
                commit_ts=compose(base + n * tables + index),
                table_id=schema.table_id,
                schema_version=schema.version,
                schema=schema,
            )
            messages.extend(encoder.encode(event))
    return messages


def frames(spark: Any, tables: int, generations: int, new_rows: bool = False) -> list[Any]:
    """Each generation as the rows of Spark's Kafka source, offsets following on, cached."""
    from pyspark.sql import functions as F

    result, offset = [], 0
    for generation in range(generations):
        messages = changefeed(tables, max(1, TOTAL // tables), generation, new_rows=new_rows)
        _, many = kafka_frames(spark, messages, 1)
        frame = many.withColumn("offset", F.col("offset") + offset).cache()
        frame.count()
        result.append(frame)
        offset += len(messages)
    return result


def jobs_of(spark: Any, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


@attrs.define
class CdcRun:
    """Batches through the job's batch function (:class:`cdc_spark.job.BatchProcessor`), one after the other."""

    spark: Any
    root: Path
    processor: Any = None
    reports: list[Any] = attrs.field(factory=list)
    compiled: list[int] = attrs.field(factory=list)  # classes Spark's code generator compiled, per batch

    def __attrs_post_init__(self) -> None:
        from cdc_spark.job import BatchProcessor, JobConfig, SourceSpec, make_sink

        config = JobConfig(
            protocol="canal-json",
            source=SourceSpec(kind="file", location=str(self.root / "in")),
            target=str(self.root / "cdc"),
            checkpoint=str(self.root / "checkpoint"),
            options={"table-format": TABLE_FORMAT},
        )
        sink = make_sink(self.spark, config)
        self.processor = BatchProcessor(config=config, sink=sink, progress=self.reports.append)

    def batch(self, frame: Any, batch_id: int) -> tuple[float, int, Any]:
        """One batch: (seconds, Spark jobs, report)."""
        group = f"cdc-{self.root.name}-{batch_id}"
        self.spark.sparkContext.setJobGroup(group, "cdc apply batch")
        before = compiled_classes(self.spark)
        started = time.perf_counter()
        self.processor(frame, batch_id)
        seconds = time.perf_counter() - started
        self.compiled.append(compiled_classes(self.spark) - before)
        return seconds, jobs_of(self.spark, group), self.reports[-1]


def cdc_batches(spark: Any, root: Path, batches: list[Any]) -> tuple[list[tuple[float, int, Any]], list[int]]:
    """Each batch through the job's batch function: (seconds, Spark jobs, report), and the classes each compiled."""
    run = CdcRun(spark, root)
    return [run.batch(frame, batch_id) for batch_id, frame in enumerate(batches)], run.compiled


def plain_tables(frame: Any) -> list[tuple[str, Any]]:
    """A batch decoded, per table, in the columns the tables store; cached (the plain loops' input costs them
    nothing)."""
    from cdc_spark.decoding import decode
    from cdc_spark.merge.batch import storable

    decoded = decode(frame, "canal-json", {})
    typed = {}
    for database, table in decoded.tables():
        changes = decoded.table(database, table)
        typed[f"{database}/{table}"] = storable(changes, tuple(changes.columns)).cache()
        typed[f"{database}/{table}"].count()
    return sorted(typed.items())


def plain_create(root: Path, tables: list[tuple[str, Any]]) -> None:
    """The plain loops' tables, from the first batch."""
    for name, changes in tables:
        columns = [c for c in changes.columns if not c.startswith("_cdc_")]
        for kind in ("merged", "appended"):
            changes.where("_cdc_op != 'delete'").select(*columns).write.format("delta").save(str(root / kind / name))


def bare_merges(spark: Any, root: Path, tables: list[tuple[str, Any]]) -> float:
    """Seconds of one bare Delta MERGE per table, one after the other."""
    started = time.perf_counter()
    for name, changes in tables:
        columns = [f"`{c}`" for c in changes.columns if not c.startswith("_cdc_")]
        # a view of its own, dropped without uncaching: replacing one view by the next table's would free the cache
        # of the table before, which the append loop then reads
        with temporary_views(spark, changes, prefix="bench_changes") as (view,):
            spark.sql(
                f"MERGE INTO delta.`{root / 'merged' / name}` t USING {view} s ON t.id = s.id"
                " WHEN MATCHED AND s._cdc_op = 'delete' THEN DELETE"
                f" WHEN MATCHED THEN UPDATE SET {', '.join(f't.{c} = s.{c}' for c in columns[1:])}"
                f" WHEN NOT MATCHED AND s._cdc_op <> 'delete' THEN INSERT ({', '.join(columns)})"
                f" VALUES ({', '.join(f's.{c}' for c in columns)})"
            )
    return time.perf_counter() - started


def plain_appends(root: Path, tables: list[tuple[str, Any]]) -> float:
    """Seconds of one plain Delta append per table, one after the other."""
    started = time.perf_counter()
    for name, changes in tables:
        columns = [c for c in changes.columns if not c.startswith("_cdc_")]
        changes.select(*columns).write.format("delta").mode("append").save(str(root / "appended" / name))
    return time.perf_counter() - started


@attrs.frozen
class Round:
    cdc: tuple[float, int, Any]  # seconds, Spark jobs, report
    merged: float
    appended: float


def rounds(spark: Any, root: Path, batches: list[Any]) -> list[Round]:
    """Batch 0 creates every table; then each later batch through ``cdc apply``, the bare-MERGE loop and the append
    loop in turn, so the three meet the JVM equally warm (its JIT keeps compiling for minutes: whatever ran last
    in one long run looked faster)."""
    run = CdcRun(spark, root)
    run.batch(batches[0], 0)
    plain_create(root, plain_tables(batches[0]))
    done = []
    for batch_id, frame in enumerate(batches[1:], start=1):
        cdc = run.batch(frame, batch_id)
        tables = plain_tables(frame)
        done.append(Round(cdc, bare_merges(spark, root, tables), plain_appends(root, tables)))
        for _, changes in tables:
            changes.unpersist()
    return done


@pytest.mark.parametrize("tables", COUNTS)
def test_seconds_per_table_batch(benchmark: Any, spark: Any, tmp_path: Path, tables: int) -> None:
    from cdc_spark.job import describe

    batches = frames(spark, tables, ROUNDS + 1)
    done = benchmark.pedantic(lambda: rounds(spark, tmp_path, batches), rounds=1, iterations=1)
    (seconds, jobs, report), merged, appended = done[-1].cdc, done[-1].merged, done[-1].appended
    earlier = "; ".join(f"{r.cdc[0]:.1f} s against {r.merged:.1f} s" for r in done[:-1])
    print(
        f"\nT={tables} ({report.messages} messages, {report.messages // tables} a table), round {len(done)}: cdc apply"
        f" {seconds / tables:.2f} s a table ({seconds:.1f} s, {jobs} Spark jobs, {jobs / tables:.1f} a table;"
        f" decode {report.decode_seconds:.1f} s, apply {report.apply_seconds:.1f} s); bare-MERGE loop"
        f" {merged / tables:.2f} s a table ({merged:.1f} s); plain append loop {appended / tables:.2f} s a table"
        f" ({appended:.1f} s); cdc apply / bare MERGE = {seconds / merged:.2f}x, / append = {seconds / appended:.2f}x"
        f"\n  earlier rounds (cdc apply against bare MERGE): {earlier}"
        f"\n  {describe(report)}"
    )


def test_batches_of_new_rows(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    """Batches that only insert new keys (a table's initial snapshot read after its creation, an append-only table):
    ``cdc apply`` appends them where the bare loop MERGEs."""
    tables = NEW_ROW_TABLES
    batches = frames(spark, tables, ROUNDS + 1, new_rows=True)
    done = benchmark.pedantic(lambda: rounds(spark, tmp_path, batches), rounds=1, iterations=1)
    (seconds, jobs, report), merged, appended = done[-1].cdc, done[-1].merged, done[-1].appended
    print(
        f"\nnew rows only, T={tables} ({report.messages // tables} a table), round {len(done)}: cdc apply"
        f" {seconds / tables:.2f} s a table ({jobs / tables:.1f} Spark jobs a table); bare-MERGE loop"
        f" {merged / tables:.2f} s; plain append loop {appended / tables:.2f} s; cdc apply / bare MERGE ="
        f" {seconds / merged:.2f}x, / append = {seconds / appended:.2f}x"
        f"\n  earlier rounds: {'; '.join(f'{r.cdc[0]:.1f} s against {r.merged:.1f} s' for r in done[:-1])}"
    )


def test_small_batches(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    """Micro-batches of about 100 messages over 3 tables, as a stream of small batches delivers them."""
    from pyspark.sql import functions as F

    batches, offset = [], 0
    for generation in range(SMALL_BATCHES):
        messages = changefeed(3, 33, generation, seed=11)
        _, frame = kafka_frames(spark, messages, 1)
        batches.append(frame.withColumn("offset", F.col("offset") + offset).cache())
        batches[-1].count()
        offset += len(messages)
    timings, compiled = benchmark.pedantic(lambda: cdc_batches(spark, tmp_path, batches), rounds=1, iterations=1)
    later = [seconds for seconds, _, _ in timings[1:]]
    warm = later[len(later) // 2 :]  # the JIT still warms over the first batches
    print(
        f"\nsmall batches (~100 messages, 3 tables, {TABLE_FORMAT}): first {timings[0][0]:.1f} s, then"
        f" {', '.join(f'{s:.1f}' for s in later)} s (Spark jobs {[j for _, j, _ in timings]};"
        f" classes compiled {compiled});"
        f" steady {sum(r.messages for _, _, r in timings[1:]) / sum(later):.0f} messages/s;"
        f" median of the later half {statistics.median(warm):.2f} s"
    )
