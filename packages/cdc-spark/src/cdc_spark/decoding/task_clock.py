"""The running clock without a sort, where each task reads its topic-partitions in offset order.

A change without a commit ts is ordered by the newest commit ts before it in its topic-partition (``clock_before``,
:mod:`cdc_spark.partition_clock`). A window finds it by shuffling every message's coordinates and sorting them. But
Spark's Kafka source reads each topic-partition's offsets in order, one range per task (a partition may be split
into ranges over several tasks). Then the running maximum each task keeps as it reads (the Java function
``cdc.spark.clock.TaskClock``) is that clock, short of the ranges other tasks read before its own.

The ranges are per task and topic-partition: the lowest and highest offset, the oldest and newest ts and whether an
offset or a ts went back. The JVM decode finds them in the shapes' aggregate (:func:`disorder` in its projection,
then :func:`seeded`); :func:`task_seeds` runs one small aggregate of its own over the messages. Where none went
back and no two ranges of a topic-partition overlap, a range's seed is the newest ts of the ranges below it, and a
message's clock is the greater of its range's seed and its task's running maximum (:meth:`TaskSeeds.clocked`).
Otherwise (the frame was repartitioned, say) there are no seeds and the caller sorts. It sorts too where a commit ts
goes back: within a task, below the ranges before it, or below where the partition ended the last batch (a tail
sent again). A change without a ts there is ordered no later than the next ts after it, which the running maximum
does not know; in commit order that never matters.

Both read the same frame, the batch's cache, whose partitions give their rows in the same order on every read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.java_text import java_code_on, register_once
from cdc_spark.decoding.literal_lookup import key_column, key_text, lookup
from cdc_spark.runtime.java_names import static_method

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

FUNCTION: Final = "cdc_task_clock"
# The mark of the seeds' lookup: a kept plan of a clocked frame takes each batch's seeds there
SEEDS_MARKER: Final = -0x5EED_C10C_0000_0002
DISORDER: Final = -(2**63)  # TaskClock.DISORDER: an offset went back in its task
CLOCK: Final = "clock_before"
_TASK: Final = "__task"
_RUNNING: Final = "__running"
# The task and running clock of each message as the shapes' pass read it, kept in the batch's cache
# (:func:`read_in_pass`): the frames after the pass then read them as data, deterministic
PASS_TASK: Final = "__pass_task"
PASS_RUNNING: Final = "__pass_running"


def task_clock_function(spark: SparkSession) -> str | None:
    """The session's function of ``TaskClock``, registered now as non-deterministic (Spark then calls it on every
    row in the order it reads them); None where the project's Java code is switched off or cannot be compiled."""
    if not java_code_on(spark):
        return None

    def register() -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        spark._jsparkSession.udf().register(FUNCTION, static_method(jvm, "cdc.spark.clock.TaskClock", "function")())

    return register_once(spark, FUNCTION, register)


@attrs.frozen
class TaskSeeds:
    """The task clock of one frame: its function, its topics' numbers (the function's key) and each task's range
    seeds (by the ``key_text`` of the task, topic and partition; a range with nothing below it has none)."""

    function: str
    topics: Mapping[str, int]
    seeds: Mapping[str, int]
    # the running clock and task of each message are in the frame, as its pass read them (read_in_pass), and the
    # batch's topics have hashes of their own
    in_pass: bool = False

    def plan_key(self) -> tuple[object, ...]:
        """What a plan of :meth:`clocked` captures but the seeds' values (:meth:`values`)."""
        return (self.function, tuple(self.topics.items()), tuple(self.seeds), self.in_pass)

    def values(self) -> dict[int, list[int | None]]:
        """The seeds' values, by the marker of their lookup in :meth:`clocked`'s plan."""
        return {SEEDS_MARKER: list(self.seeds.values())} if self.seeds else {}

    def running(self, messages: DataFrame) -> DataFrame:
        """``messages`` with ``__task`` (the Spark partition) and ``__running`` (the task's running clock)."""
        from pyspark.sql import functions as F

        number = lookup(self.topics, F.col("topic")).cast("int")
        call = F.call_udf(self.function, number, F.col("partition").cast("int"), F.col("offset"), F.col(A.TS))
        return messages.select("*", F.spark_partition_id().alias(_TASK), call.alias(_RUNNING))

    def clocked(self, messages: DataFrame) -> DataFrame:
        """``messages`` (the frame the seeds were found in, read the same way) with ``clock_before``: the newest
        commit ts before each message without one in its topic-partition, null for a message with a ts."""
        from pyspark.sql import functions as F

        if self.in_pass and PASS_RUNNING in messages.columns:  # read as data: a filter may go below it
            running, task, clock = messages, F.col(PASS_TASK), F.col(PASS_RUNNING)
        else:
            running, task, clock = self.running(messages), F.col(_TASK), F.col(_RUNNING)
        if self.seeds:
            key = key_column(task, F.col("topic"), F.col("partition"))
            clock = F.greatest(clock, lookup(self.seeds, key, SEEDS_MARKER).cast("long"))
        return running.withColumn(CLOCK, F.when(F.col(A.TS).isNull(), clock)).drop(_TASK, _RUNNING)


