"""The first pass of the codec path (:mod:`cdc_spark.decoding.python_path`): its rows, collected to the driver, and
what the driver reads from them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.canonical import schema_from_json
from cdc_core.schema import TableSchema
from cdc_spark.partition_clock import PartitionKey, Run

if TYPE_CHECKING:
    from pyspark.sql import Row

Rank = tuple[int, int, int, int]  # commit ts (-1: none), partition, offset, position: the newest schema wins
FIRST_PASS: Final = (
    "kind string, database string, table string, commit_ts bigint, sql string, ddl_type string, schema_json string,"
    " topic string, partition int, offset bigint, position int, error_type string, error string, last_offset bigint,"
    " schema_version bigint"
)
FIRST_PASS_NAMES: Final = tuple(field.split()[0] for field in FIRST_PASS.split(","))


@attrs.frozen
class FirstPass:
    """The small, collected result of the first pass (or its rows as the driver made them)."""

    rows: Sequence[Row | Mapping[str, Any]]

    def of_kind(self, *kinds: str) -> list[Row | Mapping[str, Any]]:
        return [r for r in self.rows if r["kind"] in kinds]

    def schemas(self) -> dict[tuple[str, str], tuple[Rank, TableSchema]]:
        """The newest schema each table's messages brought, with its rank."""
        found: dict[tuple[str, str], tuple[Rank, TableSchema]] = {}
        for row in self.of_kind("schema"):
            name = (row["database"], row["table"])
            rank = (row["commit_ts"], row["partition"] or 0, row["offset"] or 0, row["position"] or 0)
            if name not in found or rank >= found[name][0]:
                found[name] = (rank, schema_from_json(json.loads(row["schema_json"])))
        return found

    def messages(self) -> int:
        """How many messages the codec decoded."""
        return sum(r["offset"] for r in self.of_kind("seen"))

    def clock(self) -> dict[PartitionKey, int]:
        """The newest commit ts per topic-partition: of the changes decoded, and of the rows held there for a schema
        another partition brought (the second pass types them)."""
        found = {(r["topic"], r["partition"]): r["commit_ts"] for r in self.of_kind("clock")}
        learned = self.learned()
        for r in self.of_kind("held"):
            where, ts = (r["topic"], r["partition"]), r["commit_ts"]
            if ts is not None and _awaited(r) in learned and ts > found.get(where, ts - 1):
                found[where] = ts
        return found

    def next_runs(self) -> tuple[Run, ...]:
        """The runs of changes without a commit ts that their next timed message orders (:class:`NextTimed`)."""
        return tuple(((r["topic"], r["partition"]), r["offset"], r["last_offset"], r["commit_ts"])
                     for r in self.of_kind("next"))  # fmt: skip

    def changed_tables(self) -> frozenset[tuple[str, str]]:
        """The tables the messages have changes of (each a row of the second pass, typed or a dead letter)."""
        learned = self.learned()
        held = [r for r in self.of_kind("held") if _awaited(r) in learned]
        return frozenset((r["database"], r["table"]) for r in [*self.of_kind("changes"), *held])

    def learned(self) -> dict[tuple[str, str, int], str]:
        """The schema versions the batch's BOOTSTRAP and DDL messages brought (canonical JSON), by key; none where no
        row is held, as nothing else asks (a batch of a few hundred tables' BOOTSTRAPs parses none)."""
        found: dict[tuple[str, str, int], str] = {}
        if not any(r["kind"] == "held" for r in self.rows):
            return found
        for r in self.of_kind("bootstrap", "ddl"):
            schema = None if r["schema_json"] is None else schema_from_json(json.loads(r["schema_json"]))
            if schema is not None and schema.version is not None:
                found[(schema.database, schema.table, schema.version)] = r["schema_json"]
        return found

    def dead_rows(self) -> list[Row | Mapping[str, Any]]:
        """The dead letters: the messages the codec refused, and the rows held for a schema that no partition of the
        batch brought. A row whose schema came on another partition (TiCDC sends BOOTSTRAP to partition 0 only
        with ``send-bootstrap-to-all-partition=false``) is typed by the second pass (:meth:`primed_later`)."""
        learned = self.learned()
        return [*self.of_kind("dead"), *(r for r in self.of_kind("held") if _awaited(r) not in learned)]

    def primed_later(self) -> list[str]:
        """The schemas that held rows wait for and another partition brought: the second pass's decoders know them."""
        learned = self.learned()
        return sorted({learned[key] for key in map(_awaited, self.of_kind("held")) if key in learned})

    def held_coordinates(self) -> frozenset[tuple[str | None, int | None, int | None]]:
        """The rows held to the first pass's end whose schema another partition brought (:meth:`primed_later`)."""
        learned = self.learned()
        return frozenset((r["topic"], r["partition"], r["offset"]) for r in self.of_kind("held")
                         if _awaited(r) in learned)  # fmt: skip

    def dead_coordinates(self) -> frozenset[tuple[str | None, int | None, int | None]]:
        return frozenset((r["topic"], r["partition"], r["offset"]) for r in self.dead_rows())

    def control_rows(self) -> list[tuple[Any, ...]]:
        return [
            (r["kind"], r["database"], r["table"], r["commit_ts"], r["sql"], r["ddl_type"], r["schema_json"],
             r["partition"], r["offset"])
            for r in self.of_kind("ddl", "watermark", "bootstrap")
        ]  # fmt: skip


def _awaited(row: Row | Mapping[str, Any]) -> tuple[str, str, int]:
    return (row["database"], row["table"], row["schema_version"])


__all__ = ["FIRST_PASS", "FIRST_PASS_NAMES", "FirstPass", "Rank"]
