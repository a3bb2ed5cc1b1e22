"""An analyzed plan over views, put over other frames of the same columns: the JVM side of plan reuse.

Analysis is most of the driver's cost of a frame of hundreds of columns, and a frame built the same way over inputs
of the same schema analyzes to the same plan but for its leaves. :func:`over` takes a kept analyzed plan that reads
each of its views once, puts each new frame's plan in place of its view's (``cdc.spark.plans.AnalyzedPlans``, one
pass over the tree in the JVM: the frame's columns take the ids of the view's) and marks it analyzed, so Spark does
not analyze it again; the optimizer still runs over the new inputs. Users: the sink's resolves
(:mod:`cdc_spark.merge.analyzed_plans`) and the decode's first stage (:mod:`cdc_spark.decoding.kept_plans`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.runtime.java_names import static_method

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SWITCH_ENV: Final = "CDC_PLAN_REUSE"  # "off": every frame planned anew


def reusable(spark: SparkSession) -> bool:
    """Whether plans are reused in ``spark``: not switched off (:data:`SWITCH_ENV`) and the project's Java code here."""
    from cdc_spark.runtime.java_code import install

    return os.environ.get(SWITCH_ENV, "").lower() != "off" and install(spark)


def analyzed_plan(frame: DataFrame) -> Any:
    """``frame``'s analyzed plan (a JVM object), to keep."""
    return frame._jdf.queryExecution().analyzed()


def over(plan: Any, views: Sequence[str], frames: Sequence[DataFrame]) -> DataFrame | None:
    """The analyzed ``plan`` with ``frames`` (one a view of ``views``, in order) in place of its views, in the first
    frame's session; None where the JVM finds they do not fit it (a view not read exactly once, or a frame's columns
    of other types, nullability or metadata than its view's)."""
    from pyspark.sql import DataFrame as PyDataFrame

    from cdc_spark.runtime.java_code import jar_on_this_thread

    spark = frames[0].sparkSession
    jvm: Any = spark._jvm
    jar_on_this_thread(spark)
    found = static_method(jvm, "cdc.spark.plans.AnalyzedPlans", "over")(
        spark._jsparkSession, plan, list(views), [f._jdf for f in frames]
    )
    return None if found is None else PyDataFrame(found, spark)


def with_lookup_values(frame: DataFrame, values: Mapping[int, Sequence[int | None]]) -> DataFrame | None:
    """``frame`` (analyzed) with the values of each marked lookup (:func:`cdc_spark.decoding.literal_lookup.lookup`
    with a marker, a key of ``values``) replaced by ``values[marker]`` (``cdc.spark.plans.LookupValues``); None where
    a marker's lookup is not in the plan exactly once or has another number of values."""
    from pyspark.sql import DataFrame as PyDataFrame

    from cdc_spark.runtime.java_code import jar_on_this_thread

    spark = frame.sparkSession
    jar_on_this_thread(spark)
    markers = list(values)
    found = static_method(spark._jvm, "cdc.spark.plans.LookupValues", "of")(
        frame._jdf, markers, [list(values[m]) for m in markers]
    )
    return None if found is None else PyDataFrame(found, spark)


__all__ = ["SWITCH_ENV", "analyzed_plan", "over", "reusable", "with_lookup_values"]
