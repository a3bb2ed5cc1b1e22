"""Statements over temporary views analyzed once per shape, then reused over other frames of the same schemas.

A table's resolve (:func:`cdc_spark.merge.scd1.resolve`) is one SQL statement of hundreds of columns; parsing and
analyzing it is most of the driver's time to plan it (about 0.15 s a table, measured), and the tables of a changefeed
often share a shape (sharded tables, a schema per tenant). The statement's text and its frames' schemas decide its
analyzed plan up to the frames' own plans, so :class:`AnalyzedPlans` keeps the first plan of a text and schemas, and
for the next frames of the same schemas puts their plans in place of the views' (``cdc.spark.plans.AnalyzedPlans``,
one pass over the tree in the JVM) and marks the plan analyzed, which Spark then does not analyze again. The
optimizer still runs for each table, over its own frames.

The plans hold the frames they were made over, so an :class:`AnalyzedPlans` lives as long as the frames may
(a batch). Where the project's Java code is not available, or switched off (:data:`SWITCH_ENV`), every statement is
planned anew.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.runtime.plan_reuse import SWITCH_ENV, analyzed_plan, over, reusable
from cdc_spark.session_conf import temporary_views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# stands for a view's name in the text a plan is kept by: the views' real names are new for every statement
_VIEW: Final = "__cdc_view_{}__"

_Key = tuple[str, tuple[str, ...]]  # a statement's text (its views' names left out) and its frames' schemas
Statement = Callable[..., str]  # the SQL text over views of the names it is given, one for each frame, in order


class AnalyzedPlans:
    """Analyzed plans kept by their statement's text and frames' schemas, while this object lives; safe to use from
    several threads (a batch's tables are planned side by side)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: dict[_Key, tuple[Any, tuple[str, ...]]] = {}
        # statements being planned on another thread: a table of the same shape waits for the plan, not planning it
        # too (the tables of a small batch start at once, and analyses side by side share the driver's cores)
        self._planning: dict[_Key, threading.Event] = {}
        self.analyzed = 0  # statements planned from their text
        self.reused = 0  # statements planned from a kept plan

    def sql(self, frames: Sequence[DataFrame], statement: Statement, *, prefix: str) -> DataFrame:
        """The frame of ``statement`` over ``frames`` (temporary views named ``prefix`` and a random part while it is
        planned), in the first frame's session: a kept plan of the same text over frames of the same schemas where
        there is one (or once the thread planning it has it), else planned now (and kept, where plans can be
        reused)."""
        spark = frames[0].sparkSession
        if not reusable(spark):
            return self._planned(frames, statement, prefix)[0]
        key = (statement(*(_VIEW.format(i) for i in range(len(frames)))), tuple(f.schema.json() for f in frames))
        while True:
            with self._lock:
                kept = self._plans.get(key)
                underway = None if kept is not None else self._planning.get(key)
                if kept is None and underway is None:
                    mine = self._planning[key] = threading.Event()
                    break
            if underway is not None:
                underway.wait()
                continue
            if kept is not None and (frame := over(kept[0], kept[1], frames)) is not None:
                with self._lock:
                    self.reused += 1
                return frame
            return self._planned(frames, statement, prefix)[0]  # frames the kept plan does not fit
        try:
            frame, views = self._planned(frames, statement, prefix)
            with self._lock:
                self._plans[key] = (analyzed_plan(frame), views)
        finally:
            with self._lock:
                del self._planning[key]
            mine.set()  # a failed planning leaves no plan: the next waiter plans it itself
        return frame

    def _planned(
        self, frames: Sequence[DataFrame], statement: Statement, prefix: str
    ) -> tuple[DataFrame, tuple[str, ...]]:
        spark = frames[0].sparkSession
        with temporary_views(spark, *frames, prefix=prefix) as views:
            frame = spark.sql(statement(*views))
        with self._lock:
            self.analyzed += 1
        return frame, views


__all__ = ["SWITCH_ENV", "AnalyzedPlans", "Statement"]