def task_seeds(
    messages: DataFrame, topics: Sequence[str], partition_ts: Mapping[tuple[str | None, int | None], int] | None = None
) -> TaskSeeds | None:
    """The task clock of ``messages`` (one row per message, read in the order its source gives them), or None where
    it has none: no Java code here, an offset or a commit ts going back, or two tasks' ranges of a topic-partition
    overlapping. ``topics``: every topic of ``messages``; ``partition_ts``: the clock each topic-partition ended the
    last batch on."""
    from pyspark.sql import functions as F

    function = task_clock_function(messages.sparkSession)
    if function is None:
        return None
    probe = TaskSeeds(function, _numbers(topics), {})
    ranges = (
        probe.running(messages)
        .groupBy(_TASK, "topic", "partition")
        .agg(
            F.min("offset").alias("low"),
            F.max("offset").alias("high"),
            F.max(A.TS).alias("ts"),
            F.count_if(F.col(_RUNNING) == F.lit(DISORDER)).alias("back"),
            F.min(A.TS).alias("oldest_ts"),
        )
        .collect()
    )
    found = [(r[_TASK], r["topic"], r["partition"], r["low"], r["high"], r["ts"], r["back"], r["oldest_ts"])
             for r in ranges]  # fmt: skip
    return seeded(function, topics, found, partition_ts)


# task, topic, partition, low and high offset, newest ts, how many rows went back, oldest ts
Range = tuple[int, str | None, int | None, int, int, int | None, int, int | None]


def read_in_pass(messages: DataFrame, function: str) -> DataFrame:
    """``messages`` (the rows of the shapes' pass, one per message, as its tasks read them) with each one's Spark
    partition (:data:`PASS_TASK`) and running clock (:data:`PASS_RUNNING`, or :data:`DISORDER` where its offset went
    back in its task), kept in the batch's cache. The topic's number is its hash, as in :func:`disorder`: a batch
    whose topics share a hash does not read its clock from them (:meth:`TaskSeeds.clocked`)."""
    from pyspark.sql import functions as F

    call = F.call_udf(function, F.hash("topic"), F.col("partition").cast("int"), F.col("offset"), F.col(A.TS))
    return messages.withColumns({PASS_TASK: F.spark_partition_id(), PASS_RUNNING: call})


def disorder(function: str) -> Column:
    """Whether a row's offset goes back within its task (``TaskClock`` over the rows in the order a task reads them),
    for a caller's aggregate that finds the ranges of :func:`seeded` before the batch's topics are known (the shapes'
    aggregate). The topic's number is its hash: two topics of one hash look like one, which at worst finds disorder
    where there is none (the caller then sorts)."""
    from pyspark.sql import functions as F

    call = F.call_udf(function, F.hash("topic"), F.col("partition").cast("int"), F.col("offset"), F.col(A.TS))
    return call == F.lit(DISORDER)


def seeded(
    function: str,
    topics: Sequence[str],
    ranges: Iterable[Range],
    partition_ts: Mapping[tuple[str | None, int | None], int] | None = None,
) -> TaskSeeds | None:
    """The task clock of a frame whose rows' ``ranges`` were found (per task and topic-partition: the lowest and
    highest offset, the newest ts, how many rows went back and the oldest ts), as :func:`task_seeds` finds them;
    None where a row went back, two tasks' ranges of a topic-partition overlap, or a range's oldest ts is older than
    the newest below it (of the ranges before it, or ``partition_ts``, where the partition ended the last batch). A
    task and topic-partition may come in several parts (an aggregate by finer keys): they are joined first."""
    joined: dict[tuple[int, str | None, int | None], tuple[int, int, int | None, int, int | None]] = {}
    for task, topic, partition, low, high, ts, back, oldest in ranges:
        where = (task, topic, partition)
        was = joined.get(where)
        if was is None:
            joined[where] = (low, high, ts, back, oldest)
            continue
        joined[where] = (min(low, was[0]), max(high, was[1]), _either(max, ts, was[2]), back + was[3],
                         _either(min, oldest, was[4]))  # fmt: skip
    by_partition: dict[tuple[str | None, int | None], list[tuple[int, int, int | None, int | None, int]]] = {}
    for (task, topic, partition), (low, high, ts, back, oldest) in joined.items():
        if back:
            return None
        by_partition.setdefault((topic, partition), []).append((low, high, ts, oldest, task))
    seeds: dict[str, int] = {}
    for (topic, partition), found in by_partition.items():
        newest: int | None = None
        floor = (partition_ts or {}).get((topic, partition))
        previous_high: int | None = None
        for low, high, ts, oldest, task in sorted(found):
            if previous_high is not None and low <= previous_high:
                return None  # two tasks read offsets of one topic-partition in between each other's
            below = _either(max, newest, floor)
            if oldest is not None and below is not None and oldest < below:
                return None  # a commit ts went back: a tail sent again
            if newest is not None:
                seeds[key_text(task, topic, partition)] = newest
            newest = _either(max, ts, newest)
            previous_high = high
    return TaskSeeds(function, _numbers(topics), seeds)


def _either(pick: Callable[[int, int], int], one: int | None, other: int | None) -> int | None:
    """``pick`` of two numbers where both are known, else the one that is (None for neither)."""
    if one is None or other is None:
        return other if one is None else one
    return pick(one, other)


def _numbers(topics: Sequence[str]) -> dict[str, int]:
    """Each topic's number, the function's key for it (:meth:`TaskSeeds.running`)."""
    return {name: k for k, name in enumerate(topics)}


__all__ = [
    "CLOCK",
    "DISORDER",
    "FUNCTION",
    "PASS_RUNNING",
    "PASS_TASK",
    "Range",
    "TaskSeeds",
    "disorder",
    "read_in_pass",
    "seeded",
    "task_clock_function",
    "task_seeds",
]
