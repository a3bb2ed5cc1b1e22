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
from cdc_spark.merge.statements import literal, quote, sql_type
from cdc_spark.runtime.java_names import java_array, static_method
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


def _laid_out_sql(
    source: str, columns: Sequence[str], spec: ApplySpec, partial_updates: bool, seq_type: DataType
) -> tuple[str, list[int], list[str]]:
    """SQL of the changes in ``source`` laid out for the walk, the walk's groups as (first column, columns, flag
    column, sequence column) quadruples, and the SQL fold's columns over the walk's rows.

    A row carries its sequence once: a group's sequence column is a null the walk fills only when it takes the group
    from an older change than the key's newest, and the fold's columns read the newest's where it is null. The order's
    tiebreaks are columns of their own, for the sort."""
    op, order = quote("_cdc_op"), quote(ORDER)
    kept = f"{op} != 'delete'"  # a delete leaves nothing behind
    partial = partial_updates and "_cdc_changed_columns" in columns
    is_partial = f"({op} = 'update' AND _cdc_changed_columns IS NOT NULL)" if partial else "false"
    lead = [*[quote(k) for k in spec.keys], "__cdc_n_seq", "__cdc_n_op", *[quote(c) for c in spec.metadata]]
    selected = [
        *lead[: len(spec.keys)],
        f"{order}.s AS __cdc_n_seq",
        f"{op} AS __cdc_n_op",
        *lead[len(spec.keys) + 2 :],
    ]
    folded = list(lead)
    groups: list[int] = []
    unset = f"CAST(NULL AS {sql_type(seq_type)})"

    def group(values: dict[str, str], seq_name: str, sets: str) -> None:
        flag, number = _FLAG.format(len(groups) // 4 + 1), len(selected)
        groups.extend([number, len(values), number + len(values), number + len(values) + 1])
        selected.extend([*(f"{value} AS {quote(name)}" for name, value in values.items()), f"{sets} AS {flag}"])
        selected.append(f"{unset} AS {quote(seq_name)}")
        folded.extend(quote(name) for name in values)
        folded.append(f"CASE WHEN {flag} THEN coalesce({quote(seq_name)}, __cdc_n_seq) END AS {quote(seq_name)}")

    group({}, "__cdc_n_image", f"NOT {is_partial}")
    for name in spec.value_columns:
        sets = f"(NOT {is_partial} OR array_contains(_cdc_changed_columns, {literal(name)}))" if partial else "true"
        group({name: f"CASE WHEN {kept} THEN {quote(name)} END"}, SET_PREFIX + name, sets)
    selected += [f"{order}.r AS __cdc_r", f"{order}.h AS __cdc_h"]
    return f"SELECT {', '.join(selected)} FROM {source}", groups, folded


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
    seq_type = changes.schema[ORDER].dataType["s"].dataType  # type: ignore[index]
    with temporary_views(spark, changes, prefix="cdc_fold") as (source,):
        statement, groups, columns = _laid_out_sql(source, changes.columns, spec, partial_updates, seq_type)
        laid_out = spark.sql(statement)
    keys = [F.col(quote(k)) for k in spec.keys]
    newest_first = [F.col(c).desc() for c in ("__cdc_n_seq", "__cdc_r", "__cdc_h")]  # as the order's struct sorts
    walked = (
        laid_out.repartition(partitions, *keys).sortWithinPartitions(*keys, *newest_first).drop("__cdc_r", "__cdc_h")
    )
    quadruples = java_array(spark, "int", groups)
    walk = static_method(jvm, "cdc.spark.merge.NewestPerKey", "of")
    sequence = len(spec.keys)  # __cdc_n_seq's column
    folded = PyDataFrame(walk(walked._jdf, len(spec.keys), sequence, quadruples, partitions), spark)
    return folded.selectExpr(*columns)


__all__ = ["BYTE_EQUAL_TYPES", "ROWS_PER_PARTITION", "byte_equal", "fold_in_jvm", "foldable", "partitions_for"]
