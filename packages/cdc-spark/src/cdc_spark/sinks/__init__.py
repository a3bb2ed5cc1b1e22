"""Sinks write one batch of a table's changes to a target table and its state table, exactly once.

A sink is chosen by name from the entry-point group ``cdc_spark.sinks`` (``delta``, ``iceberg``; a new table
format is one module registered there), like pyiceberg chooses catalogs: :func:`load_sink`. Every built-in sink
is a :class:`~cdc_spark.sinks.tables.TableSink` running the SQL of :mod:`cdc_spark.merge` on Spark through a
:class:`~cdc_spark.sinks.tables.TableFormat` that names the tables and marks commits; a micro-batch's tables are
written with one call (``write_batch``), so what every table shares is written once per batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import attrs

from cdc_core.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from cdc_spark.merge.batch import BatchSummary
    from cdc_spark.merge.spec import ApplySpec

GROUP: Final = "cdc_spark.sinks"
# The sinks this distribution registers, with what they need: the hint of the error when one cannot load.
AVAILABLE_SINKS: Final = {
    "delta": "Delta Lake tables (delta-spark jars on Spark's classpath)",
    "iceberg": "Iceberg tables (the iceberg-spark-runtime jar on Spark's classpath)",
}


@attrs.frozen(kw_only=True)
class BatchInfo:
    """Identifies a micro-batch: a replay of the same ``batch_id`` under the same ``app_id`` is a no-op."""

    app_id: str
    batch_id: int
    offsets: str | None = None  # the source offsets of the batch as JSON, recorded in the commit


@attrs.define
class MergePlan:
    """One batch of one table: the spec and the change frame; the sink records its :class:`BatchSummary`."""

    spec: ApplySpec
    changes: DataFrame
    summary: BatchSummary | None = None  # set by the sink once it has counted the batch


@runtime_checkable
class Sink(Protocol):
    """Writes merge plans for tables named ``database.table``, and a batch's dead letters beside them."""

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None:
        """The target table of ``table`` as a frame of ``spark``, None where it does not exist yet."""
        ...

    def live(self, spark: SparkSession, table: str) -> DataFrame:
        """The target table of ``table``; a :class:`~cdc_core.errors.StorageError` where there is none."""
        ...

    def write(self, plan: MergePlan, batch: BatchInfo | None) -> bool:
        """Apply one batch of one table; False where it had been applied before (a replay)."""
        ...

    def write_batch(self, plans: Sequence[MergePlan], batch: BatchInfo | None, parallelism: int = 1) -> dict[str, bool]:
        """Apply one batch of every table at once, ``parallelism`` targets side by side; by table, False where it
        had been applied before (a replay)."""
        ...

    def write_dead_letters(self, letters: DataFrame, batch: BatchInfo) -> None:
        """Append a batch's dead letters (``DecodedChanges.dead_letters``) to the sink's dead-letter table."""
        ...

    def tables(self) -> list[str]:
        """The target tables the sink holds, as ``database.table``."""
        ...


SinkFactory = Callable[["SparkSession", str, Mapping[str, str]], Sink]


def available_sinks() -> dict[str, EntryPoint]:
    """Installed sinks by name (entry points of ``cdc_spark.sinks``)."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def load_sink(name: str, spark: SparkSession, target: str, options: Mapping[str, str] | None = None) -> Sink:
    """The sink registered as ``name``, built for ``target`` (a directory, or a catalog with ``catalog=``).

    An unknown name is a :class:`ConfigError` listing the installed sinks; a sink whose module cannot be
    imported says what it needs.
    """
    installed = available_sinks()
    entry = installed.get(name)
    if entry is None:
        known = ", ".join(sorted(installed)) or "none (is cdc-spark installed?)"
        raise ConfigError(f"table format {name!r} is not a known sink; installed: {known}")
    try:
        factory: SinkFactory = entry.load()
    except ImportError as exc:
        need = AVAILABLE_SINKS.get(name, f"the package that registers {entry.value}")
        raise ConfigError(f"table format {name!r} cannot be loaded ({exc}); it needs {need}") from exc
    return factory(spark, target, dict(options or {}))


__all__ = ["AVAILABLE_SINKS", "GROUP", "BatchInfo", "MergePlan", "Sink", "available_sinks", "load_sink"]
