"""The embedded default sink: Delta tables written by delta-rs (the ``deltalake`` package), exactly once.

Every batch is one ``MERGE`` commit per table carrying the app transaction ``(app_id, batch_id)`` and the
batch's source offsets as commit metadata. Before writing, the sink reads the table's transaction version for
``app_id``: a batch at or below it was committed already, so a replay after a crash writes nothing.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.errors import ConfigError, StorageError
from cdc_spark.apply import (
    CHANGED_PREFIX,
    DELETED,
    DROP,
    END_AT,
    END_SEQUENCE,
    SEQUENCE,
    START_SEQUENCE,
    UPDATED_AT,
    MergePlan,
    SchemaEvolutionError,
    live_filter,
)
from cdc_spark.sinks import BatchInfo

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame, SparkSession

TRUNCATE_PROPERTY: Final = "cdc.truncatedBefore"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def is_widening(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether values of ``old`` fit ``new`` exactly (the only type changes applied without a stop)."""
    import pyarrow as pa

    ints = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]
    if old in ints and new in ints:
        return ints.index(new) >= ints.index(old)
    if old in ints and pa.types.is_decimal(new):
        digits = {pa.int8(): 3, pa.int16(): 5, pa.int32(): 10, pa.int64(): 19}[old]
        return bool(new.precision - new.scale >= digits)
    if old == pa.float32() and new == pa.float64():
        return True
    if pa.types.is_decimal(old) and pa.types.is_decimal(new):
        return bool(new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale)
    if pa.types.is_date32(old) and pa.types.is_timestamp(new) and new.tz is None:
        return True
    return bool(old == new)


def _storable(table: pa.Table) -> pa.Table:
    """Arrow columns Delta cannot hold converted: durations (MySQL TIME) become microseconds as int64."""
    import pyarrow as pa

    for index, field in enumerate(table.schema):
        if pa.types.is_duration(field.type):
            micros = table.column(index).cast(pa.duration("us")).cast(pa.int64())
            table = table.set_column(index, pa.field(field.name, pa.int64(), field.nullable), micros)
    return table


