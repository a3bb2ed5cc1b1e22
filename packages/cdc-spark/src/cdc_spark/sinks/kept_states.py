"""Rows a batch wrote, kept in the executors for the next batch that reads them: a large table's key state and the
table itself.

A batch that changes a good part of a large table replaces the table's partition of the key state whole with rows
of its resolve (:mod:`cdc_spark.sinks.scd1_batch`), which the walked fold left placed by the key's hash
(:mod:`cdc_spark.merge.jvm_fold`, :func:`cdc_spark.batch_cache.checkpoint_by_key`). The next batch would read those
rows back from the files, parse each key's text into the key's type and shuffle them by it again: at 10^6 keys a
Spark job of 0.64 s of a 5.8 s round (2-core machine), before the sort the join needs. Instead the resolve's
checkpoint, which holds those rows with the key's typed columns beside its text, placed and sorted by the key, is
kept after the batch (in the executors' memory, spilled to their disks as Spark's blocks are), and the next batch's
resolve joins its state columns as they are. Copied into Spark's columnar cache instead, the copy cost the write
as much time as the read spared. Such a table's target, rewritten whole on Delta
(:func:`cdc_spark.sinks.delta_rewrite.rewrite_table`), is kept the same way: the rows the rewrite writes, placed
by the key as the join with the resolve leaves them, copied as the write reads them, and joined in place of the
target's files (their read, shuffle and sort) by the next batch's rewrite.

Kept rows are what a table holds only while the table (or the key state's partition) is the files that write left:
an entry is taken by the next batch only when the version it reads lists exactly those files (any other write, a
purge of tombstones, a MERGE, a user's DELETE, changes them), with the key's types (a target's schema) and the
fold's partitions the same; otherwise it is dropped and the files are read, as they are when reading the kept rows
fails (an executor that held them lost). Entries live as long as the Spark application (one registry per
``SparkContext``, whose executors hold the rows), for any sink object that writes the same tables, so a caller that
builds a sink per batch (``apply_changes`` with a path) keeps them too. A key state's checkpoint holds every column
of the resolve (about 270 bytes a row for five value columns), so at most :data:`KEPT_ROWS` rows are kept in all,
as the batches counted them (stored keys and changes), the oldest entries given up first. The Spark setting
:data:`KEPT_ROWS_SETTING` sets another limit for the application (0 keeps nothing): executors with little memory
and many large tables want less, large executors may keep more.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.errors import ConfigError
from cdc_spark.batch_cache import release

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame

KEPT_ROWS: Final = 6_000_000  # kept rows of all tables, at most, as the batches counted them
KEPT_ROWS_SETTING: Final = "spark.cdc.keptRows"  # the application's own limit, in place of KEPT_ROWS


@attrs.frozen
class Placement:
    """How a batch's resolved rows are placed: by the hash of ``keys`` into ``partitions``; ``rows``, the rows the
    batch counted for the table (its stored keys and changes)."""

    keys: tuple[str, ...]
    partitions: int
    rows: int


@attrs.frozen
class KeptState:
    """Rows of a table (its key state's, or the target's own) as one batch wrote them."""

    files: frozenset[str]  # the files that write left, as the table's log names them
    key_types: tuple[str, ...]  # what the rows' layout must match: the key columns' types (and the table's schema)
    partitions: int  # the partitions the rows are placed in by the key's hash
    rows: int
    frame: DataFrame = attrs.field(eq=False, repr=False)  # :func:`cdc_spark.merge.scd1.kept_rows` of ``resolved``
    resolved: DataFrame = attrs.field(eq=False, repr=False)  # the resolve's checkpoint that holds them

    def free(self) -> None:
        """Free the checkpoint's blocks."""
        release(self.resolved)


@attrs.define
class KeptStates:
    """The kept key states of one Spark application, by key state and table."""

    limit: int = KEPT_ROWS
    entries: dict[tuple[str, str], KeptState] = attrs.field(factory=dict)

    def take(
        self, state: str, table: str, files: frozenset[str] | None, key_types: Sequence[str], partitions: int
    ) -> KeptState | None:
        """The kept rows of ``table`` in ``state`` where they are what ``files`` (the partition's files in the version
        the batch reads) hold, typed by ``key_types`` and placed in about ``partitions`` (half to twice as many);
        else None. The entry leaves the registry either way (freed unless returned): the batch writes the partition
        again, and the caller frees what it took once that write is done."""
        kept = self.entries.pop((state, table), None)
        if kept is None:
            return None
        if kept.files != files or kept.key_types != tuple(key_types) or not _near(kept.partitions, partitions):
            kept.free()
            return None
        return kept

    def put(self, state: str, table: str, kept: KeptState) -> None:
        """Keep ``kept`` for the next batch, giving up the oldest entries beyond :attr:`limit` rows (or ``kept``
        itself, when it alone is over)."""
        old = self.entries.pop((state, table), None)
        if old is not None:
            old.free()
        if kept.rows > self.limit:
            kept.free()
            return
        self.entries[(state, table)] = kept
        while sum(entry.rows for entry in self.entries.values()) > self.limit:
            oldest = next(iter(self.entries))
            self.entries.pop(oldest).free()

    def clear(self) -> None:
        """Free every entry."""
        for kept in self.entries.values():
            kept.free()
        self.entries.clear()


def _near(kept: int, wanted: int) -> bool:
    """Whether rows placed in ``kept`` partitions serve a fold that would take ``wanted``: at most twice the rows a
    task of the walk joins (:data:`~cdc_spark.merge.jvm_fold.ROWS_PER_PARTITION`), at least half."""
    return wanted <= 2 * kept and kept <= 2 * wanted


# one registry per Spark application: its rows live in that application's executors
_REGISTRIES: Final[weakref.WeakKeyDictionary[SparkContext, KeptStates]] = weakref.WeakKeyDictionary()


def kept_states(context: SparkContext) -> KeptStates:
    """The registry of the Spark application ``context`` runs, limited by its :data:`KEPT_ROWS_SETTING`."""
    registry = _REGISTRIES.get(context)
    if registry is None:
        registry = _REGISTRIES[context] = KeptStates(limit_of(context.getConf().get(KEPT_ROWS_SETTING)))
    return registry


def limit_of(setting: str | None) -> int:
    """The kept rows' limit a :data:`KEPT_ROWS_SETTING` value gives (:data:`KEPT_ROWS` where it is not set)."""
    if setting is None:
        return KEPT_ROWS
    try:
        limit = int(setting.strip().replace("_", ""))
    except ValueError:
        limit = -1
    if limit < 0:
        raise ConfigError(f"{KEPT_ROWS_SETTING}={setting!r}: give a number of rows, 0 or more (0 keeps nothing)")
    return limit


__all__ = ["KEPT_ROWS", "KEPT_ROWS_SETTING", "KeptState", "KeptStates", "Placement", "kept_states", "limit_of"]
