"""One table's writes (:class:`BatchWrite`), and what a table format supplies to them (:class:`TableFormat`).

:class:`BatchWrite` runs in the session of a table's change frame: an SCD2 batch whole (its target and its state
table, as :mod:`cdc_spark.sinks.tables` describes), and the steps an SCD1 batch takes per table
(:mod:`cdc_spark.sinks.scd1_batch`): evolving a table's columns, creating it with its first rows, appending rows
no target row matches, and MERGEs marked with the batch.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

import attrs

from cdc_core.errors import StorageError
from cdc_spark.local_frames import no_rows
from cdc_spark.merge import scd2
from cdc_spark.merge.batch import BatchSummary, ordered, sequence_type, summarize
from cdc_spark.merge.columns import END_AT, PURGED_AT, START_AT, TIME, TRUNCATED_BEFORE
from cdc_spark.merge.evolution import evolve
from cdc_spark.merge.spec import ApplySpec
from cdc_spark.merge.statements import Merge, add_columns, merges, quote, set_properties
from cdc_spark.session_conf import CONSTRAINT_PROPAGATION, session_conf, temporary_views
from cdc_spark.sinks import BatchInfo, MergePlan
from cdc_spark.sinks.commits import TableInfo, pending

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructField, StructType

    from cdc_spark.sinks.kept_states import Placement

# Spark's constraint propagation grows exponentially with the aliases a wide table's resolution names (it ran out
# of heap at 16 value columns); the resolution gains nothing from the filters it infers, so it is off while a
# batch is resolved and written.


# one partition of a table (by the value given) read in the session given: see TableFormat.partition_reader
PartitionReader = Callable[["SparkSession", str], "DataFrame"]


class TableFormat(Protocol):
    """What a table format supplies to :class:`~cdc_spark.sinks.tables.TableSink`: names, metadata, commit marks,
    widening."""

    name: str  # the USING clause: delta, iceberg
    spark: SparkSession

    def target(self, table: str) -> str:
        """The SQL identifier of the target table of ``database.table``."""
        ...

    def state(self, table: str) -> str:
        """The SQL identifier of its SCD2 state table."""
        ...

    def dead_letters(self) -> str: ...

    def describe(self, name: str, app_id: str | None) -> TableInfo | None:
        """The table's metadata, None if it does not exist."""
        ...

    def rows_by_partition(
        self, name: str, column: str, values: Sequence[str], info: TableInfo | None = None
    ) -> dict[str, int] | None:
        """Rows of each partition of ``name`` whose ``column`` is one of ``values``, from the table's metadata (a
        partition without rows is left out), read through ``info``'s handle when given (what :meth:`describe` loaded:
        no second load); None when the metadata does not say."""
        ...

    def partition_reader(
        self, name: str, column: str, values: Sequence[str], info: TableInfo
    ) -> PartitionReader | None:
        """A reader of each partition of ``info``'s version of ``name`` whose ``column`` is one of ``values``,
        cheaper per read than the format's own scan of the table filtered to it; None where the format has none
        (the caller reads the table and filters it)."""
        ...

    def partition_files(
        self, name: str, column: str, values: Sequence[str], info: TableInfo
    ) -> Mapping[str, frozenset[str]] | None:
        """The data files of each of ``values``' partitions in ``info``'s version of ``name``, where the format names
        them and they hold their rows as written (no row of them deleted apart); None where it does not."""
        ...

    def create_properties(self) -> dict[str, str]:
        """Table properties every table of this format is created with."""
        ...

    def key_state_properties(self) -> dict[str, str]:
        """Table properties the SCD1 key state is created with besides :meth:`create_properties`."""
        ...

    def prepare(self, name: str) -> None:
        """Whatever must exist before ``CREATE TABLE name`` (a namespace)."""
        ...

    def key_state(self, suffix: str) -> str:
        """The SQL identifier of the SCD1 key state every table shares (``suffix``: of a sequence type)."""
        ...

    def create_from(
        self,
        name: str,
        schema: StructType,
        rows: DataFrame,
        properties: dict[str, str],
        batch: BatchInfo | None,
        *,
        partitioned_by: tuple[str, ...] = (),
    ) -> None:
        """Create the table with its first rows, the write marked with ``batch``."""
        ...

    def insert(self, name: str, rows: DataFrame, batch: BatchInfo | None) -> None:
        """Append ``rows``, in the existing table's columns, in one commit marked with ``batch``."""
        ...

    def rewrite(
        self,
        name: str,
        source: DataFrame,
        rule: Merge,
        batch: BatchInfo | None,
        *,
        one_task: bool = False,
        placed: Placement | None = None,
    ) -> bool:
        """What MERGEing ``source`` into the existing table by ``rule`` gives, written as a rewrite of the whole
        table in one commit marked with ``batch``, for a table small enough that this costs less than the MERGE
        (the caller judges; ``one_task``: so small that the table's rows and ``source`` are read by one task, see
        :mod:`cdc_spark.sinks.one_task`); False, with nothing written, where the format or the table's version
        cannot. ``placed``: how ``source`` is placed, where the format may keep the rows it writes for the next
        batch's rewrite (:mod:`cdc_spark.sinks.kept_states`)."""
        ...

    def replace_partitions(
        self, name: str, rows: DataFrame, column: str, batch: BatchInfo | None
    ) -> Mapping[str, frozenset[str]] | None:
        """Every partition (by ``column``, the table's partition column) that ``rows`` (in the table's columns) has
        rows of replaced by them, in one commit marked with ``batch``, cheaper than Spark's dynamic overwrite: the
        files written, by partition value, as :meth:`partition_files` names them. None, with nothing written, where
        the format or the table cannot (the caller overwrites)."""
        ...

    def marked(self, batch: BatchInfo | None) -> AbstractContextManager[None]:
        """While open, the statements this session runs record ``batch`` in their commit."""
        ...

    def widen(self, table: str, name: str, fields: tuple[StructField, ...]) -> None:
        """Widen the stored columns to ``fields``' types (or raise SchemaEvolutionError)."""
        ...

    def tables(self) -> list[str]:
        """``database.table`` of every target table."""
        ...

    def append(self, name: str, frame: DataFrame, batch: BatchInfo) -> None:
        """Append ``frame`` once per batch (the dead letters)."""
        ...


