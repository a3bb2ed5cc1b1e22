"""The running clock of a batch: the order ts of a change without a commit ts.

A change without a commit ts (TiCDC Avro's tombstone deletes) is ordered after the newest commit ts before it in
its topic-partition: in this batch (the running clock, read by each task as it reads or sorted by a window) or,
for the batch's first such messages, where the partition ended the last batch (the seeded clock). But no later than
the next commit ts after it there (``clock_after``, a partition's tail sent again,
:mod:`cdc_spark.partition_clock`): only a window finds that one, and the task clock serves only where no commit ts
of the batch goes back (:mod:`cdc_spark.decoding.task_clock`), so that it would never be the lesser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Route
from cdc_spark.decoding.coordinates import COORDINATES, at_coordinates, join_on_coordinates
from cdc_spark.decoding.literal_lookup import key_column, key_text, lookup
from cdc_spark.partition_clock import PartitionKey

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from cdc_spark.decoding.task_clock import TaskSeeds


def with_running_clock(prepared: DataFrame, topics: Sequence[str]) -> DataFrame:
    """``clock_before``: the newest commit ts of the messages before each one in its partition, and
    ``clock_after``: the commit ts of the next timed message after it there (a shuffle by partition, so only asked
    for when a partition has changes without a ts and timed messages). ``topics``: every topic of
    ``prepared`` (none: its topics are not known). The window sorts by its partitioning first: a topic's number in
    ``topics`` in place of its name, as every message of a partition ties on it and a tie of names compares their
    bytes (at 10^6 Avro messages with tombstone deletes, 6% of the executors' samples)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    topic = lookup({name: k for k, name in enumerate(topics)}, F.col("topic")) if topics else F.col("topic")
    partitioned = Window.partitionBy(topic, F.col("partition")).orderBy("offset")
    before = partitioned.rowsBetween(Window.unboundedPreceding, -1)
    # A watermark is no bound on what came before it (TiCDC's resolved ts lags the changes a partition carries). The
    # next ts by lead over nulls: a frame up to the partition's end (first over it) Spark computes again for every
    # row, n^2/2 (measured: 33 s for 40,000 messages in one partition, against 0.5 s)
    bounding = F.when(F.col(A.ROUTE) != Route.WATERMARK.value, F.col(A.TS)) if A.ROUTE in prepared.columns else None
    staged = prepared if bounding is None else prepared.withColumn(_BOUNDING, bounding)
    after = F.expr(f"lead(`{_BOUNDING if bounding is not None else A.TS}`, 1) ignore nulls").over(partitioned)
    clocked_frame = staged.withColumns({"clock_before": F.max(A.TS).over(before), "clock_after": after})
    return clocked_frame if bounding is None else clocked_frame.drop(_BOUNDING)


_BOUNDING: Final = "__bounding_ts"  # the ts of a message that bounds a change without one before it


def order_clock(before: Column, after: Column | None) -> Column:
    """The order ts of a change without a commit ts: ``before`` (the newest ts before it, the seed included), no later
    than ``after`` (the next one after it), null where nothing came before (as :class:`PartitionClock` orders)."""
    from pyspark.sql import functions as F

    return before if after is None else F.when(before.isNotNull(), F.least(before, after))


# Up to this many changes without a commit ts, their clocks are broadcast to the rows (about 100 bytes each in every
# executor); more are joined by a shuffle. Either way the window itself sorts the messages' coordinates and ts only:
# over whole rows it shuffled and sorted every typed value (measured at 10^6 Avro messages with tombstone deletes:
# a quarter of the executors' samples).
BROADCAST_CLOCKS: Final = 250_000


def clocked(
    rows: DataFrame,
    messages: DataFrame,
    untimed: int,
    topics: Sequence[str],
    task: TaskSeeds | None = None,
    *,
    planned: Counter[str],
) -> DataFrame:
    """``rows`` (any number per message, by :data:`COORDINATES`) with ``clock_before`` of ``messages`` (one row per
    message, with ``A.TS``; ``untimed`` of them without a ts, ``topics`` all their topics), null where a message has
    a ts (its own orders it). With ``task`` (the seeds of ``messages``) each task reads the clock as it reads its
    messages; without, a window sorts them. ``planned`` counts each way as it is planned ("task", "sorted")."""
    from pyspark.sql import functions as F

    narrow = messages.select(*COORDINATES, A.TS, *([A.ROUTE] if A.ROUTE in messages.columns else []))
    planned["sorted" if task is None else "task"] += 1
    narrow = with_running_clock(narrow, topics) if task is None else task.clocked(narrow)
    clocks = narrow.where(F.col(A.TS).isNull()).select(*COORDINATES, *_clock_columns(narrow))
    return join_on_coordinates(rows, clocks, "left", broadcast=untimed <= BROADCAST_CLOCKS)


def _clock_columns(clocked_frame: DataFrame) -> list[str]:
    return [name for name in ("clock_before", "clock_after") if name in clocked_frame.columns]


# The mark of the seeded clock's lookup: a kept plan takes each batch's clock there (KeptPlans.frame's values)
SEEDED_CLOCK_MARKER: Final = -0x5EED_C10C_0000_0001


def seeded_clock(partition_ts: Mapping[PartitionKey, int]) -> Column:
    """The clock each row's topic-partition ended the last batch on (null for one not seen before), looked up by
    :data:`SEEDED_CLOCK_MARKER`: the keys are ``partition_ts``'s, in its order, and the values its values."""
    from pyspark.sql import functions as F

    here = key_column(F.col("topic"), F.col("partition"))  # a null topic is a key of its own, as the codecs take it
    by_key = {key_text(t, p): ts for (t, p), ts in partition_ts.items()}
    return lookup(by_key, here, SEEDED_CLOCK_MARKER)


def reclocked(
    rows: DataFrame,
    prepared: DataFrame,
    dead: frozenset[tuple[str | None, int | None, int | None]],
    partition_ts: Mapping[PartitionKey, int],
    *,
    untimed: int,
    topics: Sequence[str],
    planned: Counter[str],
) -> DataFrame:
    """The order ts of changes without a commit ts taken again without the batch's dead letters: a message the
    codec could not decode says nothing about time (the codec's clock never saw it). ``untimed``: how many
    messages of ``prepared`` have no ts, ``topics`` their topics, ``planned`` as :func:`clocked` counts."""
    from pyspark.sql import functions as F

    living = prepared.where(~at_coordinates(dead))
    seeded = seeded_clock(partition_ts)
    before = F.greatest(F.col("__reclock"), seeded.cast("long")) if partition_ts else F.col("__reclock")
    order_ts = order_clock(before, F.col("__reclock_after"))
    sequence = F.col("_cdc_sequence")
    reordered = F.struct(
        F.coalesce(F.col("_cdc_commit_ts"), order_ts).alias("commit_ts"), sequence["partition"].alias("partition"),
        sequence["offset"].alias("offset"), sequence["position"].alias("position"),
    )  # fmt: skip
    joined = clocked(rows, living, untimed, topics, planned=planned).withColumnsRenamed(
        {"clock_before": "__reclock", "clock_after": "__reclock_after"}
    )
    return joined.withColumn("_cdc_sequence", reordered).drop("__reclock", "__reclock_after")
