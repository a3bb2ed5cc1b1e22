"""What a run does with schema changes: ``--ddl evolve|try-evolve|ignore|stop`` (docs/spark.md, "DDL policy").

Two kinds of change reach a batch. Table DDL (TRUNCATE TABLE, DROP TABLE, RENAME TABLE) arrives as control rows;
a column change (a column added, a type widened or changed) shows as a batch whose columns differ from the stored
target's. Per policy:

* ``evolve`` (the default): the sink adds and widens columns (anything else stops with SchemaEvolutionError);
  TRUNCATE and DROP TABLE remove the target's rows; after RENAME TABLE the new name's changes go to its own target;
* ``try-evolve``: as evolve, but a column the target cannot take as it comes keeps its stored type and its values
  are cast to it (null where they do not fit);
* ``ignore``: the targets' columns never change (new columns are not written, changed types are cast to the
  stored ones) and TRUNCATE, DROP and RENAME TABLE leave the targets as they are;
* ``stop``: any of these stops the run before the batch writes anything (its offsets are not committed).

What was done is said in the batch's summary (``BatchReport.ddl``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.errors import ConfigError, SchemaError
from cdc_spark.merge.evolution import is_widening

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructType

POLICIES: Final = ("evolve", "try-evolve", "ignore", "stop")
TABLE_DDL: Final = {"TRUNCATE": "truncate", "ERASE": "drop", "RENAME": "rename"}
_NAME: Final = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_RENAME: Final = re.compile(rf"^\s*RENAME\s+TABLES?\s+({_NAME}(?:\s*\.\s*{_NAME})?)\s+TO\s+", re.IGNORECASE)
# the change frame's bookkeeping columns a truncate row fills, beside the table's (null) columns
_TRUNCATE_COLUMNS: Final = (
    "_cdc_op string, _cdc_commit_ts bigint, _cdc_sequence struct<commit_ts:bigint,partition:int,offset:bigint,"
    "position:int>, _cdc_database string, _cdc_table string, _cdc_schema_version bigint, _cdc_topic string,"
    " _cdc_partition int, _cdc_offset bigint"
)


class SchemaChangeStopped(SchemaError):
    """``--ddl stop``: a schema change reached the run; nothing of its batch was written."""


def check_policy(text: str) -> str:
    if text not in POLICIES:
        raise ConfigError(f"ddl {text!r}: expected one of {', '.join(POLICIES)}")
    return text


@attrs.frozen(kw_only=True)
class TableDdl:
    """One TRUNCATE, DROP or RENAME TABLE of the batch, where it was read."""

    kind: str  # truncate, drop, rename
    database: str
    table: str | None  # None: DROP DATABASE
    sql: str | None
    commit_ts: int | None
    partition: int | None
    offset: int | None

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}" if self.table else self.database

    def describe(self) -> str:
        if self.kind == "rename":
            return f"RENAME TABLE {renamed_from(self.sql) or '?'} TO {self.name}"
        what = "DATABASE" if self.table is None else "TABLE"
        return f"{self.kind.upper()} {what} {self.name}"

    def where(self) -> str:
        return f"partition {self.partition} offset {self.offset}, commit ts {self.commit_ts}"


def renamed_from(sql: str | None) -> str | None:
    """The old name of ``RENAME TABLE old TO new`` (unquoted), None when the statement is not one."""
    found = _RENAME.match(sql or "")
    if found is None:
        return None
    return ".".join(part.strip().strip("`").replace("``", "`") for part in re.split(r"`?\s*\.\s*`?", found[1]))


def table_ddls(rows: Iterable[Any]) -> list[TableDdl]:
    """The TRUNCATE, DROP and RENAME TABLE among collected control rows, in commit order."""
    found = [
        TableDdl(
            kind=TABLE_DDL[r["ddl_type"]],
            database=r["database"],
            table=r["table"],
            sql=r["sql"],
            commit_ts=r["commit_ts"],
            partition=r["partition"],
            offset=r["offset"],
        )
        for r in rows
        if r["kind"] == "ddl" and r["ddl_type"] in TABLE_DDL and r["database"] is not None
    ]
    return sorted(found, key=lambda d: (d.commit_ts or 0, d.partition or 0, d.offset or 0))


@attrs.frozen(kw_only=True)
class ColumnChanges:
    """How a batch's columns differ from its stored target's."""

    added: tuple[str, ...] = ()
    widened: tuple[str, ...] = ()  # the target can take them as they come (under the table format's rules)
    changed: tuple[str, ...] = ()  # it cannot: cast to the stored type, or stop
    stored: Mapping[str, DataType] = attrs.field(factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.widened or self.changed)


def column_changes(
    stored: StructType, batch: StructType, columns: Iterable[str], widens: Callable[[DataType, DataType], bool]
) -> ColumnChanges:
    """Compare the batch's written ``columns`` (types as they are stored) with the target's; ``widens(old, new)``
    says whether the table format widens a column in place."""
    types = {f.name: f.dataType for f in stored.fields}
    added, widened, changed = [], [], []
    for name in columns:
        old, new = types.get(name), batch[name].dataType
        if old is None:
            added.append(name)
        elif is_widening(new, old):
            continue  # the same, or narrower: cast up on write
        elif is_widening(old, new) and widens(old, new):
            widened.append(name)
        else:
            changed.append(name)
    return ColumnChanges(added=tuple(added), widened=tuple(widened), changed=tuple(changed), stored=types)


def format_widens(table_format: str) -> Callable[[DataType, DataType], bool]:
    """What the table format widens in place: Iceberg its promotions, Delta every widening (by a rewrite)."""
    if table_format == "iceberg":
        from cdc_spark.sinks.iceberg import promotable

        return promotable
    return lambda old, new: True


@attrs.frozen(kw_only=True)
class Conformed:
    """A target's batch under the policy: the frame to apply and what was done to it."""

    frame: DataFrame
    notes: tuple[str, ...] = ()