class CommitWatch(Protocol):
    """Told of the commits a batch makes, by table (the key state's by its own name): fault tests kill the job at
    these points."""

    def before(self, name: str) -> None: ...

    def after(self, name: str) -> None: ...


@attrs.define
class BatchWrite:
    """One table's writes, run in the session of its change frame: an SCD2 batch (:meth:`run`), and the steps a
    batch of SCD1 tables takes per table (:mod:`cdc_spark.sinks.scd1_batch`)."""

    format: TableFormat
    clock: Callable[[], dt.datetime]

    @property
    def spark(self) -> SparkSession:
        return self.format.spark

    def run(self, plan: MergePlan, batch: BatchInfo | None, counted: MergePlan | None = None) -> bool:
        """An SCD2 batch of one table into its target and state table; False when both had committed it. The
        summary is recorded on ``counted`` (the caller's plan) as well."""
        spec = plan.spec
        target, state = self.format.target(spec.table), self.format.state(spec.table)
        app = batch.app_id if batch is not None else None
        target_info, state_info = self.format.describe(target, app), self.format.describe(state, app)
        todo = pending(target_info, state_info, batch)
        if not todo:
            return False
        floor = state_info.properties.get(TRUNCATED_BEFORE) if state_info is not None else None
        summary = summarize(plan.changes, spec, floor)
        plan.summary = summary
        if counted is not None:
            counted.summary = summary
        if summary.changes == 0:
            return True
        now = self.clock()
        changes = ordered(plan.changes, spec, summary)
        target_schema = self.target_schema(changes, spec)
        state_schema = _history_schema(changes, spec)
        new_target = self.evolve(spec.table, target, target_schema, target_info)
        new_state = self.evolve(spec.table, state, state_schema, state_info)
        if new_state and summary.floor is not None:
            # A truncate's floor is a state table property, stored before the batch commits into the table (a
            # replay of a committed batch is skipped). When a table's first batch holds a truncate, the state
            # table is created empty first (Delta keeps no custom property given at creation).
            self.format.prepare(state)
            empty = no_rows(self.spark, state_schema)
            self.format.create_from(state, state_schema, empty, self.format.create_properties(), None)
            new_state = False
        rules = merges(spec)
        # A missing state table means an empty one: nothing stored to join with.
        stored = no_rows(self.spark, state_schema) if new_state else self.spark.table(state)
        kept: list[DataFrame] = []

        def once(frame: DataFrame) -> DataFrame:
            """Compute a merge source once for both writes. A plan that reads a stored table is checkpointed:
            its rows then no longer depend on the table the writes change (and Iceberg's MERGE cannot plan a
            source that references a catalog table through a temporary view)."""
            if new_state:
                kept.append(frame.persist())
                return frame
            return frame.localCheckpoint()

        try:
            history = scd2.history(changes, spec, stored, summary)
            history = attrs.evolve(history, versions=once(history.versions), stored=once(history.stored))
            if todo.target:
                create = target_schema if new_target else None
                self.write(target, history.target_source(), rules.target, create=create, batch=batch)
            self._record_floor(state, summary, floor)
            if todo.state:
                create, purged = state_schema if new_state else None, {PURGED_AT: now.isoformat()}
                self.write(state, history.state_source(), rules.state, create=create, properties=purged, batch=batch)
        finally:
            for frame in kept:
                frame.unpersist()
        return True

    def target_schema(self, changes: DataFrame, spec: ApplySpec) -> StructType:
        """The target's columns for a batch (SCD2 adds the version bounds)."""
        from pyspark.sql import types as T

        types = changes.schema
        target = T.StructType([types[c] for c in spec.target_columns])
        if spec.scd == 1:
            return target
        time_type = types[TIME].dataType
        return T.StructType([*target.fields, T.StructField(START_AT, time_type), T.StructField(END_AT, time_type)])

    def evolve(self, table: str, name: str, schema: StructType, info: TableInfo | None) -> bool:
        """Add the batch's new columns and widen the widened ones; True if the table does not exist yet."""
        if info is None:
            return True
        change = evolve(table, info.schema, schema)
        if change.added:
            self.spark.sql(add_columns(name, change.added))
        if change.widened:
            self.format.widen(table, name, change.widened)
        return False

    def write(
        self,
        name: str,
        source: DataFrame,
        rule: Merge,
        *,
        create: StructType | None,
        batch: BatchInfo | None,
        properties: dict[str, str] | None = None,
    ) -> None:
        """MERGE ``source`` into the table, or create it (``create``: its columns) with the rows it inserts."""
        if create is None:
            self.merge(name, source, rule.sql, batch)
            return
        self.format.prepare(name)
        wanted = {**self.format.create_properties(), **(properties or {})}
        with session_conf(self.spark, {CONSTRAINT_PROPAGATION: "false"}):
            self.format.create_from(name, create, _inserted_rows(rule, source), wanted, batch)

    def insert(self, name: str, source: DataFrame, rule: Merge, batch: BatchInfo | None) -> None:
        """The rows ``rule`` inserts appended to the existing table ``name`` instead of MERGEd into it: for a source
        that matches no row of the table (the caller knows). In the table's stored columns and types (the source's
        are the same or narrower; a column the source lacks is null, as the MERGE leaves it)."""
        from pyspark.sql import functions as F

        info = self.format.describe(name, None)
        if info is None:
            raise StorageError(f"cannot append to {name}: the table does not exist")
        rows = _inserted_rows(rule, source)
        given = set(rows.columns)
        aligned = rows.select(
            *[
                (F.col(quote(f.name)) if f.name in given else F.lit(None)).cast(f.dataType).alias(f.name)
                for f in info.schema.fields
            ]
        )
        with session_conf(self.spark, {CONSTRAINT_PROPAGATION: "false"}):
            self.format.insert(name, aligned, batch)

    def rewrite(
        self,
        name: str,
        source: DataFrame,
        rule: Merge,
        batch: BatchInfo | None,
        *,
        one_task: bool = False,
        placed: Placement | None = None,
    ) -> bool:
        """``rule`` applied to the small table ``name`` by rewriting it whole (:meth:`TableFormat.rewrite`); False
        when the format cannot (the caller MERGEs)."""
        with session_conf(self.spark, {CONSTRAINT_PROPAGATION: "false"}):
            return self.format.rewrite(name, source, rule, batch, one_task=one_task, placed=placed)

    def merge(
        self, name: str, source: DataFrame, statement: Callable[[str, str], str], batch: BatchInfo | None
    ) -> None:
        """``statement`` (a MERGE of a source view into a table) run on ``source``, marked with ``batch``."""
        with (
            temporary_views(self.spark, source, prefix="cdc_merge") as (view,),
            self.format.marked(batch),
            session_conf(self.spark, {CONSTRAINT_PROPAGATION: "false"}),
        ):
            self.spark.sql(statement(name, view))

    def replace_partitions(
        self, name: str, rows: DataFrame, columns: Sequence[str], partition: str, batch: BatchInfo | None
    ) -> Mapping[str, frozenset[str]] | None:
        """Every partition (by ``partition``) of ``name`` that ``rows`` has rows of replaced by them, in one commit
        marked with ``batch``: the format's own (:meth:`TableFormat.replace_partitions`, whose written files are
        returned), else Spark's dynamic partition overwrite (None returned); ``columns``: the table's, in its
        order."""
        from pyspark.sql import functions as F

        ordered = rows.select(*[F.col(quote(c)) for c in columns])
        with session_conf(self.spark, {CONSTRAINT_PROPAGATION: "false"}):
            written = self.format.replace_partitions(name, ordered, partition, batch)
            if written is not None:
                return written
        selected = ", ".join(quote(c) for c in columns)
        dynamic = {"spark.sql.sources.partitionOverwriteMode": "dynamic", CONSTRAINT_PROPAGATION: "false"}
        with (
            temporary_views(self.spark, rows, prefix="cdc_overwrite") as (view,),
            self.format.marked(batch),
            session_conf(self.spark, dynamic),
        ):
            self.spark.sql(f"INSERT OVERWRITE {name} SELECT {selected} FROM {view}")
        return None

    def _record_floor(self, state: str, summary: BatchSummary, stored: str | None) -> None:
        if summary.floor is not None and summary.floor.text != stored:
            self.spark.sql(set_properties(state, {TRUNCATED_BEFORE: summary.floor.text}))


def _inserted_rows(rule: Merge, source: DataFrame) -> DataFrame:
    """The rows ``rule`` inserts into an empty table: its filter and columns, as a frame instead of a MERGE."""
    from pyspark.sql import functions as F

    aliased = source.alias("s")
    chosen = aliased.where(F.expr(rule.insert_when)) if rule.insert_when else aliased
    return chosen.select(*[F.col(quote(c)) for c in rule.insert])


def _history_schema(changes: DataFrame, spec: ApplySpec) -> StructType:
    """An SCD2 state table's columns for a batch."""
    types = changes.schema
    return scd2.state_schema(spec, types, sequence_type(changes, spec), types[TIME].dataType)


__all__ = ["BatchWrite", "CommitWatch", "PartitionReader", "TableFormat"]
