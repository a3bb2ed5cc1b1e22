"""What one table's micro-batch costs on Delta by each way of writing it, against a bare ``MERGE INTO``, same run.

A probe for issue 44's "cost per table": ``java/delta/DeltaWriteProbe.java`` (compiled here with ``javac`` against
the running Spark's and Delta's jars) commits a batch without a MERGE, as a sink that knew where each changed key's
row lives could: new rows appended and replaced rows marked in deletion vectors, or the touched files rewritten.
Neither is a sink (no key state, no ordering, no schema evolution): the figures say how far such a write could go.
Per round, for each of ``CDC_BENCH_PROBE_TABLES`` tables of ``CDC_BENCH_PROBE_ROWS`` rows, the same batch (20
updates, 7 deletes, 6 inserts) through:

- a bare MERGE (the baseline), and the same MERGE into a table with deletion vectors on;
- the probe's deletion vectors (the replaced rows' positions looked up first with a scan, timed apart: a key state
  would carry them);
- the probe's file rewrite (its lookup of the touched files' names timed apart);
- the whole table rewritten through Spark's own writer, no probe: the rows the batch does not touch and its new
  rows overwrite the table in one commit (marked with ``txnAppId``/``txnVersion``, as the sinks mark theirs);
- Delta's ``replaceWhere`` through Spark's writer: the rows of the batch's keys replaced by its new rows, in one
  commit (Delta rewrites only the files holding those keys), marked the same way.

Every round checks the tables of every way equal, and the end says whether the ``deltalake`` package reads each.

    nox -s bench -- benchmarks/bench_delta_write_paths.py -s
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from java_probes import probe_jar

TABLES = int(os.environ.get("CDC_BENCH_PROBE_TABLES", "3"))
ROWS = int(os.environ.get("CDC_BENCH_PROBE_ROWS", "200"))
ROUNDS = int(os.environ.get("CDC_BENCH_PROBE_ROUNDS", "8"))
SOURCES = Path(__file__).parent / "java" / "delta"
VALUES = [f"c{i}" for i in range(8)]
SCHEMA = f"id bigint, amount double, {', '.join(f'{c} string' for c in VALUES)}"
COLUMNS = ["id", "amount", *VALUES]
KINDS = ("merge", "merge_dv", "probe_dv", "probe_rewrite", "overwrite", "replace_where")
T = TypeVar("T")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from cdc_spark.session import build_session, connector_jars

    connectors = list(connector_jars())
    jar = probe_jar(SOURCES, tmp_path_factory.mktemp("delta-probe"), "delta-probe.jar", connectors)
    # the probe must load beside Delta's classes (spark.jars), which the driver's own class path cannot see
    conf = {"spark.driver.memory": "2g", "spark.jars": ",".join([*connectors, str(jar)])}
    session = build_session("local[2]", app_name="bench-delta-write-paths", conf=conf, log_level="ERROR")
    yield session
    session.stop()


def _rows(keys: list[int], generation: int) -> list[tuple[Any, ...]]:
    return [(k, float(k * generation), *[f"v{generation}-{k}-{c}" for c in VALUES]) for k in keys]


def _timed(work: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def _merge(spark: Any, path: str) -> None:
    updates = ", ".join(f"t.{c} = s.{c}" for c in COLUMNS[1:])
    spark.sql(
        f"MERGE INTO delta.`{path}` t USING probe_changes s ON t.id = s.id"
        " WHEN MATCHED AND s.op = 'delete' THEN DELETE"
        f" WHEN MATCHED THEN UPDATE SET {updates}"
        f" WHEN NOT MATCHED AND s.op = 'upsert' THEN INSERT ({', '.join(COLUMNS)})"
        f" VALUES ({', '.join('s.' + c for c in COLUMNS)})"
    )


def _changed(spark: Any, path: str, keys: list[int]) -> Any:
    """The table's rows of ``keys``: the scan both probes' lookups make (a key state would carry what they find)."""
    from pyspark.sql import functions as F

    return spark.read.format("delta").load(path).where(F.col("id").isin(keys))


def _positions(spark: Any, path: str, keys: list[int]) -> str:
    """The probe's deletes: the replaced rows' file names and positions, one line per file."""
    found = _changed(spark, path, keys)
    by_file: dict[str, list[str]] = {}
    for name, row in found.select("_metadata.file_name", "_metadata.row_index").collect():
        by_file.setdefault(name, []).append(str(row))
    return "".join(f"{name}\t{','.join(rows)}\n" for name, rows in by_file.items())


def _rewrite(spark: Any, path: str, keys: list[int], new: Any, batch: int) -> float:
    """The probe's file rewrite; returns the seconds of its lookup of the touched files (a key state would carry
    them), left out of the rewrite's own time by the caller."""
    from pyspark.sql import functions as F

    found = _changed(spark, path, keys).select("_metadata.file_name")
    lookup, names = _timed(lambda: sorted({row[0] for row in found.distinct().collect()}))
    data = new
    if names:
        kept = spark.read.parquet(*[f"{path}/{name}" for name in names]).where(~F.col("id").isin(keys))
        data = kept.unionByName(new)
    probe = spark._jvm.cdc.bench.DeltaWriteProbe
    probe.rewritingFiles(spark._jsparkSession, path, data._jdf, ",".join(names), "probe", batch)
    return lookup


def _overwrite(spark: Any, path: str, keys: list[int], new: Any, batch: int) -> None:
    """The whole table written again by Spark's writer: its rows of keys the batch does not touch, and ``new``."""
    from pyspark.sql import functions as F

    kept = spark.read.format("delta").load(path).where(~F.col("id").isin(keys))
    writer = kept.unionByName(new).write.format("delta").mode("overwrite")
    writer.option("txnAppId", "overwrite").option("txnVersion", batch).save(path)