@attrs.define
class DeltaSink:
    """Delta tables under ``root`` as ``root/<database>/<table>`` (or one fixed ``path`` for every table)."""

    root: str | None = None
    path: str | None = None
    storage_options: dict[str, str] | None = None
    clock: Any = attrs.field(default=None)  # () -> datetime; tests pin tombstone ages with it

    @classmethod
    def for_path(cls, path: str, storage_options: dict[str, str] | None = None) -> DeltaSink:
        return cls(path=path, storage_options=storage_options)

    def table_path(self, table: str) -> str:
        if self.path is not None:
            return self.path
        if self.root is None:
            raise ConfigError("DeltaSink needs a root directory or a table path")
        database, _, name = table.partition(".")
        return os.path.join(self.root, database, name) if name else os.path.join(self.root, database)

    def _open(self, table: str) -> DeltaTable | None:
        from deltalake import DeltaTable

        uri = self.table_path(table)
        if not DeltaTable.is_deltatable(uri, storage_options=self.storage_options):
            return None
        return DeltaTable(uri, storage_options=self.storage_options)

    def _now(self) -> dt.datetime:
        now = self.clock() if self.clock is not None else dt.datetime.now(dt.UTC)
        return now if isinstance(now, dt.datetime) else dt.datetime.now(dt.UTC)

    def committed(self, table: str, batch: BatchInfo) -> bool:
        target = self._open(table)
        if target is None:
            return False
        version = target.transaction_version(batch.app_id)
        return version is not None and version >= batch.batch_id

    def read_target(self, spark: SparkSession, table: str) -> DataFrame | None:
        target = self._open(table)
        if target is None:
            return None
        stored: DataFrame = spark.createDataFrame(target.to_pyarrow_table())
        return stored

    def live(self, spark: SparkSession, table: str) -> DataFrame:
        import pyarrow as pa

        target = self._open(table)
        if target is None:
            raise StorageError(f"no Delta table for {table} at {self.table_path(table)}")
        scd = 2 if START_SEQUENCE in pa.schema(target.schema()).names else 1
        return live_filter(scd)(spark.createDataFrame(target.to_pyarrow_table()))

    def live_arrow(self, table: str) -> pa.Table:
        """The user-visible rows without Spark: tombstones and bookkeeping columns removed."""
        import pyarrow.compute as pc

        target = self._open(table)
        if target is None:
            raise StorageError(f"no Delta table for {table} at {self.table_path(table)}")
        rows = target.to_pyarrow_table()
        if DELETED in rows.column_names:
            rows = rows.filter(pc.invert(rows.column(DELETED)))
        return rows.select([n for n in rows.column_names if not n.startswith("__cdc_")])

    def write(self, plan: MergePlan, batch: BatchInfo | None) -> bool:
        """Merge one batch into its table; False when ``batch`` was committed before (nothing written)."""
        from deltalake import CommitProperties, Transaction

        spec = plan.spec
        if batch is not None and self.committed(spec.table, batch):
            return False
        now = self._now()
        source = _storable(plan.source.toArrow())
        target = self._ensure_table(spec.table, source, spec.scd, now)
        target = self._evolve(spec.table, target, source)
        metadata: dict[str, Any] = {"cdc.table": spec.table}
        transactions = None
        if batch is not None:
            metadata.update({"cdc.appId": batch.app_id, "cdc.batchId": str(batch.batch_id)})
            if batch.offsets is not None:
                metadata["cdc.offsets"] = batch.offsets
            transactions = [Transaction(app_id=batch.app_id, version=batch.batch_id)]
        if plan.truncate_sequence is not None:
            self._truncate(target, plan, now)
        floor = target.metadata().configuration.get(TRUNCATE_PROPERTY)
        if floor is not None:
            source = _after(source, SEQUENCE if spec.scd == 1 else START_SEQUENCE, floor)
        properties = CommitProperties(custom_metadata=metadata, app_transactions=transactions)
        try:
            if spec.scd == 1:
                self._merge_scd1(target, source, plan, now, properties)
                self._purge_tombstones(target, plan, now)
            else:
                self._merge_scd2(target, source, plan, properties)
        except Exception as exc:  # delta-rs raises its own and pyarrow errors; name the table
            raise StorageError(f"Delta MERGE into {spec.table} at {self.table_path(spec.table)} failed: {exc}") from exc
        return True

    def _ensure_table(self, table: str, source: pa.Table, scd: int, now: dt.datetime) -> DeltaTable:
        import pyarrow as pa
        from deltalake import DeltaTable, write_deltalake

        existing = self._open(table)
        if existing is not None:
            return existing
        fields = [f for f in source.schema if not f.name.startswith(CHANGED_PREFIX) and f.name != DROP]
        if scd == 1:
            fields.append(pa.field(UPDATED_AT, pa.timestamp("us", tz="UTC")))
        empty = pa.schema(fields).empty_table()
        write_deltalake(
            self.table_path(table),
            empty,
            mode="ignore",
            storage_options=self.storage_options,
        )
        return DeltaTable(self.table_path(table), storage_options=self.storage_options)

    def _evolve(self, table: str, target: DeltaTable, source: pa.Table) -> DeltaTable:
        """Widen stored column types the batch widened (rewrites the table); stop on incompatible changes."""
        import pyarrow as pa
        from deltalake import DeltaTable, write_deltalake
        from deltalake.schema import Field

        stored = pa.schema(target.schema())
        added = [f for f in source.schema if f.name not in stored.names and not f.name.startswith(CHANGED_PREFIX)]
        added = [f for f in added if f.name != DROP]
        if added:
            target.alter.add_columns([Field.from_arrow(f.with_nullable(True)) for f in added])
        widened: dict[str, pa.DataType] = {}
        for field in source.schema:
            if field.name not in stored.names or field.name.startswith("__cdc_"):
                continue
            old = stored.field(field.name).type
            if old == field.type or is_widening(field.type, old):
                continue  # same, or the batch is narrower: cast up on write
            if not is_widening(old, field.type):
                raise SchemaEvolutionError(table, field.name, str(old), str(field.type))
            widened[field.name] = field.type
        if not widened:
            return target
        rows = target.to_pyarrow_table()
        schema = pa.schema([pa.field(f.name, widened.get(f.name, f.type), f.nullable) for f in rows.schema])
        write_deltalake(
            self.table_path(table),
            rows.cast(schema),
            mode="overwrite",
            schema_mode="overwrite",
            storage_options=self.storage_options,
        )
        return DeltaTable(self.table_path(table), storage_options=self.storage_options)

    def _truncate(self, target: DeltaTable, plan: MergePlan, now: dt.datetime) -> None:
        floor = plan.truncate_sequence
        assert floor is not None
        if plan.spec.scd == 1:
            target.update(
                updates={DELETED: "true", SEQUENCE: _literal(floor), UPDATED_AT: _timestamp(now)},
                predicate=f"{_quote(SEQUENCE)} < {_literal(floor)} AND NOT {_quote(DELETED)}",
            )
        else:
            end_at = "NULL" if plan.truncate_time is None else str(plan.truncate_time)
            target.update(
                updates={END_SEQUENCE: _literal(floor), END_AT: end_at},
                predicate=f"{_quote(END_SEQUENCE)} IS NULL AND {_quote(START_SEQUENCE)} < {_literal(floor)}",
            )
        current = target.metadata().configuration.get(TRUNCATE_PROPERTY)
        if current is None or current < floor:
            target.alter.set_table_properties({TRUNCATE_PROPERTY: floor}, raise_if_not_exists=False)

    def _merge_scd1(
        self, target: DeltaTable, source: pa.Table, plan: MergePlan, now: dt.datetime, properties: Any
    ) -> None:
        import pyarrow as pa

        spec = plan.spec
        stamp = pa.array([now] * source.num_rows, pa.timestamp("us", tz="UTC"))
        source = source.append_column(UPDATED_AT, stamp)
        predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in spec.keys)
        updates = {_quote(k): f"s.{_quote(k)}" for k in spec.keys}
        for column in spec.value_columns:
            set_at = f"s.{_quote(CHANGED_PREFIX + column)}"
            newer = f"{set_at} > t.{_quote(SEQUENCE)}"  # null (not set in the batch) keeps the stored value
            updates[_quote(column)] = f"CASE WHEN {newer} THEN s.{_quote(column)} ELSE t.{_quote(column)} END"
        for column in (SEQUENCE, DELETED, UPDATED_AT):
            updates[_quote(column)] = f"s.{_quote(column)}"
        inserts = {_quote(c): f"s.{_quote(c)}" for c in (*spec.columns, SEQUENCE, DELETED, UPDATED_AT)}
        (
            target.merge(
                source,
                predicate=predicate,
                source_alias="s",
                target_alias="t",
                merge_schema=False,
                commit_properties=properties,
            )
            .when_matched_update(updates=updates, predicate=f"s.{_quote(SEQUENCE)} > t.{_quote(SEQUENCE)}")
            .when_not_matched_insert(updates=inserts)
            .execute()
        )

    def _merge_scd2(self, target: DeltaTable, source: pa.Table, plan: MergePlan, properties: Any) -> None:
        spec = plan.spec
        keys = [*spec.keys, START_SEQUENCE]
        predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        written = [c for c in source.column_names if c != DROP]
        values = {_quote(c): f"s.{_quote(c)}" for c in written}
        (
            target.merge(
                source,
                predicate=predicate,
                source_alias="s",
                target_alias="t",
                merge_schema=False,
                commit_properties=properties,
            )
            .when_matched_delete(predicate=f"s.{_quote(DROP)}")
            .when_matched_update(updates=values)
            .when_not_matched_insert(updates=values, predicate=f"NOT s.{_quote(DROP)}")
            .execute()
        )

    def _purge_tombstones(self, target: DeltaTable, plan: MergePlan, now: dt.datetime) -> None:
        retention = plan.spec.tombstone_retention
        if retention is None:
            return
        cutoff = _timestamp(now - retention)
        target.delete(f"{_quote(DELETED)} AND {_quote(UPDATED_AT)} < {cutoff}")


def _timestamp(moment: dt.datetime) -> str:
    text = moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return f"arrow_cast('{text}', 'Timestamp(Microsecond, Some(\"UTC\"))')"


def _after(source: pa.Table, column: str, floor: str) -> pa.Table:
    import pyarrow.compute as pc

    return source.filter(pc.greater(source.column(column), floor))


__all__ = ["END_AT", "BatchInfo", "DeltaSink", "is_widening"]
