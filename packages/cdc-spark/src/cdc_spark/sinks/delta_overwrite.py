"""Partitions of a Delta table replaced by new rows in a transaction of the sink's own: what Spark's dynamic
partition overwrite does, without its Spark jobs over the table's file list.

The SCD1 key state is written once a batch by replacing the partitions of the batch's tables
(:mod:`cdc_spark.sinks.scd1_batch`). As ``INSERT OVERWRITE`` in dynamic mode, Delta finds the files of the partitions
written by filtering the version's whole file list in a Spark job, after rebuilding that list from the log: three
jobs, 0.2 s of a small batch. Here the files are listed as :mod:`cdc_spark.sinks.delta_partitions` lists them, from
the version's checksum where Delta keeps the list there (no job), and removed in the commit that adds the new ones.

Conflicts are those of the dynamic overwrite: the transaction records a read of the written partitions (a predicate
on the partition column), so a concurrent commit that adds a file to one of them, removes a file this one removes or
changes the table's metadata fails it, and writes to other partitions (another job's tables in a shared key state)
do not. A table partitioned otherwise, or whose protocol asks for more than a plain write carries over
(:func:`~cdc_spark.sinks.delta_rewrite.partitioned_plainly`), is left to Delta's own overwrite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cdc_spark.merge.statements import literal, quote
from cdc_spark.runtime.java_names import java_class, option
from cdc_spark.sinks.delta_partitions import partition_actions
from cdc_spark.sinks.delta_rewrite import commit_marked, log_and_snapshot, partitioned_plainly

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def replace_partitions(
    spark: SparkSession,
    location: str,
    rows: DataFrame,
    column: str,
    *,
    transaction: tuple[str, int] | None,
    user_metadata: str | None,
) -> dict[str, frozenset[str]] | None:
    """Every partition (by ``column``, the table's only partition column) that ``rows`` has rows of replaced by them
    in the Delta table at ``location``, in one commit that records ``transaction`` (app id, version) and
    ``user_metadata`` (``rows`` hold no null ``column``): the files written, by partition value, as the log names
    them. None, with nothing written, where the table is partitioned otherwise or its protocol asks for more than a
    plain write."""
    jvm: Any = spark._jvm
    scala = java_class(jvm, "scala.jdk.javaapi.CollectionConverters")
    log, snapshot = log_and_snapshot(spark, location)
    if snapshot.version() < 0 or not partitioned_plainly(snapshot, column):
        return None
    txn = log.startTransaction(option(jvm, None), option(jvm, snapshot))
    actions = java_class(jvm, "java.util.ArrayList")(scala.asJava(txn.writeFiles(rows._jdf)))
    files = _files_by_value(actions, column)
    written = sorted(files)
    if written:
        among = ", ".join(literal(value) for value in written)
        predicate = spark._jsparkSession.sessionState().sqlParser().parseExpression(f"{quote(column)} IN ({among})")
        read = java_class(jvm, "java.util.ArrayList")()
        read.add(predicate)
        # a concurrent commit that adds a file to these partitions fails this one, as it fails the overwrite
        txn.trackReadPredicates(scala.asScala(read).toSeq(), True, True)
        for added in partition_actions(snapshot, column, written):
            actions.add(added.remove())
    commit_marked(spark, txn, actions, transaction=transaction, user_metadata=user_metadata, dynamic=True)
    return {value: frozenset(paths) for value, paths in files.items()}


def _files_by_value(actions: Any, column: str) -> dict[str, set[str]]:
    """The paths of the written files (Delta ``AddFile``s, a Java list) by the value of ``column`` they are in."""
    files: dict[str, set[str]] = {}
    found = actions.iterator()
    while found.hasNext():
        added = found.next()
        value = added.partitionValues().get(column)
        if not value.isDefined() or value.get() is None:
            # the caller's rows are the key state's, whose partition column is a table name: never null
            raise ValueError(f"a row to replace partitions by has no {column}")
        files.setdefault(str(value.get()), set()).add(str(added.path()))
    return files


__all__ = ["replace_partitions"]
