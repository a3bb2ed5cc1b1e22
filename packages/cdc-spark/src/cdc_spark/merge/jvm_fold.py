"""The SCD1 fold (:func:`cdc_spark.merge.scd1.fold`) as one pass over the changes sorted by key, in the JVM.

Spark's window over the key costs most of the fold on a large batch: each key is a frame of its own, and at 10^6
keys of one change each the window took about 1 s of the round (2-core machine) on top of its shuffle and sort.
Here Spark still shuffles the changes by key and sorts them, newest first within a key, and the project's
``cdc.spark.merge.NewestPerKey`` walks the sorted rows: a key's row is its newest change's, with each value column
(and the newest full image's sequence) taken from the newest change that set it. The rows are those of the SQL fold,
column for column (``test_fold_in_jvm.py`` holds them against it), and the frame keeps the shuffle's partitioning by
the key, which the resolve's join with the stored keys then reuses.

Keys are compared by their bytes there, so only key types whose equal values have equal bytes are folded this way
(:data:`BYTE_EQUAL_TYPES`; strings of the default collation); other keys, and sessions without the project's Java
code, get the SQL fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.merge.columns import ORDER
from cdc_spark.merge.spec import ApplySpec
from cdc_spark.merge.statements import literal, quote
from cdc_spark.runtime.java_names import static_method
from cdc_spark.session_conf import temporary_views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

SET_PREFIX: Final = "__cdc_set__"  # scd1's: the sequence of the batch's newest change that set a column
_FLAG: Final = "__cdc_sets_{}"  # whether a change sets a group: a value column and its sequence, or the image
ROWS_PER_PARTITION: Final = 500_000  # stored keys and changes a walked fold's task joins, at most
BYTE_EQUAL_TYPES: Final = frozenset(
    {"byte", "short", "integer", "long", "decimal", "date", "timestamp", "timestamp_ntz", "boolean", "binary"}
)


def byte_equal(data_type: DataType) -> bool:
    """Whether equal values of ``data_type`` always have the same bytes in Spark's rows (no -0.0 against 0.0, no
    NaNs, no collation that compares different strings equal)."""
    from pyspark.sql.types import StringType

    if isinstance(data_type, StringType):
        return getattr(data_type, "collation", "UTF8_BINARY") == "UTF8_BINARY"
    return data_type.typeName() in BYTE_EQUAL_TYPES


def foldable(schema: StructType, spec: ApplySpec) -> bool:
    """Whether changes of ``schema`` can be folded by :func:`fold_in_jvm`: every key column byte-equal."""
    return all(byte_equal(schema[key].dataType) for key in spec.keys)


def _laid_out_sql(source: str, columns: Sequence[str], spec: ApplySpec, partial_updates: bool) -> tuple[str, list[int]]:
    """SQL of the changes in ``source`` laid out for the walk (the SQL fold's columns, a flag after each group, then
    the order), and the walk's groups as (first column, columns, flag column) triples."""
    op, order = quote("_cdc_op"), quote(ORDER)
    kept = f"{op} != 'delete'"  # a delete leaves nothing behind
    partial = partial_updates and "_cdc_changed_columns" in columns
    is_partial = f"({op} = 'update' AND _cdc_changed_columns IS NOT NULL)" if partial else "false"
    selected = [
        *[quote(k) for k in spec.keys],
        f"{order}.s AS __cdc_n_seq",
        f"{op} AS __cdc_n_op",
        *[quote(c) for c in spec.metadata],
    ]
    groups: list[int] = []

    def group(values: list[str], sets: str) -> None:
        groups.extend([len(selected), len(values), len(selected) + len(values)])
        selected.extend([*values, f"{sets} AS {_FLAG.format(len(groups) // 3)}"])

    # a group's columns nullable, as the walk leaves them null where no change sets them (and the window's are)
    sets = f"NOT {is_partial}"
    group([f"CASE WHEN {sets} THEN {order}.s END AS __cdc_n_image"], sets)
    for name in spec.value_columns:
        sets = f"(NOT {is_partial} OR array_contains(_cdc_changed_columns, {literal(name)}))" if partial else "true"
        value = f"CASE WHEN {kept} THEN {quote(name)} END AS {quote(name)}"
        group([value, f"CASE WHEN {sets} THEN {order}.s END AS {quote(SET_PREFIX + name)}"], sets)
    return f"SELECT {', '.join([*selected, order])} FROM {source}", groups


def partitions_for(spark: SparkSession, rows: int | None) -> int:
    """The partitions a walked fold and its join with the stored keys take for ``rows`` (the table's stored keys and
    changes; None: not counted): one for every :data:`ROWS_PER_PARTITION`, at most the session's shuffle partitions.
    Adaptive execution does not merge them as it would a join's own shuffle: the join's other side is shuffled
    into as many."""
    most = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    if rows is None:
        return most
    return max(1, min(most, -(-rows // ROWS_PER_PARTITION)))


def fold_in_jvm(changes: DataFrame, spec: ApplySpec, partial_updates: bool, partitions: int) -> DataFrame:
    """The SQL fold's rows and columns (:func:`cdc_spark.merge.scd1.fold`) of ``changes`` (:func:`~cdc_spark.merge.
    batch.ordered`'s frame), hash partitioned by the keys into ``partitions``. The caller checks :func:`foldable`
    and that the project's Java code is installed. Spark runs the changes' shuffle when the frame is made."""
    from pyspark.sql import DataFrame as PyDataFrame
    from pyspark.sql import functions as F

    spark = changes.sparkSession
    jvm: Any = spark._jvm
    with temporary_views(spark, changes, prefix="cdc_fold") as (source,):
        statement, groups = _laid_out_sql(source, changes.columns, spec, partial_updates)
        laid_out = spark.sql(statement)
    keys = [F.col(quote(k)) for k in spec.keys]
    newest_first = laid_out.repartition(partitions, *keys).sortWithinPartitions(*keys, F.col(quote(ORDER)).desc())
    triples = spark.sparkContext._gateway.new_array(jvm.int, len(groups))  # type: ignore[union-attr]
    for i, value in enumerate(groups):
        triples[i] = value
    walk = static_method(jvm, "cdc.spark.merge.NewestPerKey", "of")
    folded = PyDataFrame(walk(newest_first.drop(ORDER)._jdf, len(spec.keys), triples, partitions), spark)
    flags = {_FLAG.format(i + 1) for i in range(len(groups) // 3)}
    return folded.select(*[quote(c) for c in folded.columns if c not in flags])


__all__ = ["BYTE_EQUAL_TYPES", "ROWS_PER_PARTITION", "byte_equal", "fold_in_jvm", "foldable", "partitions_for"]
