"""``python -m cdc_spark.demo`` (``nox -s demo``): the whole pipeline on an embedded default, no services needed.

1. starts an Apache Kafka broker (one KRaft node from the pinned Maven Central jars, on loopback),
2. produces a generated shop changefeed (three tables, many column types, updates, deletes, an ADD COLUMN)
   with the project's own encoder, replaying a share of the messages as an at-least-once producer would,
3. runs ``cdc apply --once`` on a local Spark into Delta tables (``--table-format iceberg``: Iceberg), printing a
   line per micro-batch,
4. prints the tables and checks, reading them without Spark, that they equal the source state.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import tempfile
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import attrs

from cdc_core.schema import TableSchema
from cdc_core.types import LogicalType
from cdc_spark.job import BatchReport, JobConfig, SourceSpec, describe, make_sink, run, steady_rate
from cdc_testing.changefeed import Changefeed, encode, generate

if TYPE_CHECKING:
    import pyarrow as pa


def comparable(value: Any, logical: LogicalType | None) -> Any:
    """One comparable form for a source value and the value read back from Delta."""
    if value is None:
        return None
    if logical is LogicalType.JSON:
        return json.loads(value) if isinstance(value, str) else value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return Decimal(repr(value)).normalize()
    if isinstance(value, (int, Decimal)):
        return Decimal(value).normalize()
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def read_table(target: str, table: str, table_format: str = "delta") -> pa.Table:
    """A target table read without Spark: ``deltalake`` for Delta, ``pyiceberg`` for Iceberg (the independent
    readers the checks use), from the layout ``cdc apply`` writes under ``target`` (``<database>/<table>``;
    state tables under ``_cdc_state/``)."""
    database, _, name = table.partition(".")
    location = os.path.join(target, database, name)
    if table_format == "delta":
        from deltalake import DeltaTable

        rows: pa.Table = DeltaTable(location).to_pyarrow_table()
        return rows
    if table_format == "iceberg":
        from pyiceberg.table import StaticTable

        with open(os.path.join(location, "metadata", "version-hint.text"), encoding="utf-8") as handle:
            version = handle.read().strip()
        metadata = os.path.join(location, "metadata", f"v{version}.metadata.json")
        scanned: pa.Table = StaticTable.from_metadata(metadata).scan().to_arrow()
        return scanned
    raise ValueError(f"no independent reader for table format {table_format!r}")


def differences(target: str, changefeed: Changefeed, limit: int = 10, table_format: str = "delta") -> list[str]:
    """How the tables under ``target`` differ from the changefeed's source state (empty: equal): the columns
    must be exactly the source table's, the rows exactly its live rows."""
    problems: list[str] = []
    for table, expected_rows in sorted(changefeed.state.items()):
        schema: TableSchema = changefeed.final_schemas[table]
        kinds = {c.name: c.data_type.logical for c in schema.columns}
        keys = schema.handle_key
        name = f"{schema.database}.{table}"
        try:
            stored = read_table(target, name, table_format)
        except Exception as exc:  # a missing table is a difference, reported with the reason
            problems.append(f"{name}: cannot read ({exc})")
            continue
        if stored.column_names != list(kinds):
            problems.append(f"{name}: columns {stored.column_names}, the source has {list(kinds)}")
        rows = stored.to_pylist()
        actual = {tuple(comparable(r.get(k), kinds[k]) for k in keys): r for r in rows}
        if len(actual) != len(rows):
            problems.append(f"{name}: {len(rows) - len(actual)} rows share a key")
        expected = {
            tuple(comparable(v, kinds[k]) for k, v in zip(keys, key, strict=True)): r
            for key, r in expected_rows.items()
        }
        for key in sorted(set(expected) | set(actual), key=str):
            if key not in actual:
                problems.append(f"{name} {key}: missing")
            elif key not in expected:
                problems.append(f"{name} {key}: not in the source")
            else:
                for column, kind in kinds.items():
                    want, got = comparable(expected[key].get(column), kind), comparable(actual[key].get(column), kind)
                    if want != got:
                        problems.append(f"{name} {key} {column}: expected {want!r}, got {got!r}")
            if len(problems) >= limit:
                return problems
    return problems


