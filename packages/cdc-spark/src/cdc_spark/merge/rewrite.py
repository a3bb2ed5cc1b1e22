"""What a MERGE leaves in a table, as a query over the table's rows: for a format that rewrites a small table whole
instead of running the MERGE (:meth:`cdc_spark.sinks.delta.DeltaFormat.rewrite`).

The rows are those the :class:`~cdc_spark.merge.statements.Merge` rule's statement would leave, given a source with
at most one row per key (what the sink's resolve gives): a target row no source row matches is kept as it is; a
matched row is deleted where ``delete_when`` holds, else updated by ``update``; a source row that matches nothing is
inserted where ``insert_when`` holds. A condition that is null counts as false, as in MERGE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cdc_spark.merge.statements import Merge, quote, sql_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

# marks a joined row's side as present (a key column can't tell: the full outer join leaves it null on one side)
_IN_TARGET: Final = "__cdc_in_target"
_IN_SOURCE: Final = "__cdc_in_source"


def merged_rows(target: DataFrame, source: DataFrame, rule: Merge, schema: StructType) -> DataFrame:
    """Every row of the table after MERGEing ``source`` into ``target`` (its rows) by ``rule``, in the table's
    columns and types (``schema``). A rule bounded by ``within`` is not supported (its MERGE reads part of a table).
    Written as SQL text, planned at once (a Column function per column would cost a py4j call each)."""
    from pyspark.sql import functions as F

    if rule.within is not None:
        raise ValueError("a MERGE rule bounded by 'within' cannot be applied as a rewrite")
    t = target.selectExpr("*", f"true AS {_IN_TARGET}").alias("t")
    s = source.selectExpr("*", f"true AS {_IN_SOURCE}").alias("s")
    in_target, in_source = f"t.{_IN_TARGET} IS NOT NULL", f"s.{_IN_SOURCE} IS NOT NULL"
    matched = f"({in_target} AND {in_source})"
    deleted = _holds(rule.delete_when) if rule.delete_when is not None else "false"
    inserted = _holds(rule.insert_when) if rule.insert_when is not None else "true"
    kept = f"(NOT ({in_source})) OR ({matched} AND NOT {deleted}) OR (NOT ({in_target}) AND {inserted})"
    updates = dict(rule.update)
    columns: list[str] = []
    for field in schema.fields:
        name = quote(field.name)
        updated = updates.get(field.name, f"t.{name}")
        new = f"s.{name}" if field.name in rule.insert else "NULL"
        value = f"CASE WHEN NOT ({in_source}) THEN t.{name} WHEN {matched} THEN {updated} ELSE {new} END"
        columns.append(f"CAST({value} AS {sql_type(field.dataType)}) AS {name}")
    return t.join(s, F.expr(rule.match()), "full_outer").where(kept).selectExpr(*columns)


def _holds(condition: str) -> str:
    """A condition that counts null as false, as MERGE's do."""
    return f"COALESCE(({condition}), false)"


__all__ = ["merged_rows"]
