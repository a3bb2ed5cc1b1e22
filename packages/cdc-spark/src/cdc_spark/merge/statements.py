"""The SQL every table format runs: one generator for CREATE, ALTER and MERGE, and the four MERGE rules.

Delta Lake and Iceberg both execute these statements on Spark; a format only supplies the table identifiers
(``delta.`path```, ``catalog.db.table``). The merge rules (:func:`merges`) are written here once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from cdc_spark.merge.columns import (
    ACTION,
    COLUMN_SEQUENCES,
    DELETED_AT,
    DROP,
    END_AT,
    END_SEQUENCE,
    IMAGE_SEQUENCE,
    KEY,
    SEQUENCE,
    START_AT,
    START_SEQUENCE,
    TABLE,
    WRITE_PREFIX,
)
from cdc_spark.merge.spec import ApplySpec

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructField, StructType


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def timestamp(moment: dt.datetime) -> str:
    return f"TIMESTAMP {literal(moment.astimezone(dt.UTC).strftime('%Y-%m-%d %H:%M:%S.%f') + '+00:00')}"


def sql_type(data_type: DataType) -> str:
    """A Spark type as SQL DDL text, nested field names quoted."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return "struct<" + ", ".join(f"{quote(f.name)}: {sql_type(f.dataType)}" for f in data_type.fields) + ">"
    if isinstance(data_type, T.ArrayType):
        return f"array<{sql_type(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"map<{sql_type(data_type.keyType)}, {sql_type(data_type.valueType)}>"
    return data_type.simpleString()


def columns_ddl(fields: Iterable[StructField]) -> str:
    return ", ".join(f"{quote(f.name)} {sql_type(f.dataType)}" for f in fields)


def properties_sql(properties: Mapping[str, str]) -> str:
    return ", ".join(f"{literal(k)} = {literal(v)}" for k, v in sorted(properties.items()))


def create_table(
    table: str, schema: StructType, using: str, properties: Mapping[str, str], partitioned_by: tuple[str, ...] = ()
) -> str:
    parts = f" PARTITIONED BY ({', '.join(quote(c) for c in partitioned_by)})" if partitioned_by else ""
    extra = f" TBLPROPERTIES ({properties_sql(properties)})" if properties else ""
    return f"CREATE TABLE IF NOT EXISTS {table} ({columns_ddl(schema.fields)}) USING {using}{parts}{extra}"


def add_columns(table: str, fields: Iterable[StructField]) -> str:
    return f"ALTER TABLE {table} ADD COLUMNS ({columns_ddl(fields)})"


def alter_type(table: str, field: StructField) -> str:
    return f"ALTER TABLE {table} ALTER COLUMN {quote(field.name)} TYPE {sql_type(field.dataType)}"


def set_properties(table: str, properties: Mapping[str, str]) -> str:
    return f"ALTER TABLE {table} SET TBLPROPERTIES ({properties_sql(properties)})"


def purge_tombstones(table: str, cutoff: dt.datetime) -> str:
    return f"DELETE FROM {table} WHERE {quote(DELETED_AT)} < {timestamp(cutoff)}"


@attrs.frozen(kw_only=True)
class Merge:
    """One MERGE rule: match on ``on``, delete matched rows where ``delete_when``, update the others with
    ``update``, insert unmatched rows where ``insert_when``."""

    on: tuple[str, ...]
    update: tuple[tuple[str, str], ...]  # (column, expression over t. and s.)
    insert: tuple[str, ...]
    delete_when: str | None = None
    insert_when: str | None = None
    nullable: tuple[str, ...] = ()  # columns of ``on`` matched null-safely (keys are never null)
    within: str | None = None  # a condition on the target alone, ANDed to ``on``: the files the MERGE may touch

    def match(self) -> str:
        """The condition a target row ``t`` and a source row ``s`` match on: the keys (without ``within``)."""
        return " AND ".join(f"t.{quote(c)} {'<=>' if c in self.nullable else '='} s.{quote(c)}" for c in self.on)

    def sql(self, target: str, source: str) -> str:
        on = self.match()
        if self.within is not None:
            on = f"{on} AND {self.within}"
        lines = [f"MERGE INTO {target} t USING {source} s ON {on}"]
        if self.delete_when is not None:
            lines.append(f"WHEN MATCHED AND {self.delete_when} THEN DELETE")
        if self.update:
            sets = ", ".join(f"t.{quote(c)} = {expression}" for c, expression in self.update)
            lines.append(f"WHEN MATCHED THEN UPDATE SET {sets}")
        when = f" AND {self.insert_when}" if self.insert_when else ""
        columns = ", ".join(quote(c) for c in self.insert)
        values = ", ".join(f"s.{quote(c)}" for c in self.insert)
        lines.append(f"WHEN NOT MATCHED{when} THEN INSERT ({columns}) VALUES ({values})")
        return "\n".join(lines)


@attrs.frozen
class Merges:
    target: Merge
    state: Merge


KEY_STATE: tuple[str, ...] = (SEQUENCE, DELETED_AT, IMAGE_SEQUENCE, COLUMN_SEQUENCES)


def key_state_merge(tables: Iterable[str]) -> Merge:
    """The MERGE of a batch's new SCD1 key state rows, every table's at once, into the sink's key state; only the
    partitions of the batch's ``tables`` are read for matches."""
    names = ", ".join(literal(t) for t in sorted(tables))
    return Merge(
        on=(TABLE, KEY),
        within=f"t.{quote(TABLE)} IN ({names})",
        update=tuple((c, f"s.{quote(c)}") for c in KEY_STATE),
        insert=(TABLE, KEY, *KEY_STATE),
    )


def merges(spec: ApplySpec) -> Merges:
    """The MERGE rules of a spec: its target and its state (SCD1: the sink's key state, :func:`key_state_merge`)."""
    if spec.scd == 1:
        written = (*spec.value_columns, *spec.metadata)
        updates = tuple(
            (c, f"CASE WHEN s.{quote(WRITE_PREFIX + c)} THEN s.{quote(c)} ELSE t.{quote(c)} END") for c in written
        )
        return Merges(
            target=Merge(
                on=spec.keys,
                delete_when=f"s.{quote(ACTION)} = 'delete'",
                update=updates,
                insert=spec.target_columns,
                insert_when=f"s.{quote(ACTION)} = 'upsert'",
            ),
            state=key_state_merge([spec.table]),
        )

    def versions(identity: str, columns: tuple[str, ...]) -> Merge:
        return Merge(
            on=(*spec.keys, identity),
            nullable=(identity,),
            delete_when=f"s.{quote(DROP)}",
            update=tuple((c, f"s.{quote(c)}") for c in columns if c not in spec.keys and c != identity),
            insert=columns,
            insert_when=f"NOT s.{quote(DROP)}",
        )

    shown = (*spec.target_columns, START_AT, END_AT)
    return Merges(
        target=versions(START_AT, shown),
        state=versions(START_SEQUENCE, (*shown, START_SEQUENCE, END_SEQUENCE)),
    )


__all__ = [
    "Merge",
    "Merges",
    "add_columns",
    "alter_type",
    "columns_ddl",
    "create_table",
    "key_state_merge",
    "literal",
    "merges",
    "purge_tombstones",
    "quote",
    "set_properties",
    "sql_type",
    "timestamp",
]
