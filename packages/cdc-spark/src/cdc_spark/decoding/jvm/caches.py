"""What the JVM path keeps from one batch to the next: built expressions and the last batch's typings.

A streaming job decodes batch after batch of the same shapes, and building a table's typing expressions costs
thousands of py4j calls. Every kept value is keyed by the Spark app (its JVM objects) and what it captures, so
one set of caches may serve several queries and sessions; :meth:`JvmCaches.clear` forgets them all.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

from cdc_spark.decoding.adapter import ShapeReaders
from cdc_spark.decoding.kept_passes import KeptPasses
from cdc_spark.decoding.kept_plans import KeptPlans
from cdc_spark.decoding.reuse import Reuse

if TYPE_CHECKING:
    from pyspark.sql import Column

    from cdc_spark.decoding.jvm.table_typing import TableTyping, Typing


# How many tables the per-table caches keep: a changefeed of up to this many busy tables finds each one's shapes and
# part columns again in the next batch. An LRU map smaller than the tables a batch goes through keeps none of them
# (at 200 tables, a map of 256 shapes sent a quarter of each later batch to the codec)
TABLES_KEPT: Final = 1024
# A table's shapes at a time: an insert's, an update's, a delete's, and the next schema's
SHAPES_A_TABLE: Final = 4


class JvmCaches:
    """The JVM path's caches, and counts of what it planned (the tests read them)."""

    def __init__(self) -> None:
        # built typing projections, by key; small, as a job types few distinct sets of shapes at a time
        self.typings: Reuse[Typing] = Reuse(capacity=8)
        # readers of shapes described in earlier batches, for adapters whose shape digest fixes the readers
        self.shapes: Reuse[ShapeReaders] = Reuse(capacity=SHAPES_A_TABLE * TABLES_KEPT)
        # a few dozen to a few hundred py4j calls each: a Java-typed batch's table index and typer calls, its change
        # columns, and each table's part columns (by its index in the batch's typings too: twice the tables)
        self.row_calls: Reuse[tuple[Column, tuple[Column, ...]]] = Reuse(capacity=8)
        self.change_columns: Reuse[tuple[Column, tuple[Column, ...]]] = Reuse(capacity=8)
        self.parts: Reuse[tuple[Column, list[Column]]] = Reuse(capacity=2 * TABLES_KEPT)
        # the tables a Java row typer (or, where rows are messages, the SQL typing) typed in the last batch
        self.speculations: Reuse[tuple[TableTyping, ...]] = Reuse(capacity=8)
        # the analyzed plan of the first stage's frame where the last batch's SQL typing types the messages in it
        self.stage_plans = KeptPlans("__cdc_prepared__")
        # its physical plan, where the frame is made of kept plans over a leaf of the messages' rows
        self.passes = KeptPasses()
        # the analyzed plan of the source's message columns (a projection of the source, the same every batch)
        self.source_plans = KeptPlans("__cdc_source__", capacity=4)
        # the analyzed plans of the frames over the batch's cache the same every batch: its rank made again, the
        # shapes' aggregate, the wide frame and each table's part of it (two rank and aggregate plans, as the first
        # batch's cache holds messages and the later ones' typed changes; then one wide frame and its tables)
        self.cache_plans = KeptPlans("__cdc_cache__", capacity=8 + TABLES_KEPT)
        # batches typed in their shapes' pass ("typed"), again after a speculation that missed ("retyped"), or
        # without one ("unspeculated")
        self.speculated: Counter[str] = Counter()
        # how the running clock was planned: by the tasks as they read ("task"), by the shapes' pass's tasks and
        # kept in the batch's cache ("pass"), or sorted by a window ("sorted")
        self.running_clocks: Counter[str] = Counter()

    def clear(self) -> None:
        """Forget every kept value and count."""
        for kept in (self.typings, self.shapes, self.row_calls, self.change_columns, self.parts, self.speculations):
            kept.clear()
        self.stage_plans.clear()
        self.cache_plans.clear()
        self.source_plans.clear()
        self.passes.clear()
        self.speculated.clear()
        self.running_clocks.clear()


__all__ = ["SHAPES_A_TABLE", "TABLES_KEPT", "JvmCaches"]
