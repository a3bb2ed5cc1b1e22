"""Stage one of a JVM decode: the batch's shapes, their samples and the partition clock, in one job.

The adapter has parsed every envelope; a grouping by route, table, wire shape and topic-partition yields the
messages per route, the newest and oldest message of each shape (fetched by their coordinates: the only payloads
that reach the driver) and the newest commit ts per partition. The batch's cache holds the messages without the
payloads the JVM has parsed (:func:`without_payloads`); the residue takes them from the source (:func:`whole`).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Adapter, Route, Sample, ShapeReaders
from cdc_spark.decoding.coordinates import COORDINATES, at_coordinates, join_on_coordinates
from cdc_spark.decoding.jvm.clock import clocked
from cdc_spark.decoding.kept_plans import KeptPlans
from cdc_spark.decoding.python_path import MESSAGE_COLUMNS, Rank, row_message
from cdc_spark.decoding.reuse import Reuse
from cdc_spark.decoding.task_clock import DISORDER, PASS_RUNNING, PASS_TASK, Range, TaskSeeds, disorder, seeded
from cdc_spark.partition_clock import PartitionKey
from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Row


# The shapes' aggregate planned to run as one job: adaptive execution runs an aggregate's map side as a job of its
# own and plans the rest again after it, and its few rows need one reducer. In the Avro bench's rounds (40,
# alternating, same session) the shapes step took 0.78 s against 0.84 s planned adaptively.
_ONE_JOB: Final = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "1"}


@attrs.frozen
class Shapes:
    """What the shapes job found: samples, message counts per route, the partition clock."""

    samples: list[Sample]
    python_messages: int
    clock: dict[PartitionKey, int]
    # the clock of the messages not routed to the JVM's typing (theirs comes from rows that converted)
    other_clock: dict[PartitionKey, int] = attrs.field(factory=dict)
    # some change without a commit ts follows a timed message in its partition (it is ordered by that one's ts)
    untimed_after_timed: bool = False
    untimed: int = 0  # messages without a commit ts (the running clock's are joined to the rows)
    # Per typed table (``__tidx``), goodness (``__change_bad``) and shape: the changes, their newest ts and the
    # topic-partition, where the cache holds typed changes (a speculation): the typing's counts without a job of theirs
    typed_groups: list[Row] | None = None
    watermarks: int = 0  # watermark messages (none: the control frame need not read the cache for them)
    # every message routed to the codec, where the driver holds them all: each the sample of its shape (Simple's schema
    # messages), or a residue small enough to fetch with the samples (:data:`HELD_MESSAGES`); else None
    held: tuple[Message, ...] | None = None
    topics: tuple[str, ...] = ()  # every topic of the batch's messages (none for a null topic)
    # the running clock read by each task as it reads (:mod:`~cdc_spark.decoding.task_clock`), where the messages
    # come in offset order; None: sorted by a window
    task: TaskSeeds | None = None
    task_found: bool = False  # whether the shapes' aggregate looked for the task clock (else it is found apart)

    def clock_key(self) -> tuple[object, ...] | None:
        """What :meth:`clocked` of the messages themselves captures but its seeds' values (:meth:`clock_values`), for
        a kept plan of it; None where it joins a clock to the rows (a plan of two reads of the messages)."""
        if not self.untimed_after_timed:
            return ("none",)
        return None if self.task is None else ("task", *self.task.plan_key())

    def clock_values(self) -> dict[int, list[int | None]]:
        """The values a kept plan of :meth:`clocked` takes, by marker (:meth:`TaskSeeds.values`)."""
        return {} if self.task is None or not self.untimed_after_timed else self.task.values()

    def clocked(self, rows: DataFrame, messages: DataFrame, planned: Counter[str]) -> DataFrame:
        """``rows`` with the running clock of ``messages`` (:func:`~cdc_spark.decoding.jvm.clock.clocked`, which
        ``planned`` counts) where a change without a commit ts follows a timed message; otherwise as they are (none
        needs it). ``rows`` that are ``messages`` themselves take their task clock in place: no join."""
        if not self.untimed_after_timed:
            return rows
        if self.task is not None and rows is messages:
            planned["task"] += 1
            return self.task.clocked(messages)
        return clocked(rows, messages, self.untimed, self.topics, self.task, planned=planned)


# A message's rank within its group (one topic-partition) is (ts, offset): its ts (-1 for none), then its offset. In
# a partition whose messages come in ts order, the newest message of a group is its last offset and the oldest its
# first: longs, which Spark aggregates by hashing. The first aggregate checks that (the ts at the last offset is the
# newest ts, the one at the first the oldest) and only where it does not hold is the rank aggregated again, as one
# decimal(38,0): ts plus one, then the offset in the low 19 digits (every long from 0 up has at most 19). A decimal
# that wide is a BigInteger to Spark: about a tenth of a Simple decode's executor samples went to it. A struct's max
# Spark aggregates by sorting every message by the group's keys (measured at 10^6 Canal-JSON messages: 0.78 s
# against the decimal's 0.40 s), kept for a frame's own offsets below zero.
_OFFSET_DIGITS: Final = 10**19
_TASK: Final = "__task"  # the Spark partition a row was read in (the task clock's ranges)
_TOPIC_HASH: Final = "topic_hash"  # a group's topic's number in the pass's running clock (read_in_pass)
_BACK: Final = "__back"  # whether a row's offset or commit ts went back in its task
_LEAST_TS: Final = "least_ts"  # the oldest commit ts of a group and task (a range's, for the task clock)
_RANK_ORDER: Final = "decimal(38,0)"

# A residue of at most this many messages and bytes (keys and values) is fetched whole by the samples' job, so the
# codec's first pass over it runs on the driver instead of as a job of Python tasks of its own (about 0.3 s a batch
# for a few DDL messages). The bounds keep what the driver holds small whatever the messages.
HELD_MESSAGES: Final = 256
HELD_BYTES: Final = 8 << 20


def _rank_order() -> Column:
    from pyspark.sql import functions as F

    rank = F.col(A.RANK)
    shifted = rank["ts"].cast(_RANK_ORDER) + F.lit(1)  # ts may be the largest long
    return shifted * F.lit(str(_OFFSET_DIGITS)).cast(_RANK_ORDER) + rank["offset"].cast(_RANK_ORDER)


def _rank(row: Row, end: str) -> Rank:
    """The newest (``end``: rank) or oldest (oldest) rank of a group of :func:`shape_groups`."""
    if f"{end}_offset" in row.__fields__:  # a group in ts order: its last (first) offset and its newest (oldest) ts
        return (row[f"{end}_ts"], row["partition"] or 0, row[f"{end}_offset"], row[f"{end}_position"])
    ranked = row[end]
    if not isinstance(ranked, Decimal):  # a frame's own offsets, not Kafka's: the struct itself was aggregated
        return (ranked["ts"], ranked["partition"], ranked["offset"], ranked["position"])
    ts_part, offset = divmod(int(ranked), _OFFSET_DIGITS)
    return (ts_part - 1, row["partition"] or 0, offset, row[f"{end}_position"])


def _in_ts_order(row: Row) -> bool:
    """Whether a group of the first aggregate has its newest ts at its last offset and its oldest at its first."""
    return bool(
        row["lowest_offset"] >= 0 and row["ts_at_last"] == row["rank_ts"] and row["ts_at_first"] == row["oldest_ts"]
    )


def shape_groups(prepared: DataFrame, changes: bool = False) -> list[Row]:
    """One row per route, table, shape, sampling and topic-partition: messages, newest and oldest rank (by offset
    where the group is in ts order, else by :func:`_rank_order`, or where an offset is negative by the rank struct
    itself), newest commit ts and how many messages have none. With ``changes`` (``prepared`` holds a row per typed
    change, :func:`change_rows`), also per typed table and goodness of the change, with ``rows``, how many."""
    return groups_and_ranges(prepared, changes)[0]


def _keys(changes: bool) -> list[str]:
    keys = [A.ROUTE, A.DATABASE, A.TABLE, A.SHAPE, A.SAMPLE, "topic", "partition"]
    return [*keys, "__tidx", "__change_bad"] if changes else keys


def _counts(prepared: DataFrame, changes: bool) -> list[Column]:
    """The aggregate's counts of messages, of those without a ts, of the codec's payload bytes and of changes."""
    from pyspark.sql import functions as F

    first = F.col(A.POSITION) == 0 if changes else F.lit(True)  # a message's own row
    counts = [
        F.count_if(first).alias("messages"),
        F.max(A.TS).alias("ts"),
        F.count_if(F.col(A.TS).isNull() & first).alias("untimed"),
        F.min(F.col(A.RANK)["offset"]).alias("lowest_offset"),
    ]
    if _PAYLOAD_BYTES in prepared.columns:  # a long column, not the payloads themselves: a cheap read of the cache
        counts.append(F.sum(_PAYLOAD_BYTES).alias("python_bytes"))
    if changes:
        counts.append(F.count(F.lit(1)).alias("rows"))
    return counts


def first_aggregate(prepared: DataFrame, changes: bool, task_clock: str | None) -> DataFrame:
    """The frame of :func:`groups_and_ranges`' first aggregate: by ``_keys`` (and Spark task, with ``task_clock``),
    each group's counts and its newest and oldest rank by offset. It reads ``prepared`` once and captures nothing
    but ``changes`` and ``task_clock`` (its plan is kept from batch to batch, ``JvmCaches.cache_plans``)."""
    from pyspark.sql import functions as F

    keys, counts = _keys(changes), _counts(prepared, changes)
    rank = F.col(A.RANK)
    ts, offset, position = rank["ts"], rank["offset"], rank["position"]
    source, by_task, task_counts = prepared, keys, counts
    if task_clock is not None and PASS_RUNNING in prepared.columns:  # as the pass read them (read_in_pass)
        source = prepared.withColumns({_TASK: F.col(PASS_TASK), _BACK: F.col(PASS_RUNNING) == F.lit(DISORDER)})
        by_task = [*keys, _TASK]
        # the topic's hash, its number in the pass's clock: a batch whose topics share one does not read that clock
        task_counts = [*counts, F.count_if(_BACK).alias("back"), F.min(A.TS).alias(_LEAST_TS),
                       F.max(F.hash("topic")).alias(_TOPIC_HASH)]  # fmt: skip
    elif task_clock is not None:  # in a projection: no aggregate takes a non-deterministic argument
        source = prepared.withColumns({_TASK: F.spark_partition_id(), _BACK: disorder(task_clock)})
        by_task = [*keys, _TASK]
        task_counts = [*counts, F.count_if(_BACK).alias("back"), F.min(A.TS).alias(_LEAST_TS)]
    return source.groupBy(*by_task).agg(
        *task_counts,
        F.max(ts).alias("rank_ts"),
        F.max(offset).alias("rank_offset"),
        F.max_by(ts, offset).alias("ts_at_last"),
        F.max_by(position, offset).alias("rank_position"),
        F.min(ts).alias("oldest_ts"),
        F.min(offset).alias("oldest_offset"),
        F.min_by(ts, offset).alias("ts_at_first"),
        F.min_by(position, offset).alias("oldest_position"),
    )


def groups_and_ranges(
    prepared: DataFrame, changes: bool = False, task_clock: str | None = None
) -> tuple[list[Row], list[Range] | None]:
    """:func:`shape_groups`, and with ``task_clock`` (the session's ``TaskClock`` function) the ranges of the task
    clock (:func:`~cdc_spark.decoding.task_clock.seeded`) from the same aggregate: it groups by Spark task too, and
    its rows of one group are then joined into the group's."""
    groups, ranges, _ = _aggregated(prepared, changes, task_clock, None)
    return groups, ranges


def _aggregated(
    prepared: DataFrame, changes: bool, task_clock: str | None, plans: KeptPlans | None
) -> tuple[list[Row], list[Range] | None, bool]:
    """:func:`groups_and_ranges`, its first aggregate's plan kept in ``plans`` (None: built anew), and whether the
    running clock the pass read serves (:func:`_clock_read_in_pass` of the first aggregate's rows)."""
    from pyspark.sql import functions as F

    build = functools.partial(first_aggregate, changes=changes, task_clock=task_clock)
    aggregate = build(prepared) if plans is None else plans.frame(("shapes", changes, task_clock), prepared, build)
    found = _collected(aggregate)
    in_pass = _clock_read_in_pass(found)
    keys = _keys(changes)
    ranges: list[Range] | None = None
    groups = found
    if task_clock is not None:
        ranges = [(r[_TASK], r["topic"], r["partition"], r["lowest_offset"], r["rank_offset"], r["ts"], r["back"],
                   r[_LEAST_TS]) for r in found]  # fmt: skip
        groups = _joined(found, keys)
    if all(_in_ts_order(row) for row in groups):
        return groups, ranges, in_pass
    counts, position = _counts(prepared, changes), F.col(A.RANK)["position"]
    if all(row["lowest_offset"] >= 0 for row in groups):
        order = _rank_order()
        by_offset = prepared.groupBy(*keys).agg(
            *counts,
            F.max(order).alias("rank"),
            F.max_by(position, order).alias("rank_position"),
            F.min(order).alias("oldest"),
            F.min_by(position, order).alias("oldest_position"),
        )
        return _collected(by_offset), ranges, in_pass
    by_rank = prepared.groupBy(*keys).agg(*counts, F.max(A.RANK).alias("rank"), F.min(A.RANK).alias("oldest"))
    return _collected(by_rank), ranges, in_pass


def _collected(frame: DataFrame) -> list[Row]:
    """``frame`` (an aggregate of a few rows per table, shape and topic-partition) collected in one job."""
    with session_conf(frame.sparkSession, _ONE_JOB):
        return frame.collect()


def _joined(rows: Sequence[Row], keys: Sequence[str]) -> list[Row]:
    """The rows of the first aggregate by ``keys`` and task, one row per ``keys``: as the aggregate by ``keys``
    alone gives them (sums, the least and the greatest, and the values at the group's last and first offset)."""
    from pyspark.sql import Row as SparkRow

    parts: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        parts.setdefault(tuple(row[k] for k in keys), []).append(row)
    joined: list[Row] = []
    for key, found in parts.items():
        if len(found) == 1:
            joined.append(found[0])
            continue
        last = max(found, key=lambda r: r["rank_offset"])
        first = min(found, key=lambda r: r["oldest_offset"])
        values: dict[str, object] = dict(zip(keys, key, strict=True))
        for name in ("messages", "untimed", "rows", "python_bytes"):
            if name in found[0].__fields__:
                counted = [r[name] for r in found if r[name] is not None]
                values[name] = sum(counted) if counted else None  # as Spark sums: nulls left out
        values["ts"] = max((r["ts"] for r in found if r["ts"] is not None), default=None)
        values |= {
            "lowest_offset": min(r["lowest_offset"] for r in found),
            "rank_ts": max(r["rank_ts"] for r in found),
            "rank_offset": last["rank_offset"],
            "ts_at_last": last["ts_at_last"],
            "rank_position": last["rank_position"],
            "oldest_ts": min(r["oldest_ts"] for r in found),
            "oldest_offset": first["oldest_offset"],
            "ts_at_first": first["ts_at_first"],
            "oldest_position": first["oldest_position"],
        }
        joined.append(SparkRow(**values))
    return joined


def find_shapes(prepared: DataFrame, messages: DataFrame, described: Callable[[str, str, str], bool], *,
                changes: bool = False, task_clock: str | None = None, plans: KeptPlans | None = None,
                partition_ts: Mapping[PartitionKey, int] | None = None) -> Shapes:  # fmt: skip
    """One aggregate per shape and topic-partition (:func:`shape_groups`), then the newest and the oldest message
    of each sampled shape fetched by their coordinates: no payload goes through the aggregate. A message routed to
    the JVM comes from ``messages`` (the source; ``prepared`` holds no payload of it), any other from ``prepared``
    (the batch's cache holds it whole: the source is not read again). A JVM shape that is ``described(database,
    table, shape)`` already needs no message (its sample has none). With ``changes``, ``prepared`` holds a row per
    typed change. With ``task_clock``, the task clock comes from the same aggregate where a change without a commit
    ts follows a timed one (:attr:`Shapes.task`; none where a commit ts goes back, from ``partition_ts`` too).
    ``plans``: where the aggregate's plan is kept."""
    from pyspark.sql import functions as F

    groups, ranges, clock_in_pass = _aggregated(prepared, changes, task_clock, plans)
    typed_groups = [row for row in groups if row[A.ROUTE] == Route.JVM] if changes else None
    clock: dict[PartitionKey, int] = {}
    other_clock: dict[PartitionKey, int] = {}
    untimed: set[PartitionKey] = set()
    untimed_messages = 0
    python_messages = 0
    python_bytes: int | None = 0  # None: not counted
    watermarks = 0
    newest: dict[tuple[str, str, str, bool], tuple[Rank, str]] = {}
    oldest: dict[tuple[str, str, str, bool], tuple[Rank, str]] = {}
    routes: dict[tuple[str, str, str, bool], set[str]] = {}
    for row in groups:
        where = (row["topic"], row["partition"])
        if row["ts"] is not None and row["ts"] > clock.get(where, -1):
            clock[where] = row["ts"]
        if row[A.ROUTE] != Route.JVM and row["ts"] is not None and row["ts"] > other_clock.get(where, -1):
            other_clock[where] = row["ts"]
        if row[A.ROUTE] == Route.PYTHON:
            python_messages += row["messages"]
            counted = row["python_bytes"] if "python_bytes" in row.__fields__ else None
            python_bytes = None if python_bytes is None or counted is None else python_bytes + counted
        if row[A.ROUTE] == Route.WATERMARK:
            watermarks += row["messages"]
        untimed_messages += row["untimed"]
        if row[A.ROUTE] == Route.JVM and row["untimed"]:
            untimed.add(where)
        if not row[A.SAMPLE] or row[A.DATABASE] is None or row[A.TABLE] is None:
            continue
        rank, first = _rank(row, "rank"), _rank(row, "oldest")
        key = (row[A.DATABASE], row[A.TABLE], row[A.SHAPE] or "", row[A.ROUTE] == Route.JVM)
        routes.setdefault(key, set()).add(row[A.ROUTE])
        if key not in newest or (rank, row["topic"]) > newest[key]:
            newest[key] = (rank, row["topic"])
        if key not in oldest or (first, row["topic"]) < oldest[key]:
            oldest[key] = (first, row["topic"])
    untimed_after_timed = bool(untimed & clock.keys())
    topics = tuple(sorted({row["topic"] for row in groups if row["topic"] is not None}))
    task = seeded(task_clock, topics, ranges, partition_ts) if untimed_after_timed and task_clock and ranges else None
    task = attrs.evolve(task, in_pass=True) if task is not None and clock_in_pass else task
    task_found = task_clock is not None
    small = python_bytes is not None and 0 < python_messages <= HELD_MESSAGES and python_bytes <= HELD_BYTES
    if not newest and not small:
        return Shapes(
            [], python_messages, clock, other_clock, untimed_after_timed, untimed_messages, typed_groups, watermarks,
            topics=topics, task=task, task_found=task_found,
        )  # fmt: skip
    known = {key for key in newest if key[3] and described(*key[:3])}
    key_of = {(topic, rank[1], rank[2]): key for picked in (newest, oldest) for key, (rank, topic) in picked.items()
              if key not in known}  # fmt: skip
    ends = {(t, p, o, key[3]) for (t, p, o), key in key_of.items()}
    # the batch's cache keeps the payloads of the messages not routed to the JVM: no second read of the source
    # a small residue comes whole with them (the codec's first pass then runs on the driver)
    fetched, whole_residue = _fetched(
        (messages, {(t, p, o) for t, p, o, jvm in ends if jvm}, None),
        (
            prepared.where(F.col(A.ROUTE) != Route.JVM),
            {(t, p, o) for t, p, o, jvm in ends if not jvm},
            F.col(A.ROUTE) == Route.PYTHON if small else None,
        ),
    )
    samples: list[Sample] = []
    for (database, table, shape, jvm), (rank, topic) in newest.items():
        if (database, table, shape, jvm) in known:
            samples.append(Sample(database=database, table=table, shape=shape, message=None, rank=rank, jvm=jvm))
            continue
        found = fetched.get((topic, rank[1], rank[2]))
        if found is None:
            continue
        first, first_topic = oldest[(database, table, shape, jvm)]
        other = fetched.get((first_topic, first[1], first[2]))
        fallback = None if other is None or other is found else row_message(other)
        samples.append(
            Sample(database=database, table=table, shape=shape, message=row_message(found), rank=rank, jvm=jvm,
                   fallback=fallback)
        )  # fmt: skip
    if small:
        held = [row_message(row) for row in whole_residue]
    else:
        residue = {(t, p, o) for t, p, o, jvm in ends
                   if not jvm and routes.get(key_of[t, p, o]) == {Route.PYTHON.value}}  # fmt: skip
        held = [row_message(fetched[end]) for end in residue if end in fetched]  # PythonPath.run puts them in order
    return Shapes(
        samples, python_messages, clock, other_clock, untimed_after_timed, untimed_messages, typed_groups, watermarks,
        held=tuple(held) if held and len(held) == python_messages else None, topics=topics, task=task,
        task_found=task_found,
    )  # fmt: skip


def _clock_read_in_pass(groups: Sequence[Row]) -> bool:
    """Whether the batch's cache holds the running clock its pass read (the first aggregate's ``groups`` have each
    topic's hash) and that clock kept the topics apart: no null topic, no two topics of one hash."""
    if not groups or _TOPIC_HASH not in groups[0].__fields__:
        return False
    hashes: dict[str, int] = {}
    for row in groups:
        if row["topic"] is None:
            return False
        hashes[row["topic"]] = row[_TOPIC_HASH]
    return len(set(hashes.values())) == len(hashes)


_WHOLE: Final = "__whole"  # a fetched message wanted by the frame's condition, not only by its coordinates


def _fetched(
    *wanted: tuple[DataFrame, set[tuple[str, int, int]], Column | None],
) -> tuple[dict[tuple[str, int, int], Row], list[Row]]:
    """The messages at the coordinates (topic, partition, offset) wanted of each frame, by them, and (second) every
    message where the frame's condition holds: one job, one scan of each frame."""
    from pyspark.sql import functions as F

    found: DataFrame | None = None
    for frame, ends, condition in wanted:
        if not ends and condition is None:
            continue
        # The offsets first, a set of longs, cheap to test on every message; then the coordinates (at_coordinates)
        at_ends = F.col("offset").isin(*sorted({o for _, _, o in ends})) & at_coordinates(ends) if ends else None
        every = F.lit(False) if condition is None else condition
        picked = frame.where(every if at_ends is None else every | at_ends)
        picked = picked.select(*MESSAGE_COLUMNS, every.alias(_WHOLE))
        found = picked if found is None else found.unionByName(picked)
    rows = [] if found is None else found.collect()
    return {(r["topic"], r["partition"], r["offset"]): r for r in rows}, [r for r in rows if r[_WHOLE]]


# In the cache, a message's rank is its last row's position alone: the rest of it is the ts and coordinates, cached
# anyway, and a struct column is copied whole into the cache and out of it on every read of one of its fields.
_LAST: Final = "__last"
# The bytes of key and value of a message the codec decodes, kept in the cache for the shapes' aggregate to sum
_PAYLOAD_BYTES: Final = "__payload_bytes"


def without_payloads(prepared: DataFrame, keep_value: bool = False) -> DataFrame:
    """What the batch's cache holds: a message the JVM types without its key and value (they are parsed already;
    Debezium's with their schemas are most of a message), any other whole, for the codec. A JVM message the codec
    needs after all (a value the JVM could not convert, a shape it cannot describe) comes from the source
    (:func:`whole`), as do the samples. ``keep_value``: the value stays, for a Java row typer that reads it. The
    rank is kept as its position alone (:func:`ranked` makes it again); a message for the codec carries the size of
    its key and value (the shapes' aggregate sums them: is the residue small enough to fetch whole?)."""
    from pyspark.sql import functions as F

    routed_here = F.col(A.ROUTE) == Route.JVM
    dropped = ("key",) if keep_value else ("key", "value")
    payload = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
    sized = prepared.withColumn(_PAYLOAD_BYTES, F.when(F.col(A.ROUTE) == Route.PYTHON, payload.cast("long")))
    stripped = sized.withColumns({name: F.when(~routed_here, F.col(name)) for name in dropped})
    return stripped.withColumn(_LAST, F.col(A.RANK)["position"]).drop(A.RANK)


def ranked(stored: DataFrame, plans: KeptPlans | None = None) -> DataFrame:
    """The cache of :func:`without_payloads` with ``A.RANK`` made again (where it is read); from the analyzed plan
    kept in ``plans`` where there is one."""
    from pyspark.sql import functions as F

    def build(source: DataFrame) -> DataFrame:
        return source.withColumn(A.RANK, A.rank(F.col(_LAST))).drop(_LAST)

    return build(stored) if plans is None else plans.frame(("ranked",), stored, build)


def whole(residue: DataFrame, messages: DataFrame) -> DataFrame:
    """The ``residue``'s messages with their payloads: those the cache holds without theirs, from ``messages`` (the
    source), by their coordinates. Where the residue's filter routes none of those, Spark's optimizer finds the
    join empty and the source is not read again."""
    from pyspark.sql import functions as F

    routed_here = F.col(A.ROUTE) == Route.JVM
    wanted = residue.where(routed_here).select(*COORDINATES)
    fetched = join_on_coordinates(messages, wanted, "left_semi")
    return residue.where(~routed_here).select(*MESSAGE_COLUMNS).unionByName(fetched.select(*MESSAGE_COLUMNS))


@attrs.frozen
class ShapeReuse:
    """Readers of shapes described in earlier batches (``kept_readers``), for an adapter with ``readers_by_shape``:
    such a shape's sample is neither fetched nor decoded again. Readers of a shape that names a schema version only
    (``ShapeReaders.by_version``) serve where the schemas of earlier batches (``known``) hold theirs: a version
    number alone does not tell one table's schemas apart everywhere (hand-made messages, say)."""

    app: str | None
    adapter: Adapter
    kept_readers: Reuse[ShapeReaders]
    known: Sequence[TableSchema] = ()

    def _key(self, database: str, table: str, shape: str) -> Hashable:
        return (self.app, self.adapter.expressions_key(), database, table, shape)

    def kept(self, database: str, table: str, shape: str) -> bool:
        readers = self.kept_readers.held(self._key(database, table, shape)) if self.adapter.readers_by_shape else None
        return readers is not None and (not readers.by_version or readers.schema in self.known)

    def described(
        self, samples: Sequence[Sample], known: Sequence[TableSchema]
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        """The adapter's readers for the samples with a message, the kept ones for the others (then kept too)."""
        # the kept readers are taken before any new ones are kept: a batch with more new shapes than the capacity
        # would otherwise drop kept readers its shapes' pass counted on, and send their shapes to the codec
        kept = {s.key: self.kept_readers.peek(self._key(*s.key)) for s in samples if s.jvm and s.message is None}
        with_message = [s for s in samples if s.message is not None]
        # a batch of known shapes asks the adapter nothing: its codec's decoder is not even made (TiCDC Avro's makes a
        # registry client, about 25 ms)
        described = self.adapter.describe(with_message, known) if with_message else {}
        retry = [attrs.evolve(s, message=s.fallback, fallback=None) for s in samples
                 if s.fallback is not None and described.get(s.key) is None]  # fmt: skip
        if retry:  # the newest message of these shapes did not decode: their oldest may
            described.update({k: v for k, v in self.adapter.describe(retry, known).items() if v is not None})
        if self.adapter.readers_by_shape:
            for name, readers in described.items():
                if name not in kept and readers is not None and readers.reusable:
                    self.kept_readers.put(self._key(*name), readers)
        described.update(kept)  # None (the codec) where another decode dropped them since the shapes' pass
        return described
