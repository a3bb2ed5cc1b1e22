"""The first stage's physical plan, kept from batch to batch: its cache filled with nothing planned again.

The shapes' pass (:mod:`cdc_spark.decoding.jvm.batch`, stage 1) is a projection of hundreds of expressions over the
batch's messages, the same every batch of the same schemas and typings. Its analyzed plan is kept
(:mod:`~cdc_spark.decoding.kept_plans`), but Spark optimized and planned it again for every batch's cache: at TiCDC
Avro's 99,400 messages a batch, 0.3-0.4 s of the driver's time a batch (``docs/spark-source-decode.md``).

Here the pass reads its messages through a *leaf* (:meth:`KeptPasses.leaf`: the messages' rows as an RDD, planned on
their own). A frame made of kept analyzed plans over such a leaf has a lineage (:func:`~cdc_spark.decoding.kept_plans.
lineage_of`), and every frame of one lineage has the same physical plan but for the leaf's rows. The first batch of a
lineage plans its frame and keeps the physical plan (``cdc.spark.plans.PhysicalPlans``); each later one puts its
leaf's rows in the kept leaf's place and keeps the rows as :func:`~cdc_spark.batch_cache.persist_batch` does. A frame
without a lineage, a plan that does not run row by row over its leaf (an exchange, a subquery), or a session without
the project's Java code or with plan reuse switched off (:data:`cdc_spark.runtime.plan_reuse.SWITCH_ENV`) is
persisted as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdc_spark.batch_cache import persist_batch
from cdc_spark.decoding.kept_plans import LEAF, lineage_of, with_lineage
from cdc_spark.decoding.reuse import Reuse
from cdc_spark.runtime.java_names import static_method
from cdc_spark.runtime.plan_reuse import reusable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_PLANS = "cdc.spark.plans.PhysicalPlans"


class KeptPasses:
    """Physical plans of first stages, by lineage and the session settings they were planned under."""

    def __init__(self, capacity: int = 4) -> None:
        self._plans: Reuse[Any] = Reuse(capacity)
        self.planned = 0  # physical plans kept
        self.reused = 0  # caches filled by a kept plan

    def leaf(self, messages: DataFrame) -> DataFrame | None:
        """``messages``' rows as a leaf a pass can keep its physical plan over; None where plans are not reused."""
        from pyspark.sql import DataFrame as PyDataFrame

        from cdc_spark.runtime.java_code import jar_on_this_thread

        spark = messages.sparkSession
        if not reusable(spark):
            return None
        jar_on_this_thread(spark)
        rows = static_method(spark._jvm, _PLANS, "leaf")(messages._jdf)
        return with_lineage(PyDataFrame(rows, spark), (LEAF,))

    def persist(self, frame: DataFrame, leaf: DataFrame | None, settings: Mapping[str, str]) -> DataFrame:
        """``frame`` kept for the batch as :func:`~cdc_spark.batch_cache.persist_batch` keeps it; by the physical
        plan kept for its lineage over ``leaf`` (the leaf it reads) where there is one, planned and kept where there
        is not. ``settings``: the session settings the caller plans under (a kept plan holds code generated under
        them)."""
        from pyspark.sql import DataFrame as PyDataFrame

        lineage = lineage_of(frame)
        if leaf is None or lineage is None or lineage[-1] is not LEAF:
            return persist_batch(frame)
        spark = frame.sparkSession
        key = (lineage, tuple(sorted(settings.items())))
        kept = self._plans.peek(key)
        if kept is None:
            kept = static_method(spark._jvm, _PLANS, "of")(frame._jdf, leaf._jdf)
            if kept is None:  # not row by row over the leaf: planned as any frame
                return persist_batch(frame)
            self._plans.put(key, kept)
            self.planned += 1
        else:
            self.reused += 1
        rows = kept.checkpoint(leaf._jdf)
        return persist_batch(frame) if rows is None else PyDataFrame(rows, spark)

    def clear(self) -> None:
        self._plans.clear()
        self.planned = self.reused = 0


__all__ = ["KeptPasses"]
