"""Small frames of rows the driver holds, planned in the JVM alone.

``spark.createDataFrame(rows, schema)`` plans a scan of a Python RDD: writing it runs a job whose tasks start
Python workers to unpickle the rows (0.2-0.3 s on local[2] for no rows, 0.12-0.16 s for ten DDL rows), and a union
or a join with it keeps those tasks. Here no rows are an empty local relation made in the JVM (:func:`empty_frame`
for a DDL string, :func:`no_rows` for a schema whose nullability is kept), which a union prunes; a few rows are
one JSON text read by ``from_json`` in the JVM (one task, no Python worker); and rows of any Spark type the driver
made as Arrow batches are a local relation built by Spark's Arrow reader in the JVM (:func:`arrow_frame`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cdc_spark.runtime.java_names import java_class, static_method

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

# a surrogate code point (a Python string holds a character outside the basic plane as one code point, so this is
# half a pair): createDataFrame's rows give U+FFFD for each, where a JSON escape of a lone one would give '?'
_SURROGATE = re.compile("[\ud800-\udfff]")


def empty_frame(spark: SparkSession, schema: str) -> DataFrame:
    """A frame of ``schema`` (a DDL string, every field nullable, as ``createDataFrame`` makes it) with no rows."""
    jvm = spark._jvm
    assert jvm is not None
    return _empty(spark, static_method(jvm, "org.apache.spark.sql.types.StructType", "fromDDL")(schema))


def no_rows(spark: SparkSession, schema: StructType) -> DataFrame:
    """A frame of exactly ``schema`` (its fields' nullability kept, as ``createDataFrame([], schema)`` keeps it)
    with no rows."""
    return _empty(spark, spark._jsparkSession.parseDataType(schema.json()))


def _empty(spark: SparkSession, schema: Any) -> DataFrame:
    """An empty local relation of the JVM ``StructType`` ``schema``, made in the JVM."""
    from pyspark.sql import DataFrame as PyDataFrame

    jvm = spark._jvm
    assert jvm is not None
    return PyDataFrame(spark._jsparkSession.createDataFrame(java_class(jvm, "java.util.ArrayList")(), schema), spark)


def rows_frame(spark: SparkSession, rows: Sequence[Sequence[object]], schema: str) -> DataFrame:
    """``rows`` (tuples in the order of ``schema``'s fields, a DDL string of scalar types, every field nullable) as a
    frame, as ``createDataFrame(rows, schema)`` gives it: strings, integers, booleans and None, sent as one JSON
    text (each surrogate code point in a string made U+FFFD first, as ``createDataFrame`` makes it)."""
    from pyspark.sql import functions as F

    if not rows:
        return empty_frame(spark, schema)
    jvm = spark._jvm
    assert jvm is not None
    names = list(static_method(jvm, "org.apache.spark.sql.types.StructType", "fromDDL")(schema).fieldNames())
    for row in rows:
        if len(row) != len(names):
            raise ValueError(f"a row of {len(row)} values for the {len(names)} fields of {schema!r}: {row!r}")
    text = json.dumps([{name: _text(value) for name, value in zip(names, row, strict=True)} for row in rows])
    parsed = F.from_json(F.lit(text), f"array<struct<{schema}>>")
    return spark.range(1).select(F.inline(parsed))


def arrow_frame(spark: SparkSession, batches: Iterable[pa.RecordBatch], schema: StructType) -> DataFrame:
    """``batches`` (of ``schema`` as Arrow types) as a frame of ``schema``: Spark reads them in the JVM into a local
    relation (up to ``spark.sql.execution.arrow.localRelationThreshold``, 48 MB by default; a larger table is an
    RDD of the Arrow batches, still read in the JVM), so no job runs until the frame is read, and no Python worker
    then: a filter or a projection of it is done by the optimizer, and its exact size lets a join broadcast it."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    table = pa.Table.from_batches(list(batches), schema=to_arrow_schema(schema))
    if not table.num_rows:  # PySpark's reader of a table refuses columns of no chunks
        return no_rows(spark, schema)
    return spark.createDataFrame(table, schema=schema)


def _text(value: object) -> object:
    return _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value


__all__ = ["arrow_frame", "empty_frame", "no_rows", "rows_frame"]
