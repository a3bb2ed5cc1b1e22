"""A micro-batch's SCD1 tables written together: every target first, then the sink's key state once.

Per batch (:meth:`Scd1Batch.run`):

1. the key state's metadata (no Spark job): when it holds the batch, every target does too (it is written last)
   and nothing runs; otherwise each target's own mark says whether it holds the batch already;
2. one aggregate over every table's changes and their stored truncate floors (:func:`summarize_all`); the key
   state is read for floors only where its ``cdc.floor-tables`` property names one of the batch's tables (a table
   is named there, in a commit of its own, before its first floor row is written);
3. per table, ``parallelism`` tables at once, each in a session of its own: add or widen the target's columns,
   resolve the batch against its keys' state (checkpointed: computed once), MERGE it into the target marked with
   the batch (or create the target with its rows; or append them when the batch only adds rows the target does
   not hold, :func:`only_new_rows`);
4. one write of every table's new key state rows, and of the floors a truncate moved, into the key state, marked
   with the batch: each table's partition replaced whole when it is small or the batch changes a good part of it
   (:meth:`Scd1Batch.replaces`: the resolve then gives every key of the table, unchanged ones as they are; on Delta
   in a transaction of the sink's own, :mod:`cdc_spark.sinks.delta_overwrite`), else a MERGE;
5. tombstones older than the retention deleted, at most ten times per retention period.

A large table's partition replaced whole leaves its resolve's checkpoint kept for the next batch, which joins it in
place of the partition's files while they are the ones this write left (:mod:`cdc_spark.sinks.kept_states`).

Each step runs with Spark's expressions interpreted when it reads few rows (the batch's messages, a table's
stored keys and changes, all of them for the key state's write) and compiled otherwise
(:mod:`cdc_spark.expression_mode`).

A table therefore costs one commit per batch; the key state one per batch, whatever the number of tables. A crash
between 3 and 4 leaves targets holding the batch and a key state without it: the replay resolves the same batch
against the same, unchanged key state, skips the targets that hold the batch and writes the others and the state.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from cdc_spark.batch_cache import checkpoint_by_key, release
from cdc_spark.expression_mode import expressions_for
from cdc_spark.local_frames import no_rows
from cdc_spark.merge import scd1
from cdc_spark.merge.analyzed_plans import AnalyzedPlans
from cdc_spark.merge.batch import BatchSummary, Pending, ordered, sequence_type, summarize_all
from cdc_spark.merge.columns import ACTION, FLOOR_KEY, FLOOR_TABLES, KEY, PURGED_AT, TABLE, WAS_LIVE
from cdc_spark.merge.jvm_fold import partitions_for
from cdc_spark.merge.statements import key_state_merge, merges, purge_tombstones, set_properties
from cdc_spark.session_conf import CONSTRAINT_PROPAGATION, session_conf, union_all
from cdc_spark.sinks.commits import TableInfo, batch_committed, purge_due
from cdc_spark.sinks.kept_states import KeptState, Placement, kept_states
from cdc_spark.sinks.one_task import in_one_task, one_partition, planned_as_one_task
from cdc_spark.sinks.state_migration import move_old_states
from cdc_spark.table_workers import bound_to, own_session, run_each

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import DataType

    from cdc_spark.merge.spec import ApplySpec
    from cdc_spark.sinks import BatchInfo, MergePlan
    from cdc_spark.sinks.batch_write import BatchWrite, CommitWatch, PartitionReader, TableFormat

# A key state partition is replaced whole (no MERGE) up to this many rows, or up to REPLACE_FACTOR times the batch's
# changes of its table: a MERGE reads the partition twice (the files to rewrite, then their rows), and random keys
# touch nearly every file of it once the batch has a few changes per file.
REPLACE_ROWS: Final = 100_000
REPLACE_FACTOR: Final = 4

# The sequence type of decode's change frames: its key state has the plain name, any other type one of its own.
DECODE_SEQUENCE: Final = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"


def key_state_suffix(seq_type: DataType) -> str:
    """The key state of sequences of ``seq_type``: ``""`` for decode's, else a suffix naming the type."""
    text = seq_type.simpleString()
    return "" if text == DECODE_SEQUENCE else f"_{zlib.crc32(text.encode()):08x}"


