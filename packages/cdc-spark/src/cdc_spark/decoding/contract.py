"""The one result type of decode: per-table change frames, schemas, control rows, dead letters, the clock.

Whichever path decoded a message (the JVM, or a protocol codec in the executors), its rows land here in the same
shape; a table's frame is the union of the parts the paths produced, typed by the table's newest schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING

import attrs

from cdc_core.errors import ConfigError
from cdc_core.schema import TableSchema
from cdc_spark.batch_cache import release
from cdc_spark.decoding.spark_types import CONTROL_SCHEMA, DEAD_LETTER_SCHEMA
from cdc_spark.local_frames import empty_frame
from cdc_spark.partition_clock import PartitionKey
from cdc_spark.time_text import with_time_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _union(spark: SparkSession, frames: Sequence[DataFrame], schema: str) -> DataFrame:
    if not frames:
        return empty_frame(spark, schema)
    return reduce(lambda a, b: a.unionByName(b), frames)


@attrs.define
class DecodedChanges:
    """What :func:`cdc_spark.decode` returns (the contract of docs/spark-source-decode.md).

    * :meth:`tables` / :meth:`table`: the tables with changes in the batch, and each one's typed change frame;
    * :meth:`schemas`: the newest :class:`~cdc_core.schema.TableSchema` of every table the batch typed;
    * :meth:`control`: DDL, watermark and bootstrap rows; :meth:`dead_letters`: what could not be decoded (and
      :meth:`dead_letter_count`: how much);
    * :meth:`partition_commit_ts`: the newest commit ts per topic-partition, for the next batch;
    * :meth:`release`: free what was kept for this batch (its frames are not read after it);
    * :attr:`paths`: how the batch was decoded: ``jvm`` changes typed by Spark, ``codec`` messages the protocol's
      codec decoded in the executors or on the driver (the residue, or everything with the ``python`` and ``driver``
      plans);
    * :attr:`steps`: seconds of wall time per step decode ran before it returned (``shapes``: parsing, caching and
      grouping the batch by shape; ``schemas``: the samples decoded on the driver; ``typing``: every change typed
      and counted; ``codec``: the residue, or every message with the ``python`` plan). Writing the frames is the
      caller's time.
    """

    spark: SparkSession
    _parts: Mapping[tuple[str, str], Sequence[DataFrame]]
    _schemas: Mapping[tuple[str, str], TableSchema]
    _control: Sequence[DataFrame]
    _dead: Sequence[DataFrame]
    _clock: Mapping[PartitionKey, int]
    _cached: Sequence[DataFrame] = ()
    time_as: str = "interval"
    paths: Mapping[str, int] = attrs.field(factory=dict)
    steps: Mapping[str, float] = attrs.field(factory=dict)
    _dead_count: int | None = None  # known where the driver decoded the batch

    def tables(self) -> list[tuple[str, str]]:
        return sorted(name for name, parts in self._parts.items() if parts)

    def table(self, database: str, table: str) -> DataFrame:
        parts = self._parts.get((database, table))
        if not parts:
            raise ConfigError(f"no changes of table {database}.{table} in this batch; see tables()")
        frame = reduce(lambda a, b: a.unionByName(b), parts)
        if self.time_as == "string":
            frame = with_time_text(frame, self._schemas[(database, table)])
        return frame

    def schemas(self) -> dict[tuple[str, str], TableSchema]:
        return dict(self._schemas)

    def control(self) -> DataFrame:
        return _union(self.spark, self._control, CONTROL_SCHEMA)

    def dead_letters(self) -> DataFrame:
        return _union(self.spark, self._dead, DEAD_LETTER_SCHEMA)

    def dead_letter_count(self) -> int:
        """How many rows :meth:`dead_letters` has: known without a Spark job where the driver decoded the batch."""
        return self._dead_count if self._dead_count is not None else self.dead_letters().count()

    def partition_commit_ts(self) -> dict[PartitionKey, int]:
        """The newest commit ts per topic-partition after this batch: the next batch's ``partition_ts``."""
        return dict(self._clock)

    def release(self) -> None:
        for frame in self._cached:
            release(frame)


__all__ = ["DecodedChanges"]
