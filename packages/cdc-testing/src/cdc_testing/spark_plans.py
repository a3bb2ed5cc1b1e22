"""What tests read from a DataFrame's plan."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# how Spark prints a map(...) expression in a plan; map_keys(...), map_from_entries(...), map<...> types and a
# literal map (map(keys: [...], values: [...])) differ
_CREATE_MAP = re.compile(r"(?<![\w<])map\((?!keys: \[)")
# a method whole-stage code generation made of a projection's consumer
_CONSUMER_METHOD = re.compile(r"private void project_doConsume_\d+\(")


def analyzed(frame: Any) -> str:
    """The analyzed logical plan of ``frame``, as Spark prints it."""
    return str(frame._jdf.queryExecution().analyzed().toString())


def created_maps(frame: Any) -> list[str]:
    """The ``map(...)`` expressions ``frame``'s plan builds, as printed (cut short). The optimizer folds a constant
    one by evaluating it through a builder that threads planning over the same frame share
    (cdc_spark.decoding.literal_lookup)."""
    plan = analyzed(frame)
    return [plan[found.start() : found.start() + 80] for found in _CREATE_MAP.finditer(plan)]


def compiled_classes(spark: Any) -> int:
    """How many classes Spark's code generator has compiled in this JVM: one for each generated code its cache did
    not hold (whole-stage code and the projections outside it alike)."""
    metrics = spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return int(metrics.METRIC_COMPILATION_TIME().getCount())


def generated_stages(frame: Any) -> list[str]:
    """The Java source Spark generates for each whole-stage stage of ``frame``'s physical plan."""
    jvm = frame.sparkSession._jvm
    debug = getattr(getattr(jvm.org.apache.spark.sql.execution.debug, "package$"), "MODULE$")
    stages = jvm.scala.jdk.javaapi.CollectionConverters.asJava(
        debug.codegenStringSeq(frame._jdf.queryExecution().executedPlan())
    )
    return [str(stage._2()) for stage in stages]


def consumer_methods(source: str) -> int:
    """How many projections' consumers a stage's generated ``source`` puts in methods of their own."""
    return len(_CONSUMER_METHOD.findall(source))


def jobs_started(spark: Any, group: str, run: Callable[[], Any]) -> list[int]:
    """The ids of the Spark jobs ``run`` started, under the job group ``group`` (one group per count: ids stay listed
    under their group). Worker threads that inherit the caller's local properties count too."""
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        run()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    return list(context.statusTracker().getJobIdsForGroup(group))


def kept_plans(monkeypatch: Any) -> list[str]:
    """The plans of the frames decodes keep from now on (``persist_batch`` as the JVM path's stages call it: the
    typed rows in ``cdc_spark.decoding.jvm.batch``, the first stage's cache in ``cdc_spark.decoding.kept_passes``
    where no kept physical plan fills it), each its whole query execution as Spark prints it once kept (planned for
    good: the physical plan is the final one)."""
    from cdc_spark.batch_cache import persist_batch as original
    from cdc_spark.decoding import kept_passes
    from cdc_spark.decoding.jvm import batch

    plans: list[str] = []

    def persist_batch(frame: Any) -> Any:
        kept = original(frame)
        plans.append(str(frame._jdf.queryExecution().toString()))
        return kept

    monkeypatch.setattr(batch, "persist_batch", persist_batch)
    monkeypatch.setattr(kept_passes, "persist_batch", persist_batch)
    return plans


__all__ = [
    "analyzed",
    "compiled_classes",
    "consumer_methods",
    "created_maps",
    "generated_stages",
    "jobs_started",
    "kept_plans",
]
