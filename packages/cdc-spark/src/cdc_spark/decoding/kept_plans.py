"""Frames a decode builds the same way every batch, analyzed once and put over the next batch's input.

A JVM decode builds its first stage's frame in a dozen projections over the batch's messages: the adapter's
columns, the last batch's typing, the cache's columns. Spark analyzes each projection as it is made, and the
expressions are the same from batch to batch (they are kept: :mod:`~cdc_spark.decoding.reuse`); only the input
differs. :class:`KeptPlans` keeps the analyzed plan of such a frame, built over a view of its input, by the
caller's key (everything the building captures) and the input's schema. For the next input under the same key it
puts the input's plan in place of the view's (:func:`cdc_spark.runtime.plan_reuse.over`), which Spark does not
analyze again. Measured at TiCDC Avro's 99,400 messages a batch: the typing's and the cache's projections took
0.27-0.43 s of the driver's time a batch, the kept plan put over a new input 8-15 ms.

A kept plan holds the plan of the input it was built over (not its data): one entry per key, a few keys at a
time. Where plans are not reused (:data:`cdc_spark.runtime.plan_reuse.SWITCH_ENV`, or no Java code), every frame
is built anew.

A frame made from a kept plan over a frame that has a *lineage* (:func:`lineage_of`: a leaf of the messages' rows,
or itself made from kept plans over one) has one too: the kept plans it was made of, innermost last. Two frames of
one lineage have the same plan but for the leaf's rows, so their physical plan can be kept as well
(:mod:`cdc_spark.decoding.kept_passes`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.decoding.reuse import Reuse
from cdc_spark.runtime.plan_reuse import analyzed_plan, over, reusable, with_lookup_values

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_LINEAGE: Final = "_cdc_lineage"  # on the frame object itself, read without the frame's column lookup
LEAF: Final = object()  # a leaf of rows (:meth:`cdc_spark.decoding.kept_passes.KeptPasses.leaf`), its lineage's end


def lineage_of(frame: DataFrame) -> tuple[object, ...] | None:
    """The kept plans ``frame`` was made of over a leaf, innermost last; None where it was built otherwise."""
    found = vars(frame).get(_LINEAGE)
    return found if isinstance(found, tuple) else None


def with_lineage(frame: DataFrame, lineage: tuple[object, ...]) -> DataFrame:
    """``frame``, marked as made of ``lineage``."""
    setattr(frame, _LINEAGE, lineage)
    return frame


class _Kept:
    """A kept analyzed plan, and the object that names it in a frame's lineage (compared by identity)."""

    __slots__ = ("plan",)

    def __init__(self, plan: Any) -> None:
        self.plan = plan


class KeptPlans:
    """Analyzed plans of frames built over one input each (a view named ``view``), by key and input schema."""

    def __init__(self, view: str, capacity: int = 8) -> None:
        self.view = view
        self._plans: Reuse[_Kept] = Reuse(capacity)
        self.built = 0  # frames built and their plans kept
        self.reused = 0  # frames made from a kept plan

    def frame(
        self,
        key: Hashable,
        source: DataFrame,
        build: Callable[[DataFrame], DataFrame],
        values: Mapping[int, Sequence[int | None]] | None = None,
        *,
        schema: str | None = None,
    ) -> DataFrame:
        """``build(source)``: from the plan kept under ``key`` for inputs of ``source``'s schema, put over
        ``source``, where there is one that fits; else built over a view of ``source`` and its plan kept. ``build``
        must read its argument once and capture nothing that ``key`` does not name, but the values of its marked
        lookups (:func:`~cdc_spark.decoding.literal_lookup.lookup`): ``values`` by marker, this call's, which a
        kept plan takes (the lookups' keys belong in ``key``). ``schema``: ``source``'s schema as JSON, where the caller
        has it (else it is asked of the JVM)."""
        if not reusable(source.sparkSession):
            return build(source)
        kept_key = (key, source._jdf.schema().json() if schema is None else schema)
        kept = self._plans.peek(kept_key)
        if kept is not None and (frame := over(kept.plan, [self.view], [source])) is not None:
            if values:
                frame = with_lookup_values(frame, values)
            if frame is not None:
                self.reused += 1
                inner = lineage_of(source)
                return frame if inner is None else with_lineage(frame, (kept, *inner))
        frame = build(source.alias(self.view))
        self._plans.put(kept_key, _Kept(analyzed_plan(frame)))
        self.built += 1
        return frame

    def clear(self) -> None:
        self._plans.clear()
        self.built = self.reused = 0


__all__ = ["LEAF", "KeptPlans", "lineage_of", "with_lineage"]