def only_new_rows(summary: BatchSummary, resolved: DataFrame) -> bool:
    """Whether a table's batch only adds rows its target does not hold: inserts alone (no update, delete or
    truncate), none of them of a key whose row is live (one look at the checkpointed resolve). Such a batch is
    appended: a MERGE would read the target for matches there are none of (on Delta, 10 tables of 1,000 new rows:
    2.10 s a table appended against 2.44 s MERGEd, ``benchmarks/bench_spark_apply_tables.py``)."""
    if summary.truncate is not None or any(count for op, count in summary.ops.items() if op != "insert"):
        return False
    return resolved.where(f"{ACTION} = 'delete' OR ({ACTION} = 'upsert' AND {WAS_LIVE})").isEmpty()


@attrs.frozen
class TableDone:
    """What one table's part of a batch left for the key state write."""

    rows: DataFrame  # the table's new key state rows (of its checkpointed resolved batch)
    resolved: DataFrame  # that checkpoint, released once the key state is written
    kept: KeptState | None = None  # those rows cached for the next batch (its files known once written)


@attrs.define
class Scd1Batch:
    """The SCD1 tables of one batch (see the module doc); ``writer`` makes a table's writer for a session."""

    format: TableFormat
    writer: Callable[[SparkSession], BatchWrite]
    clock: Callable[[], dt.datetime]
    parallelism: int = 1
    replace_rows: int = REPLACE_ROWS  # see REPLACE_ROWS (0 and a factor of 0: always a MERGE)
    replace_factor: int = REPLACE_FACTOR
    commits: CommitWatch | None = None  # told of each commit (fault tests kill the job there)
    # tables whose state from an earlier version has been looked for (cdc_spark.sinks.state_migration)
    checked: set[str] = attrs.field(factory=set)

    @property
    def spark(self) -> SparkSession:
        return self.format.spark

    def run(self, plans: Sequence[MergePlan], batch: BatchInfo | None) -> dict[str, bool]:
        """Apply every plan; per table, False when the batch had been applied before (a replay)."""
        groups: dict[str, list[MergePlan]] = {}
        for plan in plans:
            groups.setdefault(key_state_suffix(sequence_type(plan.changes, plan.spec)), []).append(plan)
        written: dict[str, bool] = {}
        for suffix, group in groups.items():
            written.update(self._group(group, batch, self.format.key_state(suffix)))
        return written

    def _group(self, plans: list[MergePlan], batch: BatchInfo | None, state: str) -> dict[str, bool]:
        app = batch.app_id if batch is not None else None
        state_info = self.format.describe(state, app)
        if batch_committed(state_info, batch):
            return {plan.spec.table: False for plan in plans}
        tables = [plan.spec.table for plan in plans]
        seq_type = sequence_type(plans[0].changes, plans[0].spec)
        now = self.clock()
        with expressions_for(self.spark, None):  # these may read the whole key state
            if state_info is None:
                self._create(state, seq_type, now)
            with_floors = self._floor_tables(state, state_info)
            listing = functools.partial(self._list_floors, state, with_floors)
            unchecked = [plan.spec for plan in plans if plan.spec.table not in self.checked]
            moved = False
            if unchecked:
                moved = bool(move_old_states(self.writer(self.spark), unchecked, state, seq_type, listing))
                self.checked.update(spec.table for spec in unchecked)
        stored = self.spark.table(state)
        floored = [table for table in tables if table in with_floors]  # none: the key state is not read for floors
        floors = scd1.floors(stored, floored) if floored else None
        summaries = summarize_all([Pending(plan.changes, plan.spec) for plan in plans], floors)
        for plan in plans:
            plan.summary = summaries[plan.spec.table]
        parallel = self.parallelism > 1 and len(plans) > 1
        changed = [plan for plan in plans if plan.summary is not None and plan.summary.changes]
        counted = self.stored_rows(state, state_info, changed)
        whole = self.replaces(counted, changed)
        # each table's keys read from the version the batch described, unless a move wrote a newer one
        read_from = self.format.describe(state, None) if moved else state_info
        written = [plan.spec.table for plan in changed]  # as stored_rows lists them: one listing for both
        reader = self.format.partition_reader(state, TABLE, written, read_from) if read_from and written else None
        # the files each table's partition is now, where the batch before kept rows of one (a format that plans its
        # listing, as Iceberg does, lists nothing otherwise): where it left them, its rows kept are read instead
        entries = kept_states(self.spark.sparkContext).entries
        kept_before = any((state, table) in entries for table in written)
        files = self.format.partition_files(state, TABLE, written, read_from) if read_from and kept_before else None
        # the resolve of a table of the same shape as one before it in the batch is not analyzed again
        resolves = AnalyzedPlans()
        table = functools.partial(
            self._table,
            stored=stored,
            reader=reader,
            batch=batch,
            now=now,
            resolves=resolves,
            parallel=parallel,
            whole=whole,
            state=state,
            files=files or {},
        )
        # a table small by the key state's rule is rewritten whole where its format can (no MERGE), the others MERGEd
        tasks = [
            (
                plan.spec.table,
                functools.partial(table, plan, rows=_rows_read(counted, [plan]), small=self.replaces(counted, [plan])),
            )
            for plan in changed
        ]
        done = run_each(tasks, self.parallelism)
        floors_of = functools.partial(_floors_kept, stored, with_floors) if whole else None
        registry = kept_states(self.spark.sparkContext)
        kept = {name: part.kept for name, part in done.items() if part.kept is not None}
        written_files: Mapping[str, frozenset[str]] | None = None
        try:
            with expressions_for(self.spark, _rows_read(counted, changed)):
                written_files = self._write_state(
                    state, plans, done, seq_type, batch, listing=listing, floors_of=floors_of
                )
        finally:
            for name, held in kept.items():  # kept for the next batch where this one's files are known
                files_now = written_files.get(name) if written_files is not None else None
                if files_now is not None:
                    registry.put(state, name, attrs.evolve(held, files=files_now))
                else:
                    held.free()
            # the other checkpoints' blocks freed now, not when the JVM collects them: at 10^6 keys the driver's heap
            # in local mode grew by about 280 MiB a batch until a collection
            for name, part in done.items():
                if name not in kept:
                    release(part.resolved)
        with expressions_for(self.spark, None):  # over the whole key state
            self._purge(state, plans, state_info, now)
        return {table: table in done for table in tables}

    def stored_rows(self, state: str, info: TableInfo | None, plans: Sequence[MergePlan]) -> dict[str, int] | None:
        """The rows each of ``plans``' tables holds in the key state, counted from its metadata: they choose between
        replacing and MERGEing (:meth:`replaces`) and between interpreted and compiled expressions
        (:mod:`cdc_spark.expression_mode`). None when not counted: no table changed, limits of 0 (always a MERGE),
        or a format that cannot count. Counted in the version ``info`` describes: a migration's commit since then
        (:mod:`cdc_spark.sinks.state_migration`) moves only these choices, as every write reads the key state anew."""
        if not plans or (self.replace_rows <= 0 and self.replace_factor <= 0):
            return None
        if info is None:
            return {}  # created empty by this batch
        return self.format.rows_by_partition(state, TABLE, [plan.spec.table for plan in plans], info)

    def replaces(self, rows: Mapping[str, int] | None, plans: Sequence[MergePlan]) -> bool:
        """Whether the batch replaces its tables' key state partitions whole instead of MERGEing into them: when each
        holds (``rows``, from :meth:`stored_rows`) at most :attr:`replace_rows` rows or :attr:`replace_factor` times
        its table's changes (one write, a commit, for every table: all of them or none)."""
        if rows is None or not plans:
            return False
        for plan in plans:
            assert plan.summary is not None
            if rows.get(plan.spec.table, 0) > max(self.replace_rows, self.replace_factor * plan.summary.changes):
                return False
        return True

    def _table(
        self,
        plan: MergePlan,
        stored: DataFrame,
        reader: PartitionReader | None,
        batch: BatchInfo | None,
        now: dt.datetime,
        *,
        resolves: AnalyzedPlans,
        parallel: bool,
        whole: bool,
        rows: int | None,
        small: bool,
        state: str,
        files: Mapping[str, frozenset[str]],
    ) -> TableDone:
        """Resolve one table's batch and write its target, with the expressions its ``rows`` (stored keys and
        changes; None: not known) call for, rewritten whole where ``small`` and its format can; its key state rows
        (``whole``: every key's) are left for the batch's write. Its stored keys are its partition of the key state
        read by ``reader`` where the format gives one, else ``stored`` filtered."""
        session = own_session(self.spark) if parallel else plan.changes.sparkSession
        own = reader(session, plan.spec.table) if reader is not None else bound_to(stored, session)
        one = in_one_task(rows)
        with expressions_for(session, rows), planned_as_one_task(session, one):
            return self._resolve_and_write(
                session,
                plan,
                own,
                batch,
                now,
                resolves=resolves,
                whole=whole,
                small=small,
                rows=rows,
                kept_as=(state, files.get(plan.spec.table)),
            )

    def _resolve_and_write(
        self,
        session: SparkSession,
        plan: MergePlan,
        stored: DataFrame,
        batch: BatchInfo | None,
        now: dt.datetime,
        *,
        resolves: AnalyzedPlans,
        whole: bool,
        small: bool,
        rows: int | None,
        kept_as: tuple[str, frozenset[str] | None],
    ) -> TableDone:
        from pyspark.sql import functions as F

        write = self.writer(session)
        spec, summary = plan.spec, plan.summary
        assert summary is not None
        one = in_one_task(rows)
        # few rows: read by one task, so that neither the resolve nor the rewrite shuffles (cdc_spark.sinks.one_task)
        changes = one_partition(ordered(bound_to(plan.changes, session), spec, summary), one)
        app = batch.app_id if batch is not None else None
        target = write.format.target(spec.table)
        target_info = write.format.describe(target, app)
        schema = write.target_schema(changes, spec)
        new_target = write.evolve(spec.table, target, schema, target_info)
        stored_keys = one_partition(scd1.table_state(stored, spec.table), one)
        # a large table's partition replaced whole (its rows counted): the rows the batch before kept of it are read,
        # its new ones kept
        keeps = rows if whole and not one else None
        resolved, partitions = self._resolved(
            changes, spec, stored_keys=stored_keys, summary=summary, now=now, resolves=resolves, whole=whole,
            rows=rows, one=one, kept_as=(kept_as[0], kept_as[1] if keeps is not None else None),
        )  # fmt: skip
        # placed by the key: a rewrite of the target keeps the rows it writes for the next batch's
        placed = Placement(tuple(spec.keys), partitions, keeps) if keeps is not None else None
        if not batch_committed(target_info, batch):
            source = resolved.where(F.col(ACTION).isNotNull())
            rule = merges(spec).target
            if self.commits is not None:
                self.commits.before(spec.table)
            if new_target:
                write.write(target, source, rule, create=schema, batch=batch)
            elif only_new_rows(summary, resolved):
                write.insert(target, source, rule, batch)
            elif not (small and write.rewrite(target, source, rule, batch, one_task=one, placed=placed)):
                write.write(target, source, rule, create=None, batch=batch)
            if self.commits is not None:
                self.commits.after(spec.table)
        kept = None
        if keeps is not None:  # the checkpoint kept for the next batch once the key state is written
            frame = scd1.kept_rows(resolved, spec.table, spec)
            kept = KeptState(frozenset(), _key_types(changes, spec), partitions, keeps, frame, resolved)
        return TableDone(rows=scd1.state_rows(resolved, spec.table), resolved=resolved, kept=kept)

    def _resolved(
        self,
        changes: DataFrame,
        spec: ApplySpec,
        *,
        stored_keys: DataFrame,
        summary: BatchSummary,
        now: dt.datetime,
        resolves: AnalyzedPlans,
        whole: bool,
        rows: int | None,
        one: bool,
        kept_as: tuple[str, frozenset[str] | None],
    ) -> tuple[DataFrame, int]:
        """The table's batch resolved against its stored keys and checkpointed (computed once for the target's MERGE
        and the key state's write), with the partitions it is placed in. The rows the batch before kept of the
        table's key state (:mod:`cdc_spark.sinks.kept_states`) are joined in place of ``stored_keys`` where
        ``kept_as`` (the key state, the partition's files now; None: not to be read) shows they are still the
        partition's; should reading them fail (an executor that held them lost), the partition's files are read."""
        session = changes.sparkSession

        def checkpoint(stored: DataFrame, partitions: int) -> DataFrame:
            # checkpointed: computed once for the target's MERGE and the key state's (whose own table it reads), as
            # Delta's MERGE refuses a source cached while it runs; planned without constraint propagation, as the
            # MERGEs are; many keys folded by a walk over the changes sorted by key (cdc_spark.merge.jvm_fold)
            with session_conf(session, {CONSTRAINT_PROPAGATION: "false"}):
                resolving = scd1.resolve(
                    changes, spec, stored, summary, now, every_key=whole, plans=resolves, fold_by_walk=not one,
                    rows=rows, partitions=partitions,
                )  # fmt: skip
                if one:
                    return resolving.localCheckpoint()
                # kept saying it is placed by the key, into the partitions the walk's shuffle chose: the target's
                # rewrite or MERGE, a join by the key, then shuffles the target's rows alone
                return checkpoint_by_key(resolving, spec.keys, partitions)

        partitions = partitions_for(session, rows)
        registry = kept_states(session.sparkContext)
        before = registry.take(kept_as[0], spec.table, kept_as[1], _key_types(changes, spec), partitions)
        if before is not None:
            partitions = before.partitions
            try:
                return checkpoint(bound_to(before.frame, session), partitions), partitions
            except Exception:  # whatever lost them (an executor), the files hold the same rows
                pass
            finally:
                before.free()  # read into the new checkpoint, or not to be read again
        return checkpoint(stored_keys, partitions), partitions

    def _write_state(
        self,
        state: str,
        plans: list[MergePlan],
        done: dict[str, TableDone],
        seq_type: DataType,
        batch: BatchInfo | None,
        *,
        listing: Callable[[Iterable[str]], None],
        floors_of: Callable[[list[str]], DataFrame | None] | None,
    ) -> Mapping[str, frozenset[str]] | None:
        """Every table's new key state rows, and the floors truncates moved, in one write: a MERGE, or with
        ``floors_of`` (the stored floors of tables) a replace of their partitions by every key of their tables, their
        floors kept. A table's first floor is named in the key state's :data:`FLOOR_TABLES` first (``listing``). The
        files a replace wrote, by table, where the format says; else None."""
        frames = [bound_to(part.rows, self.spark) for part in done.values()]
        floored: set[str] = set()
        for plan in plans:
            summary = plan.summary
            if summary is not None and summary.truncate is not None and summary.floor is not None:
                frames.append(scd1.floor_row(self.spark, plan.spec.table, summary.floor, seq_type))
                floored.add(plan.spec.table)
        if not frames:
            return None
        listing(floored)
        kept = floors_of([table for table in done if table not in floored]) if floors_of is not None else None
        if kept is not None:
            frames.append(kept)
        rows = union_all(frames, prefix="cdc_key_state")
        if self.commits is not None:
            self.commits.before(state)
        written = None
        if floors_of is not None:
            columns = scd1.state_schema(seq_type).names
            written = self.writer(self.spark).replace_partitions(state, rows, columns, TABLE, batch)
        else:
            self.writer(self.spark).merge(state, rows, key_state_merge(sorted(done)).sql, batch)
        if self.commits is not None:
            self.commits.after(state)
        return written

    def _list_floors(self, state: str, listed: set[str], tables: Iterable[str]) -> None:
        """Name ``tables`` in the key state's :data:`FLOOR_TABLES` (``listed``: what it holds) before their floor rows
        are written: a commit of its own where one is new, so the list never misses a table whose floor row is
        stored, whatever stops the job between the two."""
        new = set(tables) - listed
        if new:
            # what another job sharing the key state named since this batch read it is kept (read again just before)
            listed.update(new, _named_floor_tables(self.format.describe(state, None)) or ())
            self.spark.sql(set_properties(state, {FLOOR_TABLES: json.dumps(sorted(listed))}))

    def _floor_tables(self, state: str, info: TableInfo | None) -> set[str]:
        """The tables that may have a truncate floor in the key state: from its :data:`FLOOR_TABLES`; a key state
        without that property (new, or written by an earlier version) is read for them once and given it."""
        from pyspark.sql import functions as F

        listed = _named_floor_tables(info)
        if listed is not None:
            return listed
        if info is None:
            found: list[str] = []  # created by this batch: empty
        else:
            rows = self.spark.table(state).where(F.col(KEY) == FLOOR_KEY).select(TABLE).distinct().collect()
            found = sorted(str(row[TABLE]) for row in rows)
        self.spark.sql(set_properties(state, {FLOOR_TABLES: json.dumps(found)}))
        return set(found)

    def _create(self, state: str, seq_type: DataType, now: dt.datetime) -> None:
        """An empty key state, partitioned by table (a batch reads and rewrites only its tables' files)."""
        schema = scd1.state_schema(seq_type)
        self.format.prepare(state)
        empty = no_rows(self.spark, schema)
        properties = {
            **self.format.create_properties(),
            **self.format.key_state_properties(),
            PURGED_AT: now.isoformat(),
        }
        self.format.create_from(state, schema, empty, properties, None, partitioned_by=(TABLE,))

    def _purge(self, state: str, plans: list[MergePlan], info: TableInfo | None, now: dt.datetime) -> None:
        """Delete tombstones older than the longest retention the batch's tables ask for, at most ten times per
        retention period (tables that keep tombstones for ever keep every one)."""
        retentions = [plan.spec.tombstone_retention for plan in plans]
        if not retentions or any(r is None for r in retentions):
            return
        retention = max(r for r in retentions if r is not None)
        if not purge_due(retention, info, now):
            return
        self.spark.sql(purge_tombstones(state, now - retention))
        self.spark.sql(set_properties(state, {PURGED_AT: now.isoformat()}))


