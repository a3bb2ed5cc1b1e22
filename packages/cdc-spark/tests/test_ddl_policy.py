"""``cdc apply --ddl evolve|try-evolve|ignore|stop`` on one second batch of schema changes after a first batch
that created the targets: a column added and one widened, a type changed incompatibly, TRUNCATE, DROP and
RENAME TABLE (Canal-JSON as TiCDC writes it). Each policy's targets are read back without Spark."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.messagelines import write_lines
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import parse_type_text
from cdc_spark.cli import main
from cdc_spark.ddl_policy import renamed_from
from cdc_spark.demo import read_table

pytest.importorskip("cdc_canal")
pytestmark = pytest.mark.spark

TS = 449_000_000_000_000_000


def table(name: str, v: str = "int", extra: tuple[str, ...] = ()) -> TableSchema:
    columns = [Column(name="id", data_type=parse_type_text("int"), nullable=False)]
    columns += [Column(name=c, data_type=parse_type_text(v if c == "v" else "int")) for c in ("v", *extra)]
    return TableSchema(
        database="shop",
        table=name,
        columns=columns,
        indexes=[Index(name="PRIMARY", columns=("id",), unique=True, primary=True)],
    )


def row(op: Op, schema: TableSchema, ts: int, **values: Any) -> RowChange:
    image = {c.name: values.get(c.name) for c in schema.columns}
    return RowChange(
        op=op,
        database="shop",
        table=schema.table,
        after=image if op is not Op.DELETE else None,
        before=image if op is not Op.INSERT else None,
        commit_ts=ts,
        schema=schema,
    )


def ddl(kind: DDLType, name: str, sql: str, ts: int, schema: TableSchema | None = None) -> DDLEvent:
    return DDLEvent(ddl_type=kind, sql=sql, database="shop", table=name, commit_ts=ts, table_schema=schema)


NAMES = ("t", "s", "cut", "gone", "old")


def first_batch() -> list[Event]:
    return [row(Op.INSERT, table(n), TS + i, id=i, v=10 * i) for n in NAMES for i in (1, 2, 3)]


def second_batch() -> list[Event]:
    wide, text, new = table("t", "bigint", ("w",)), table("s", "varchar(8)"), table("new")
    return [
        ddl(DDLType.ALTER, "t", "ALTER TABLE `shop`.`t` ADD COLUMN `w` INT, MODIFY `v` BIGINT", TS + 10, wide),
        row(Op.UPDATE, wide, TS + 11, id=1, v=5, w=7),
        row(Op.INSERT, wide, TS + 11, id=4, v=2**40, w=8),
        ddl(DDLType.ALTER, "s", "ALTER TABLE `shop`.`s` MODIFY `v` VARCHAR(8)", TS + 12, text),
        row(Op.UPDATE, text, TS + 13, id=1, v="x"),
        row(Op.INSERT, text, TS + 13, id=4, v="12"),
        ddl(DDLType.TRUNCATE, "cut", "TRUNCATE TABLE `shop`.`cut`", TS + 14, table("cut")),
        row(Op.INSERT, table("cut"), TS + 15, id=9, v=90),
        ddl(DDLType.ERASE, "gone", "DROP TABLE `shop`.`gone`", TS + 16),
        ddl(DDLType.RENAME, "new", "RENAME TABLE `shop`.`old` TO `shop`.`new`", TS + 17, new),
        row(Op.INSERT, new, TS + 18, id=5, v=50),
    ]


def write(path: Path, events: list[Event]) -> None:
    encoder = get_codec("canal-json").encoder({"enable-tidb-extension": True})
    with path.open("w", encoding="utf-8") as handle:
        write_lines((m for e in events for m in encoder.encode(e)), handle)


def rows(target: Path, name: str) -> dict[int, dict[str, Any]]:
    return {r["id"]: r for r in read_table(str(target), f"shop.{name}").to_pylist()}


@pytest.fixture(scope="module")
def created(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first batch applied (targets, state, checkpoint under ``tables``), the second waiting in ``in``."""
    root = tmp_path_factory.mktemp("ddl")
    (root / "in").mkdir()
    write(root / "in" / "1.jsonl", first_batch())
    assert apply(root, root / "tables") == 0
    write(root / "in" / "2.jsonl", second_batch())
    return root


def apply(root: Path, target: Path, *flags: str) -> int:
    return main(
        ["apply", "--protocol", "canal-json", "--source", f"file://{root / 'in'}", "--target", str(target),
         "--once", "-o", "decode=python", *flags]
    )  # fmt: skip


def copy(created: Path, tmp_path: Path) -> Path:
    target = tmp_path / "tables"
    shutil.copytree(created / "tables", target)
    return target