def _replace_where(path: str, keys: list[int], new: Any, batch: int) -> None:
    """The rows of ``keys`` (the batch's deleted, updated and inserted keys) replaced by ``new`` with Delta's
    ``replaceWhere``; Delta checks that every new row matches the condition."""
    writer = new.write.format("delta").mode("overwrite").option("replaceWhere", f"id IN ({', '.join(map(str, keys))})")
    writer.option("txnAppId", "replace-where").option("txnVersion", batch).save(path)


def _table(spark: Any, path: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.read.format("delta").load(path).collect())


def _readable(path: str) -> str:
    from deltalake import DeltaTable

    try:
        return f"{DeltaTable(path).to_pyarrow_table().num_rows} rows"
    except Exception as exc:  # the package's own refusal is the finding
        return f"refused ({str(exc)[:120]})"


def _one_table(spark: Any, paths: dict[str, str], keys: list[int], new: Any, batch: int) -> list[tuple[str, float]]:
    """One batch into one table by every way, timed; the tables are then checked equal."""
    probe = spark._jvm.cdc.bench.DeltaWriteProbe
    merged = _timed(lambda: _merge(spark, paths["merge"]))[0]
    merged_dv = _timed(lambda: _merge(spark, paths["merge_dv"]))[0]
    lookup, deletes = _timed(lambda: _positions(spark, paths["probe_dv"], keys))
    vectors = _timed(
        lambda: probe.withDeletionVectors(spark._jsparkSession, paths["probe_dv"], new._jdf, deletes, "probe", batch)
    )[0]
    rewritten, names_lookup = _timed(lambda: _rewrite(spark, paths["probe_rewrite"], keys, new, batch))
    overwritten = _timed(lambda: _overwrite(spark, paths["overwrite"], keys, new, batch))[0]
    every_key = sorted({*keys, *(row.id for row in new.select("id").collect())})  # a sink's resolve knows them
    replaced = _timed(lambda: _replace_where(paths["replace_where"], every_key, new, batch))[0]
    expected = _table(spark, paths["merge"])
    assert all(_table(spark, paths[kind]) == expected for kind in KINDS[1:]), f"{paths}, batch {batch}"
    return [
        ("merge", merged), ("merge_dv", merged_dv), ("lookup", lookup), ("probe_dv", vectors),
        ("probe_rewrite", rewritten - names_lookup), ("names_lookup", names_lookup), ("overwrite", overwritten),
        ("replace_where", replaced),
    ]  # fmt: skip


def test_delta_write_paths(benchmark: Any, spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    paths = {(kind, t): str(tmp_path / f"{kind}{t}") for kind in KINDS for t in range(TABLES)}
    for (kind, _), path in paths.items():
        writer = spark.createDataFrame(_rows(list(range(ROWS)), 0), SCHEMA).coalesce(1).write.format("delta")
        if kind in ("merge_dv", "probe_dv"):
            writer = writer.option("delta.enableDeletionVectors", "true")
        writer.save(path)
    rng, live, next_key = random.Random(3), set(range(ROWS)), ROWS
    seconds: list[dict[str, list[float]]] = []

    def rounds() -> None:
        nonlocal live, next_key
        for batch in range(1, ROUNDS + 1):
            updated = rng.sample(sorted(live), 20)
            deleted = rng.sample(sorted(live - set(updated)), 7)
            inserted = list(range(next_key, next_key + 6))
            next_key += 6
            live = (live - set(deleted)) | set(inserted)
            new = spark.createDataFrame(_rows(updated + inserted, batch), SCHEMA).cache()
            gone = spark.createDataFrame([(k,) for k in deleted], "id bigint")
            changes = new.withColumn("op", F.lit("upsert")).unionByName(
                gone.withColumn("op", F.lit("delete")), allowMissingColumns=True
            )
            changes.cache().createOrReplaceTempView("probe_changes")
            taken: dict[str, list[float]] = {name: [] for name in (*KINDS, "lookup", "names_lookup")}
            for t in range(TABLES):
                for name, spent in _one_table(spark, {k: paths[k, t] for k in KINDS}, updated + deleted, new, batch):
                    taken[name].append(spent)
            seconds.append(taken)
            new.unpersist()
            changes.unpersist()

    benchmark.pedantic(rounds, rounds=1, iterations=1)
    later = seconds[len(seconds) // 2 :]  # the JVM warm
    mean = {name: sum(sum(r[name]) for r in later) / (len(later) * TABLES) for name in later[0]}
    base = mean["merge"]
    ratio = {name: f"{value:.2f} s ({value / base:.2f}x)" for name, value in mean.items()}
    first = len(seconds) - len(later) + 1
    print(
        f"\nDelta, {TABLES} tables x {ROWS} rows, batches of 33 changes, rounds {first}-{len(seconds)}, a table"
        f" (/ bare MERGE): bare MERGE {base:.2f} s; MERGE with deletion vectors {ratio['merge_dv']};"
        f" probe with deletion vectors {ratio['probe_dv']}, its position lookup {mean['lookup']:.2f} s;"
        f" probe rewriting the files {ratio['probe_rewrite']}, its lookup of the files {mean['names_lookup']:.2f} s;"
        f" the whole table overwritten by Spark's writer {ratio['overwrite']}; replaceWhere {ratio['replace_where']}"
        f"\n  deltalake reads: the MERGEd table {_readable(paths['merge', 0])}; with deletion vectors"
        f" {_readable(paths['probe_dv', 0])}; rewritten {_readable(paths['probe_rewrite', 0])}"
    )
