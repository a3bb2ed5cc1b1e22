"""A decoded batch as the targets it writes: routed, filtered, under the run's DDL policy.

The job calls :func:`batch_tables` between decode and apply. Source tables the run does not apply are never
read from the decoded batch (their frames stay unevaluated); the tables routed to one target are one frame
(a union by column name), so the target is written once per batch; the DDL policy (:mod:`cdc_spark.ddl_policy`)
then empties targets of dropped tables, drops truncates or stops, and conforms each frame to its stored target.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from cdc_core.errors import StorageError
from cdc_spark.ddl_policy import (
    TableDdl,
    column_changes,
    conform,
    format_widens,
    plan_table_ddl,
    truncate_frame,
)
from cdc_spark.merge.batch import storable
from cdc_spark.merge.spec import data_columns
from cdc_spark.routing import Routing, TableSettings, target_keys

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from cdc_core.schema import TableSchema
    from cdc_spark.decoding import DecodedChanges
    from cdc_spark.sinks import Sink


KEYS_FILE: Final = "target-keys.json"


class TablesConfig(Protocol):
    """What a batch's tables are built with: the job's configuration (:class:`cdc_spark.job.JobConfig`) as far as
    this module reads it."""

    @property
    def keys(self) -> Mapping[str, tuple[str, ...]]: ...

    @property
    def scd(self) -> int: ...

    @property
    def track_columns(self) -> tuple[str, ...] | None: ...

    @property
    def routing(self) -> Routing: ...

    @property
    def ddl(self) -> str: ...

    @property
    def table_format(self) -> str: ...

    @property
    def metadata_columns(self) -> tuple[str, ...]: ...


@attrs.frozen(kw_only=True)
class BatchTables:
    frames: dict[str, DataFrame]  # target -> its changes of the batch
    notes: tuple[str, ...] = ()  # what the DDL policy did


def table_settings(
    config: TablesConfig,
    target: str,
    sources: Sequence[tuple[str, str]],
    schemas: Mapping[tuple[str, str], Any],
    remembered: tuple[str, ...] | None = None,
) -> TableSettings:
    """The settings a target is applied with, its keys resolved (:func:`cdc_spark.routing.target_keys`);
    ``remembered``: the keys it was applied with before, for a target none of whose sources' schemas this run
    has seen (a DROP TABLE after a restart)."""
    defaults = TableSettings(
        keys=config.keys.get(target) or config.keys.get("*"), scd=config.scd, track_columns=config.track_columns
    )
    chosen = config.routing.settings(target, defaults)
    known = {source: schemas.get(source) for source in sources}
    if not chosen.keys and remembered and not any(known.values()):
        return attrs.evolve(chosen, keys=remembered)
    return attrs.evolve(chosen, keys=target_keys(target, chosen.keys, known))


def load_keys(checkpoint: str) -> dict[str, tuple[str, ...]]:
    """The key columns each target was last applied with, as the job saved them in its checkpoint directory."""
    path = os.path.join(checkpoint, KEYS_FILE)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            saved = json.load(handle)
        return {str(target): tuple(str(c) for c in columns) for target, columns in saved.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise StorageError(f"checkpoint file {path}: not the targets' keys ({exc})") from exc


def save_keys(checkpoint: str, keys: Mapping[str, tuple[str, ...]]) -> None:
    """Replace the saved keys atomically."""
    os.makedirs(checkpoint, exist_ok=True)
    path = os.path.join(checkpoint, KEYS_FILE)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump({target: list(columns) for target, columns in sorted(keys.items())}, handle)
    os.replace(path + ".tmp", path)


def batch_tables(
    decoded: DecodedChanges,
    config: TablesConfig,
    ddl: Sequence[TableDdl],
    *,
    sink: Sink,
    sources: dict[str, set[tuple[str, str]]],
    schemas: Mapping[tuple[str, str], TableSchema],
    remembered: Mapping[str, tuple[str, ...]],
) -> BatchTables:
    """The batch's targets. ``sources`` (target -> source tables routed to it) is the run's, added to here;
    ``remembered``: the keys each target was applied with before."""
    routing = config.routing
    grouped = routing.targets(decoded.tables())
    for target, names in grouped.items():
        sources.setdefault(target, set()).update(names)
    frames = {target: _union([decoded.table(*name) for name in names]) for target, names in grouped.items()}

    def target_of(database: str, table: str) -> str | None:
        return routing.target(database, table) if routing.selected(database, table) else None

    def known(database: str) -> list[str]:
        return sorted(t for d, t in schemas if d == database)

    plan = plan_table_ddl(config.ddl, ddl, target_of, known)
    if not plan.keep_truncates:
        frames = {target: frame.where("_cdc_op != 'truncate'") for target, frame in frames.items()}
    spark = decoded.spark
    for target, (item, source) in plan.empty.items():
        columns = frames[target].schema if target in frames else _stored_columns(sink, spark, target)
        if columns is None:
            continue  # never written: nothing to empty
        database, _, table = target.partition(".")
        dropped = truncate_frame(spark, columns, item, database, table)
        frames[target] = frames[target].unionByName(dropped) if target in frames else dropped
        sources.setdefault(target, set()).add(source)
    notes = list(plan.notes)
    if config.ddl != "evolve":
        widens = format_widens(config.table_format)
        for target in sorted(frames):
            stored = sink.read_target(spark, target)
            if stored is None:
                continue
            frame = frames[target]
            settings = table_settings(config, target, sorted(sources.get(target, ())), schemas, remembered.get(target))
            written = [
                *data_columns(frame, settings.keys or (), settings.include_columns, settings.exclude_columns),
                *config.metadata_columns,
            ]
            batch_types = storable(frame, tuple(written)).schema
            conformed = conform(config.ddl, target, frame, column_changes(stored.schema, batch_types, written, widens))
            frames[target] = conformed.frame
            notes += conformed.notes
    return BatchTables(frames=frames, notes=tuple(notes))


def _union(frames: Sequence[DataFrame]) -> DataFrame:
    """Tables routed to one target, their columns matched by name (a column one lacks is null in its rows)."""
    return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)


def _stored_columns(sink: Sink, spark: Any, target: str) -> StructType | None:
    """A stored target's source columns (its SCD2 bounds and metadata columns left out), None if it has none."""
    from pyspark.sql import types as T

    stored = sink.read_target(spark, target)
    if stored is None:
        return None
    return T.StructType([f for f in stored.schema.fields if not f.name.startswith(("__", "_cdc_"))])


__all__ = ["KEYS_FILE", "BatchTables", "TablesConfig", "batch_tables", "load_keys", "save_keys", "table_settings"]
