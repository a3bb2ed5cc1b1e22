"""The cluster sink: the same merge plan run as Spark SQL ``MERGE INTO`` on a MERGE-capable catalog.

Select it with ``--option sink=spark-merge`` (``job.py``) when the cluster's Spark has Delta Lake or Iceberg
jars and a catalog configured for them; target tables are ``<catalog-prefix>.<database>_<table>`` or a fixed
name. The plan's sequence predicate makes a replayed batch write nothing new (the stored sequences already
equal the batch's), and for Delta the app transaction is set through Delta's ``txnAppId``/``txnVersion``
session options, which Delta checks for idempotent writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.errors import ConfigError
from cdc_spark.apply import (
    CHANGED_PREFIX,
    DELETED,
    DROP,
    END_AT,
    END_SEQUENCE,
    SEQUENCE,
    START_SEQUENCE,
    UPDATED_AT,
    MergePlan,
    live_filter,
)
from cdc_spark.sinks import BatchInfo

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMATS: Final = ("delta", "iceberg")


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def merge_sql(plan: MergePlan, target: str, source: str) -> str:
    """The ``MERGE INTO`` statement applying ``plan`` (registered as view ``source``) to ``target``."""
    spec = plan.spec
    if spec.scd == 1:
        on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in spec.keys)
        sets = [f"t.{quote(k)} = s.{quote(k)}" for k in spec.keys]
        for column in spec.value_columns:
            newer = f"s.{quote(CHANGED_PREFIX + column)} > t.{quote(SEQUENCE)}"  # see MergePlan
            sets.append(f"t.{quote(column)} = CASE WHEN {newer} THEN s.{quote(column)} ELSE t.{quote(column)} END")
        stamp = "current_timestamp()"
        sets += [f"t.{quote(SEQUENCE)} = s.{quote(SEQUENCE)}", f"t.{quote(DELETED)} = s.{quote(DELETED)}"]
        sets.append(f"t.{quote(UPDATED_AT)} = {stamp}")
        columns = [*spec.columns, SEQUENCE, DELETED, UPDATED_AT]
        values = [f"s.{quote(c)}" for c in columns[:-1]] + [stamp]
        return (
            f"MERGE INTO {target} t USING {source} s ON {on}\n"
            f"WHEN MATCHED AND s.{quote(SEQUENCE)} > t.{quote(SEQUENCE)} THEN UPDATE SET {', '.join(sets)}\n"
            f"WHEN NOT MATCHED THEN INSERT ({', '.join(quote(c) for c in columns)}) VALUES ({', '.join(values)})"
        )
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in (*spec.keys, START_SEQUENCE))
    columns = [c for c in plan.source.columns if c != DROP]
    assignments = ", ".join(f"t.{quote(c)} = s.{quote(c)}" for c in columns)
    return (
        f"MERGE INTO {target} t USING {source} s ON {on}\n"
        f"WHEN MATCHED AND s.{quote(DROP)} THEN DELETE\n"
        f"WHEN MATCHED THEN UPDATE SET {assignments}\n"
        f"WHEN NOT MATCHED AND NOT s.{quote(DROP)} THEN INSERT ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join(f's.{quote(c)}' for c in columns)})"
    )


def truncate_sql(plan: MergePlan, target: str) -> str:
    floor = plan.truncate_sequence
    if floor is None:
        raise ConfigError("truncate_sql needs a plan with a truncate")
    if plan.spec.scd == 1:
        return (
            f"UPDATE {target} SET {quote(DELETED)} = true, {quote(SEQUENCE)} = {literal(floor)}, "
            f"{quote(UPDATED_AT)} = current_timestamp() "
            f"WHERE {quote(SEQUENCE)} < {literal(floor)} AND NOT {quote(DELETED)}"
        )
    end_at = "NULL" if plan.truncate_time is None else str(plan.truncate_time)
    return (
        f"UPDATE {target} SET {quote(END_SEQUENCE)} = {literal(floor)}, {quote(END_AT)} = {end_at} "
        f"WHERE {quote(END_SEQUENCE)} IS NULL AND {quote(START_SEQUENCE)} < {literal(floor)}"
    )


def create_sql(plan: MergePlan, target: str, table_format: str) -> str:
    fields = [f for f in plan.source.schema.fields if not f.name.startswith(CHANGED_PREFIX) and f.name != DROP]
    columns = [f"{quote(f.name)} {f.dataType.simpleString()}" for f in fields]
    if plan.spec.scd == 1:
        columns.append(f"{quote(UPDATED_AT)} timestamp")
    return f"CREATE TABLE IF NOT EXISTS {target} ({', '.join(columns)}) USING {table_format}"


class MergeUnsupportedError(ConfigError):
    """The target's catalog cannot run MERGE INTO (no Delta Lake or Iceberg on this Spark)."""


