"""Table schemas: columns in order, indexes, and the handle key every protocol keys rows by."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from cdc_core.errors import SchemaError
from cdc_core.types import DataType


@attrs.frozen(kw_only=True)
class Column:
    """One column. ``default`` is the TiDB default text (None: no default or DEFAULT NULL)."""

    name: str
    data_type: DataType
    nullable: bool = True
    default: str | None = None
    generated: bool = False  # virtual generated columns are in schemas but never in row images
    comment: str | None = None


def _column_names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class Index:
    name: str
    columns: tuple[str, ...] = attrs.field(converter=_column_names)
    unique: bool = False
    primary: bool = False
    nullable: bool = False


def _columns(value: Iterable[Column]) -> tuple[Column, ...]:
    return tuple(value)


def _indexes(value: Iterable[Index]) -> tuple[Index, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class TableSchema:
    """A table as TiDB describes it at one schema version.

    ``version`` is TiDB's table-info update TSO (what Simple calls ``schemaVersion``); ``table_id`` the
    logical table ID. Column order is the row-image order.
    """

    database: str
    table: str
    columns: tuple[Column, ...] = attrs.field(converter=_columns)
    indexes: tuple[Index, ...] = attrs.field(converter=_indexes, default=())
    table_id: int | None = None
    version: int | None = None

    @columns.validator
    def _check_columns(self, _attribute: attrs.Attribute[tuple[Column, ...]], value: tuple[Column, ...]) -> None:
        seen: set[str] = set()
        for column in value:
            if column.name in seen:
                raise SchemaError(f"table {self.database}.{self.table}: duplicate column {column.name!r}")
            seen.add(column.name)

    @indexes.validator
    def _check_indexes(self, _attribute: attrs.Attribute[tuple[Index, ...]], value: tuple[Index, ...]) -> None:
        names = {c.name for c in self.columns}
        for index in value:
            missing = [c for c in index.columns if c not in names]
            if missing:
                raise SchemaError(
                    f"table {self.database}.{self.table}: index {index.name!r} names unknown columns {missing}"
                )

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise SchemaError(f"table {self.qualified_name} has no column {name!r}")

    def find_column(self, name: str) -> Column | None:
        for column in self.columns:
            if column.name == name:
                return column
        return None

    @property
    def primary_key(self) -> tuple[str, ...]:
        for index in self.indexes:
            if index.primary:
                return index.columns
        return ()

    @property
    def handle_key(self) -> tuple[str, ...]:
        """The primary key, else the NOT NULL unique index with fewest columns (TiCDC's handle key)."""
        if self.primary_key:
            return self.primary_key
        candidates = [i for i in self.indexes if i.unique and not i.nullable and i.columns]
        if not candidates:
            return ()
        return min(candidates, key=lambda i: len(i.columns)).columns

    @property
    def stored_columns(self) -> tuple[Column, ...]:
        """Columns that carry values in row images (virtual generated columns excluded)."""
        return tuple(c for c in self.columns if not c.generated)