def conform(policy: str, target: str, frame: DataFrame, changes: ColumnChanges) -> Conformed:
    """The batch of ``target`` as the policy writes it (``stop`` raises on any change)."""
    if not changes or policy == "evolve":
        return Conformed(frame=frame)
    if policy == "stop":
        parts = [f"column {c} added" for c in changes.added]
        parts += [f"column {c} changed type from {changes.stored[c].simpleString()}" for c in (*changes.widened,
                  *changes.changed)]  # fmt: skip
        raise SchemaChangeStopped(
            f"--ddl stop: table {target}: {'; '.join(parts)}; nothing of the batch was written (run with --ddl "
            "evolve to apply it)"
        )
    cast = changes.changed if policy == "try-evolve" else (*changes.widened, *changes.changed)
    dropped = changes.added if policy == "ignore" else ()
    frame = frame.drop(*dropped)
    for name in cast:
        frame = frame.withColumn(name, _try_cast(name, changes.stored[name]))
    notes = [f"{target}: column {c} not added" for c in dropped]
    notes += [f"{target}: column {c} kept as {changes.stored[c].simpleString()}" for c in cast]
    return Conformed(frame=frame, notes=tuple(notes))


def _try_cast(name: str, data_type: DataType) -> Column:
    from pyspark.sql import functions as F

    return F.col(f"`{name.replace('`', '``')}`").try_cast(data_type)


@attrs.frozen(kw_only=True)
class TableDdlPlan:
    """What the policy does with the batch's table DDL: targets to empty (a truncate at the DDL), targets whose
    truncates are dropped, and the summary's notes."""

    # target -> the DROP that empties it and the dropped source table
    empty: Mapping[str, tuple[TableDdl, tuple[str, str]]] = attrs.field(factory=dict)
    keep_truncates: bool = True
    notes: tuple[str, ...] = ()


def plan_table_ddl(
    policy: str,
    ddl: Iterable[TableDdl],
    target_of: Callable[[str, str], str | None],
    tables: Callable[[str], list[str]],
) -> TableDdlPlan:
    """``target_of(database, table)``: the target of a source table (None: not applied); ``tables(database)``: the
    tables of a database this run knows (for DROP DATABASE)."""
    empty: dict[str, tuple[TableDdl, tuple[str, str]]] = {}
    notes: list[str] = []
    for item in ddl:
        names = [item.table] if item.table is not None else tables(item.database)
        routed = {name: target_of(item.database, name) for name in names}
        targets = sorted({t for t in routed.values() if t is not None})
        if not targets and item.kind != "rename":
            continue
        if policy == "stop":
            raise SchemaChangeStopped(
                f"--ddl stop: {item.describe()} at {item.where()}; nothing of the batch was written (run with --ddl "
                "evolve or ignore to go past it)"
            )
        if policy == "ignore":
            notes.append(f"{item.describe()} ignored")
        elif item.kind == "truncate":
            notes.append(f"{item.describe()}: rows removed")
        elif item.kind == "drop":
            empty.update({t: (item, (item.database, name)) for name, t in routed.items() if t is not None})
            notes.append(f"{item.describe()}: rows of {', '.join(targets)} removed")
        else:
            old = renamed_from(item.sql)
            kept = f"; {old}'s target kept as it was" if old else ""
            notes.append(f"{item.describe()}: its changes go to {', '.join(targets) or 'no target'}{kept}")
    return TableDdlPlan(empty=empty, keep_truncates=policy != "ignore", notes=tuple(notes))


def truncate_frame(spark: Any, columns: StructType, item: TableDdl, database: str, table: str) -> DataFrame:
    """One truncate change at ``item`` (a DROP TABLE) in a change frame of ``columns`` (the table's columns null)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    cdc = T._parse_datatype_string(_TRUNCATE_COLUMNS)
    assert isinstance(cdc, T.StructType)
    values = {
        "_cdc_op": F.lit("truncate"),
        "_cdc_commit_ts": F.lit(item.commit_ts),
        "_cdc_sequence": F.struct(
            F.lit(item.commit_ts).alias("commit_ts"),
            F.lit(item.partition).alias("partition"),
            F.lit(item.offset).alias("offset"),
            F.lit(0).alias("position"),
        ),
        "_cdc_database": F.lit(database),
        "_cdc_table": F.lit(table),
        "_cdc_partition": F.lit(item.partition),
        "_cdc_offset": F.lit(item.offset),
    }
    fields = [f for f in columns.fields if f.name not in cdc.names] + list(cdc.fields)
    frame: DataFrame = spark.range(1).select(
        *[(values[f.name] if f.name in values else F.lit(None)).cast(f.dataType).alias(f.name) for f in fields]
    )
    return frame


__all__ = [
    "POLICIES",
    "ColumnChanges",
    "Conformed",
    "SchemaChangeStopped",
    "TableDdl",
    "TableDdlPlan",
    "check_policy",
    "column_changes",
    "conform",
    "format_widens",
    "plan_table_ddl",
    "renamed_from",
    "table_ddls",
    "truncate_frame",
]
