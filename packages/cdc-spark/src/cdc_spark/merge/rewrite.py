"""What a MERGE leaves in a table, as a query over the table's rows: for a format that rewrites a small table whole
instead of running the MERGE (:meth:`cdc_spark.sinks.delta.DeltaFormat.rewrite`).

The rows are those the :class:`~cdc_spark.merge.statements.Merge` rule's statement would leave, given a source with
at most one row per key (what the sink's resolve gives): a target row no source row matches is kept as it is; a
matched row is deleted where ``delete_when`` holds, else updated by ``update``; a source row that matches nothing is
inserted where ``insert_when`` holds. A condition that is null counts as false, as in MERGE.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

from cdc_spark.merge.statements import Merge, quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

# marks a joined row's side as present (a key column can't tell: the full outer join leaves it null on one side)
_IN_TARGET: Final = "__cdc_in_target"
_IN_SOURCE: Final = "__cdc_in_source"


def merged_rows(target: DataFrame, source: DataFrame, rule: Merge, schema: StructType) -> DataFrame:
    """Every row of the table after MERGEing ``source`` into ``target`` (its rows) by ``rule``, in the table's
    columns and types (``schema``). A rule bounded by ``within`` is not supported (its MERGE reads part of a table)."""
    from pyspark.sql import functions as F

    if rule.within is not None:
        raise ValueError("a MERGE rule bounded by 'within' cannot be applied as a rewrite")
    t = target.withColumn(_IN_TARGET, F.lit(True)).alias("t")
    s = source.withColumn(_IN_SOURCE, F.lit(True)).alias("s")
    on = functools.reduce(
        lambda left, right: left & right,
        [_key_match(F.col(f"t.{quote(c)}"), F.col(f"s.{quote(c)}"), c in rule.nullable) for c in rule.on],
    )
    joined = t.join(s, on, "full_outer")
    in_target, in_source = F.col(f"t.{_IN_TARGET}").isNotNull(), F.col(f"s.{_IN_SOURCE}").isNotNull()
    matched = in_target & in_source
    deleted = _holds(rule.delete_when) if rule.delete_when is not None else F.lit(False)
    inserted = _holds(rule.insert_when) if rule.insert_when is not None else F.lit(True)
    kept = (in_target & ~in_source) | (matched & ~deleted) | (~in_target & inserted)
    updates = dict(rule.update)
    columns: list[Column] = []
    for field in schema.fields:
        stored = F.col(f"t.{quote(field.name)}")
        updated = F.expr(updates[field.name]) if field.name in updates else stored
        new = F.col(f"s.{quote(field.name)}") if field.name in rule.insert else F.lit(None)
        value = F.when(~in_source, stored).when(matched, updated).otherwise(new)
        columns.append(value.cast(field.dataType).alias(field.name))
    return joined.where(kept).select(*columns)


def _key_match(stored: Column, given: Column, null_safe: bool) -> Column:
    return stored.eqNullSafe(given) if null_safe else stored == given


def _holds(condition: str) -> Column:
    from pyspark.sql import functions as F

    return F.coalesce(F.expr(condition), F.lit(False))


__all__ = ["merged_rows"]
