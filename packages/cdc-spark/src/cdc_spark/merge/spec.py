"""What to apply to one table and how: keys, written columns, SCD type, retention, metadata columns."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, Literal

import attrs

from cdc_core.errors import ConfigError
from cdc_spark.merge.columns import HIDDEN_PREFIX

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DEFAULT_TOMBSTONE_RETENTION: Final = dt.timedelta(days=7)
CHANGE_OPS: Final = ("insert", "update", "delete", "truncate")


@attrs.frozen(kw_only=True)
class ApplySpec:
    """One table's apply settings; :func:`build_spec` checks them against a change frame."""

    table: str  # database.table
    keys: tuple[str, ...]
    columns: tuple[str, ...]  # the source columns written to the target, in the change frame's order
    scd: Literal[1, 2] = 1
    track_columns: tuple[str, ...] | None = None  # SCD2: changes to other columns update the version in place
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION
    sequence_by: str = "_cdc_sequence"
    metadata: tuple[str, ...] = ()  # change-frame columns (``_cdc_op``...) also written to the target

    @property
    def value_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.keys)

    @property
    def target_columns(self) -> tuple[str, ...]:
        """The target's columns besides the SCD2 bounds: the source's, then the requested metadata."""
        return (*self.columns, *self.metadata)


def data_columns(
    changes: DataFrame,
    keys: Sequence[str],
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> tuple[str, ...]:
    """The table columns of a change frame to write, in its order: keys always, ``_cdc_*`` columns never."""
    names = [c for c in changes.columns if not c.startswith("_cdc_") and not c.startswith(HIDDEN_PREFIX)]
    missing = [k for k in keys if k not in names]
    if missing:
        raise ConfigError(f"key columns {missing} are not columns of the change frame {names}")
    chosen = list(names)
    if include is not None:
        wanted = list(include)
        unknown = [c for c in wanted if c not in names]
        if unknown:
            raise ConfigError(f"include_columns names unknown columns {unknown}")
        chosen = [c for c in chosen if c in wanted or c in keys]
    if exclude is not None:
        dropped = set(exclude) - set(keys)
        chosen = [c for c in chosen if c not in dropped]
    return tuple(chosen)


def build_spec(
    changes: DataFrame,
    *,
    table: str,
    keys: Sequence[str],
    sequence_by: str = "_cdc_sequence",
    scd: int = 1,
    track_columns: Sequence[str] | None = None,
    include_columns: Iterable[str] | None = None,
    exclude_columns: Iterable[str] | None = None,
    tombstone_retention: dt.timedelta | None = DEFAULT_TOMBSTONE_RETENTION,
    metadata: Sequence[str] = (),
) -> ApplySpec:
    if scd not in (1, 2):
        raise ConfigError(f"scd must be 1 or 2, not {scd!r}")
    if not keys:
        raise ConfigError(f"table {table}: no key columns; pass keys (the table has no primary or unique key)")
    if sequence_by not in changes.columns:
        raise ConfigError(f"table {table}: sequence_by column {sequence_by!r} is not in the change frame")
    if "_cdc_op" not in changes.columns:
        raise ConfigError(f"table {table}: the change frame has no _cdc_op column")
    absent = [c for c in metadata if c not in changes.columns]
    if absent:
        raise ConfigError(f"table {table}: metadata columns {absent} are not in the change frame")
    try:
        columns = data_columns(changes, keys, include_columns, exclude_columns)
    except ConfigError as error:
        raise ConfigError(f"table {table}: {error}") from None
    if track_columns is not None:
        unknown = [c for c in track_columns if c not in columns]
        if unknown:
            raise ConfigError(f"table {table}: track_columns names columns not written {unknown}")
    return ApplySpec(
        table=table,
        keys=tuple(keys),
        columns=columns,
        scd=1 if scd == 1 else 2,
        track_columns=None if track_columns is None else tuple(c for c in track_columns if c not in keys),
        tombstone_retention=tombstone_retention,
        sequence_by=sequence_by,
        metadata=tuple(metadata),
    )


__all__ = ["CHANGE_OPS", "DEFAULT_TOMBSTONE_RETENTION", "ApplySpec", "build_spec", "data_columns"]