def _floors_kept(stored: DataFrame, with_floors: set[str], tables: list[str]) -> DataFrame | None:
    """The stored floor rows of ``tables`` (those :data:`FLOOR_TABLES` names), read now (checkpointed): a partition
    replaced whole keeps its floor unless the batch moved it."""
    from pyspark.sql import functions as F

    named = sorted(set(tables) & with_floors)
    if not named:
        return None
    return stored.where((F.col(KEY) == FLOOR_KEY) & F.col(TABLE).isin(*named)).localCheckpoint()


def _key_types(changes: DataFrame, spec: ApplySpec) -> tuple[str, ...]:
    """The types of the key columns of ``changes``, as kept rows name them."""
    return tuple(changes.schema[key].dataType.simpleString() for key in spec.keys)


def _rows_read(counted: Mapping[str, int] | None, plans: Sequence[MergePlan]) -> int | None:
    """The rows writing ``plans`` reads: their tables' stored keys and their changes (None: not counted)."""
    if counted is None:
        return None
    return sum(counted.get(plan.spec.table, 0) + (plan.summary.changes if plan.summary else 0) for plan in plans)


def _named_floor_tables(info: TableInfo | None) -> set[str] | None:
    """The tables the key state's :data:`FLOOR_TABLES` names; None without the property (or the key state)."""
    listed = info.properties.get(FLOOR_TABLES) if info is not None else None
    return None if listed is None else set(json.loads(listed))


__all__ = [
    "DECODE_SEQUENCE",
    "REPLACE_FACTOR",
    "REPLACE_ROWS",
    "Scd1Batch",
    "TableDone",
    "key_state_suffix",
    "only_new_rows",
]