def test_evolve_alters_the_targets_and_follows_truncate_drop_and_rename(
    created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = copy(created, tmp_path)
    capsys.readouterr()
    # shop.s changes type incompatibly, which evolve cannot take: left out here
    assert apply(created, target, "--exclude-tables", r"shop\.s") == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert (
        "ddl: TRUNCATE TABLE shop.cut: rows removed; DROP TABLE shop.gone: rows of shop.gone removed; RENAME TABLE"
        " shop.old TO shop.new: its changes go to shop.new; shop.old's target kept as it was"
    ) in line
    assert rows(target, "t") == {
        1: {"id": 1, "v": 5, "w": 7},
        2: {"id": 2, "v": 20, "w": None},
        3: {"id": 3, "v": 30, "w": None},
        4: {"id": 4, "v": 2**40, "w": 8},
    }
    assert set(rows(target, "cut")) == {9}
    assert rows(target, "gone") == {}
    assert set(rows(target, "old")) == {1, 2, 3} and set(rows(target, "new")) == {5}


def test_evolve_stops_at_an_incompatible_type(
    created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = copy(created, tmp_path)
    assert apply(created, target, "--include-tables", r"shop\.s") != 0
    assert "table shop.s: column 'v' changed type incompatibly from int to string" in capsys.readouterr().err


def test_try_evolve_keeps_a_column_it_cannot_change_and_casts_its_values(
    created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = copy(created, tmp_path)
    capsys.readouterr()
    assert apply(created, target, "--ddl", "try-evolve", "--include-tables", r"shop\.(s|t)") == 0
    assert "ddl: shop.s: column v kept as int" in capsys.readouterr().out
    assert rows(target, "s") == {
        1: {"id": 1, "v": None},
        2: {"id": 2, "v": 20},
        3: {"id": 3, "v": 30},
        4: {"id": 4, "v": 12},
    }
    assert rows(target, "t")[4] == {"id": 4, "v": 2**40, "w": 8}  # what it can change, it changes


def test_ignore_leaves_every_target_as_it_was_created(
    created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = copy(created, tmp_path)
    capsys.readouterr()
    settings = tmp_path / "ignore.yaml"  # the policy from a file, the rest from flags
    settings.write_text("ddl: ignore\n")
    assert apply(created, target, "--config", str(settings)) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    for note in (
        "TRUNCATE TABLE shop.cut ignored",
        "DROP TABLE shop.gone ignored",
        "RENAME TABLE shop.old TO shop.new ignored",
        "shop.t: column w not added",
        "shop.t: column v kept as int",
        "shop.s: column v kept as int",
    ):
        assert note in line
    # v kept as int: 5 fits, 2**40 does not (null)
    assert rows(target, "t") == {
        1: {"id": 1, "v": 5},
        2: {"id": 2, "v": 20},
        3: {"id": 3, "v": 30},
        4: {"id": 4, "v": None},
    }
    assert set(rows(target, "cut")) == {1, 2, 3, 9}
    assert set(rows(target, "gone")) == {1, 2, 3}
    assert set(rows(target, "old")) == {1, 2, 3} and set(rows(target, "new")) == {5}


def test_stop_writes_nothing_and_the_batch_applies_when_run_again_with_another_policy(
    created: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = copy(created, tmp_path)
    assert apply(created, target, "--ddl", "stop", "--include-tables", r"shop\.(t|cut)") != 0
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("nothing of the batch was written (run with --ddl evolve or ignore to go past it)")
    )
    assert set(rows(target, "cut")) == {1, 2, 3}
    assert list(rows(target, "t")[1]) == ["id", "v"]
    assert apply(created, target, "--ddl", "stop", "--include-tables", r"shop\.t") != 0
    assert "--ddl stop: table shop.t: column w added; column v changed type from int" in capsys.readouterr().err
    # the offsets were not committed: the same batch, under evolve
    assert apply(created, target, "--include-tables", r"shop\.(t|cut)") == 0
    assert set(rows(target, "cut")) == {9} and rows(target, "t")[1] == {"id": 1, "v": 5, "w": 7}


@pytest.mark.parametrize(
    ("sql", "old"),
    [
        ("RENAME TABLE `shop`.`old` TO `shop`.`new`", "shop.old"),
        ("rename table old to new", "old"),
        ("RENAME TABLE `we``ird` . `t` TO x", "we`ird.t"),
        ("ALTER TABLE a RENAME TO b", None),
        (None, None),
    ],
)
def test_the_old_name_of_a_rename(sql: str | None, old: str | None) -> None:
    assert renamed_from(sql) == old