@attrs.define
class SparkMergeSink:
    """Tables ``{prefix}.{database}_{table}`` (or ``table_name``) in a MERGE-capable Spark catalog."""

    spark: SparkSession
    prefix: str | None = None
    table_name: str | None = None
    table_format: str = "delta"

    def __attrs_post_init__(self) -> None:
        if self.table_format not in FORMATS:
            raise ConfigError(f"spark-merge table format {self.table_format!r}: expected one of {FORMATS}")

    def target(self, table: str) -> str:
        if self.table_name is not None:
            return self.table_name
        database, _, name = table.partition(".")
        local = quote(f"{database}_{name}" if name else database)
        return f"{self.prefix}.{local}" if self.prefix else local

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None:
        name = self.target(table)
        if not spark.catalog.tableExists(name):
            return None
        return spark.table(name)

    def committed(self, table: str, batch: BatchInfo) -> bool:
        return False  # replays are absorbed by the sequence predicate (and Delta's txnAppId/txnVersion)

    def live(self, spark: SparkSession, table: str) -> DataFrame:
        stored = spark.table(self.target(table))
        return live_filter(2 if START_SEQUENCE in stored.columns else 1)(stored)

    def write(self, plan: MergePlan, batch: BatchInfo | None) -> bool:
        from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
        from pyspark.errors import PySparkException

        target = self.target(plan.spec.table)
        view = f"cdc_merge_source_{abs(hash((plan.spec.table, id(plan)))):x}"
        plan.source.createOrReplaceTempView(view)
        statements = [] if self.spark.catalog.tableExists(target) else [create_sql(plan, target, self.table_format)]
        if plan.truncate_sequence is not None:
            statements.append(truncate_sql(plan, target))
        statements.append(merge_sql(plan, target, view))
        if batch is not None and self.table_format == "delta":
            self.spark.conf.set("spark.databricks.delta.write.txnAppId", batch.app_id)
            self.spark.conf.set("spark.databricks.delta.write.txnVersion", str(batch.batch_id))
        try:
            for statement in statements:
                self.spark.sql(statement)
        except (PySparkException, Py4JJavaError) as exc:
            text = str(exc)
            if "MERGE" in text.upper() or "UPDATE" in text.upper() or "DATA_SOURCE_NOT_FOUND" in text:
                raise MergeUnsupportedError(
                    f"table {target}: this Spark catalog cannot run MERGE INTO/UPDATE for {self.table_format}"
                    f" tables ({_condition(text)}); add the Delta Lake or Iceberg jars"
                    " and catalog settings, or use the embedded Delta sink (sink=delta)"
                ) from exc
            raise
        finally:
            self.spark.catalog.dropTempView(view)
            if batch is not None and self.table_format == "delta":
                self.spark.conf.unset("spark.databricks.delta.write.txnAppId")
                self.spark.conf.unset("spark.databricks.delta.write.txnVersion")
        return True


def _condition(text: str) -> str:
    """The error condition (``[DATA_SOURCE_NOT_FOUND]``) or the first line of a Spark error."""
    start = text.find("[")
    end = text.find("]", start)
    if start >= 0 and end > start:
        return text[start + 1 : end]
    return text.splitlines()[0] if text else "error"


__all__ = ["MergeUnsupportedError", "SparkMergeSink", "create_sql", "merge_sql", "truncate_sql"]