def print_tables(spark: Any, sink: Any, rows: int) -> None:
    """Each target table's row count and first rows, read by Spark through the sink."""
    for name in sink.tables():
        frame = sink.live(spark, name)
        print(f"\n{name}: {frame.count()} rows")
        frame.orderBy(*frame.columns[:1]).show(rows, truncate=24)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdc_spark.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", default="debezium", help="encoder/decoder protocol (default: debezium)")
    parser.add_argument("--transactions", type=int, default=150)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--replay", type=float, default=0.1, help="share of messages sent twice (at-least-once)")
    parser.add_argument("--target", help="where to write the tables (default: a temporary directory)")
    parser.add_argument("--table-format", default="delta", choices=("delta", "iceberg"), help="default: delta")
    parser.add_argument("--rows", type=int, default=8, help="rows of each table to print")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="K=V",
        help="a job option as for cdc apply (table-parallelism=1, decode=python...); repeatable",
    )
    args = parser.parse_args(argv)
    for option in args.option:
        if "=" not in option:
            parser.error(f"--option {option!r}: expected K=V")
    extra = dict(option.partition("=")[::2] for option in args.option)

    from pyspark.sql import SparkSession

    from cdc_spark.session import build_session
    from cdc_testing.kafka import create_topic, produce, running_broker

    changefeed = generate(seed=args.seed, transactions=args.transactions)
    encoder_options: dict[str, object] = {"enable-tidb-extension": True} if args.protocol == "debezium" else {}
    messages = list(encode(changefeed, args.protocol, encoder_options))
    rng = random.Random(args.seed)
    replays = [m for m in messages if rng.random() < args.replay]
    print(
        f"changefeed: {changefeed.row_changes} row changes over {len(changefeed.state)} tables"
        f" + 1 ALTER TABLE, {len(messages)} {args.protocol} messages, {len(replays)} of them sent twice"
    )
    with tempfile.TemporaryDirectory(prefix="cdc-demo-") as scratch, running_broker() as bootstrap:
        target = args.target or f"{scratch}/tables"
        print(f"broker: Apache Kafka at {bootstrap}; target: {target}")
        create_topic(bootstrap, "shop", args.partitions)
        spread = [attrs.evolve(m, partition=(m.partition or 0) % args.partitions) for m in messages + replays]
        sent = produce(bootstrap, "shop", spread)
        print(f"produced {sent} messages to topic shop ({args.partitions} partitions)")
        owned = SparkSession.getActiveSession() is None
        spark = build_session(
            "local[2]", app_name="cdc-demo", conf={"spark.sql.warehouse.dir": f"{scratch}/warehouse"}, log_level="ERROR"
        )
        config = JobConfig(
            protocol=args.protocol,
            source=SourceSpec.parse(f"kafka://{bootstrap}/shop"),
            target=target,
            checkpoint=f"{scratch}/checkpoint",
            options={
                "source.maxOffsetsPerTrigger": str(max(1, sent // 4)),
                "table-format": args.table_format,
                **extra,
            },
        )
        print("running: cdc apply --once (one line per micro-batch)")
        reports: list[BatchReport] = []

        def progress(report: BatchReport) -> None:
            reports.append(report)
            print("  " + describe(report), flush=True)

        run(spark, config, progress)
        rate = steady_rate(reports)
        if rate is not None:
            print(f"steady state (batches after the first): {rate:,.0f} messages/s")
        print_tables(spark, make_sink(spark, config), args.rows)
        problems = differences(target, changefeed, table_format=args.table_format)
        read = sum(r.messages for r in reports)
        if read != sent:
            problems.insert(0, f"the job read {read} messages, {sent} were produced")
        if owned:
            spark.stop()
    if problems:
        print("\nCHECK FAILED: the tables differ from the source state:")
        for problem in problems:
            print("  " + problem)
        return 1
    total = sum(len(rows) for rows in changefeed.state.values())
    print(f"\nCHECK PASSED: {len(changefeed.state)} tables, {total} rows equal the source state")
    return 0


if __name__ == "__main__":
    sys.exit(main())
