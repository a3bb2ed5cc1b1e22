"""Spark's ``from_avro`` in PERMISSIVE mode, safe to plan from several threads at once.

pyspark's ``from_avro(data, schema, options)`` hands its options to the JVM as a ``map(...)`` expression. Spark's
``from_avro`` evaluates that expression when it is first canonicalized (as every query looks for cached data),
and a ``map(...)`` expression builds its value in a builder of its own that is not safe to share between threads.
Copies of a plan share their expressions, so two threads planning queries over one decoded batch (the job applies
a batch's tables side by side, :mod:`cdc_spark.table_workers`) can fill one builder at once and fail with
``IllegalArgumentException: requirement failed`` from ``ArrayBasedMapData`` (seen in the Avro job test, about one
run in ten). A literal map is a value: nothing is built, so this passes the options as one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cdc_spark.runtime.java_names import java_class, static_method

if TYPE_CHECKING:
    from pyspark.sql import Column


def permissive_from_avro(data: Column, schema: str) -> Column:
    """``from_avro(data, schema)`` that turns a record it cannot read into a row of nulls (PERMISSIVE mode)."""
    from pyspark import SparkContext
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType, StringType

    context = SparkContext._active_spark_context
    if context is None:
        raise RuntimeError("from_avro needs a running Spark session")
    jvm: Any = context._jvm
    options = java_class(jvm, "java.util.HashMap")()
    options.put("mode", "PERMISSIVE")
    map_type = static_method(jvm, "org.apache.spark.sql.types.DataType", "fromJson")(
        MapType(StringType(), StringType(), False).json()
    )
    literal = static_method(jvm, "org.apache.spark.sql.catalyst.expressions.Literal", "create")(
        static_method(jvm, "scala.jdk.javaapi.CollectionConverters", "asScala")(options), map_type
    )
    options_column = SparkColumn(static_method(jvm, "org.apache.spark.sql.classic.ExpressionUtils", "column")(literal))
    return F.call_function("from_avro", data, F.lit(schema), options_column)


__all__ = ["permissive_from_avro"]
