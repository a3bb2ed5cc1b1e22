"""Routing and filtering through ``cdc apply`` itself (its parser, settings and job, in this process's session):
tables left out before decode, renamed, merged from several sources, columns left out, progress as JSON; the
same run from flags and from a config file. Targets are read back without Spark (``deltalake``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.events import DDLEvent, RowChange
from cdc_core.messagelines import write_lines
from cdc_core.schema import TableSchema
from cdc_spark.cli import main
from cdc_spark.demo import differences, read_table
from cdc_testing.changefeed import Changefeed, encode, generate

pytest.importorskip("cdc_debezium")
pytestmark = pytest.mark.spark

SHIFTED = ("id", "order_id", "customer_id")  # the key columns a shard's rows are moved along by


def write_messages(path: Path, feed: Changefeed) -> list[Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    messages = list(encode(feed, "debezium", {"enable-tidb-extension": True}))
    with path.open("w", encoding="utf-8") as handle:
        write_lines(messages, handle)
    return messages


def renamed(feed: Changefeed, table: str, database: str, drop: tuple[str, ...] = ()) -> Changefeed:
    """The state a target ``database.table`` must hold for source ``shop.table``, without columns ``drop``."""
    schema = feed.final_schemas[table]
    kept = attrs.evolve(schema, database=database, columns=[c for c in schema.columns if c.name not in drop])
    return attrs.evolve(feed, state={table: feed.state[table]}, final_schemas={table: kept})


def test_flags_filter_rename_and_leave_out_columns_and_report_json(spark: Any, tmp_path: Path) -> None:
    feed = generate(seed=5, transactions=40)
    messages = write_messages(tmp_path / "in" / "shop.jsonl", feed)
    progress = tmp_path / "progress.jsonl"
    target = tmp_path / "tables"
    code = main(
        ["apply", "--protocol", "debezium", "--source", f"file://{tmp_path / 'in'}", "--target", str(target),
         "--once", "--include-tables", r"shop\.(orders|items)", "--route", r"shop\.items=sales.{table}",
         "--exclude-columns", r"shop\.orders=note", "--scd", r"sales\.items=2", "--progress", "json",
         "--progress-file", str(progress), "-o", "decode=python"]
    )  # fmt: skip
    assert code == 0
    assert differences(str(target), renamed(feed, "orders", "shop", drop=("note",))) == []
    # SCD2 for the renamed target only: its current versions are the source's rows
    versions = read_table(str(target), "sales.items").to_pylist()
    assert {"__start_at", "__end_at"} <= set(versions[0])
    current = {(v["order_id"], v["sku"]): v["quantity"] for v in versions if v["__end_at"] is None}
    assert current == {key: row["quantity"] for key, row in feed.state["items"].items()}
    assert not (target / "shop" / "customers").exists() and not (target / "shop" / "items").exists()

    records = [json.loads(line) for line in progress.read_text().splitlines()]
    assert [r["batch"] for r in records] == [0]
    record = records[0]
    assert record["messages"] == len(messages)
    customers = sum(1 for m in messages if m.value is not None and b'"table":"customers"' in m.value)
    assert customers > 0
    assert record["decoded"]["codec"] == len(messages) - customers  # left out before decode
    changes = {t: sum(1 for e in feed.events if isinstance(e, RowChange) and e.table == t) for t in ("orders", "items")}
    assert {name: sum(ops.values()) for name, ops in record["tables"].items()} == {
        "shop.orders": changes["orders"],
        "sales.items": changes["items"],
    }
    inserts = sum(1 for e in feed.events if isinstance(e, RowChange) and e.table == "orders" and e.op.value == "insert")
    assert record["tables"]["shop.orders"]["insert"] == inserts
    assert record["rows"] == sum(changes.values())
    assert record["lag"] is None  # files have no offsets behind a latest one
    assert record["time"] is not None and record["input_rows_per_second"] is not None  # Spark's own progress
    assert record["decode_seconds"] > 0 and record["apply_seconds"] > 0 and record["dead_letters"] == 0


def sharded(feed: Changefeed, database: str, shift: int) -> Changefeed:
    """The changefeed as written by a shard: database ``database``, every key moved along by ``shift``."""

    def moved(image: dict[str, Any] | None) -> dict[str, Any] | None:
        if image is None:
            return None
        return {k: v + shift if k in SHIFTED and v is not None else v for k, v in image.items()}

    def schema(table: TableSchema | None) -> TableSchema | None:
        return None if table is None else attrs.evolve(table, database=database)

    events: list[Any] = []
    for event in feed.events:
        changed: dict[str, Any] | None = None
        if isinstance(event, RowChange):
            changed = {"before": moved(event.before), "after": moved(event.after), "schema": schema(event.schema)}
        elif isinstance(event, DDLEvent):
            changed = {"table_schema": schema(event.table_schema), "pre_table_schema": schema(event.pre_table_schema)}
        events.append(event if changed is None else attrs.evolve(event, database=database, **changed))
    state = {
        table: {key: moved(row) for key, row in rows.items()}  # keys are not compared, rows are
        for table, rows in feed.state.items()
    }
    finals = {table: attrs.evolve(s, database=database) for table, s in feed.final_schemas.items()}
    return Changefeed(events=events, state=state, final_schemas=finals)  # type: ignore[arg-type]


def merged(*feeds: Changefeed) -> Changefeed:
    """The state of targets ``shop.<table>`` fed by every shard."""
    state: dict[str, dict[Any, Any]] = {}
    for feed in feeds:
        for table, rows in feed.state.items():
            schema = feed.final_schemas[table]
            for row in rows.values():
                assert row is not None
                state.setdefault(table, {})[tuple(row[k] for k in schema.handle_key)] = row
    finals = {t: attrs.evolve(s, database="shop") for t, s in generate(seed=1, transactions=2).final_schemas.items()}
    finals["customers"] = attrs.evolve(feeds[0].final_schemas["customers"], database="shop")
    return Changefeed(events=[], state=state, final_schemas=finals)


def test_a_config_file_merges_shards_into_one_target_each(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = sharded(generate(seed=6, transactions=30), "shard_1", 0)
    two = sharded(generate(seed=7, transactions=30), "shard_2", 1_000_000)
    write_messages(tmp_path / "in" / "shard_1.jsonl", one)
    write_messages(tmp_path / "in" / "shard_2.jsonl", two)
    monkeypatch.setenv("CDC_TEST_LAKE", str(tmp_path))
    config = tmp_path / "pipeline.toml"  # YAML reads into the same settings (test_config.py)
    config.write_text(
        'protocol = "debezium"\nsource = "file://${CDC_TEST_LAKE}/in"\ntarget = "${CDC_TEST_LAKE}/tables"\n'
        'once = true\nroute = ["shard_\\\\d+\\\\.(.*)=shop.{1}"]\nprogress = "none"\n[option]\ndecode = "python"\n'
    )
    assert main(["apply", "--config", str(config)]) == 0
    assert differences(str(tmp_path / "tables"), merged(one, two), limit=5) == []
    assert not (tmp_path / "tables" / "shard_1").exists()
    stored = read_table(str(tmp_path / "tables"), "shop.customers").to_pylist()
    assert {r["id"] >= 1_000_000 for r in stored} == {False, True}  # rows of both shards
