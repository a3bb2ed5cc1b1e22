"""Schema evolution between a batch and a stored table: added columns and widened types, anything else stops.

:func:`evolve` compares the columns a batch writes with the stored table's. A column the table lacks is added;
a column whose batch type holds every value of the stored type (:func:`is_widening`) widens the stored column;
a batch type narrower than the stored one is cast up on write. Anything else raises
:class:`SchemaEvolutionError`, as does a widening the table format cannot make (see the sinks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructField, StructType

_INTEGER_DIGITS: Final = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}


class SchemaEvolutionError(SchemaError):
    """A column of a batch changed type in a way the target cannot absorb (not a widening it can make)."""

    def __init__(self, table: str, column: str, old_type: str, new_type: str, reason: str | None = None) -> None:
        self.table = table
        self.column = column
        self.old_type = old_type
        self.new_type = new_type
        super().__init__(
            f"table {table}: column {column!r} changed type incompatibly from {old_type} to {new_type};"
            + (f" {reason}" if reason else " only added columns and widened types are applied")
        )


def is_widening(old: DataType, new: DataType) -> bool:
    """Whether every value of ``old`` is exactly a value of ``new`` (equal types included)."""
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    if old == new:
        return True
    if isinstance(old, (T.StructType, T.ArrayType, T.MapType)):
        return _same_but_nullability(old, new)  # nullability is no type change: the plans differ in it
    if isinstance(old, integral) and isinstance(new, integral):
        return _INTEGER_DIGITS[new.simpleString()] >= _INTEGER_DIGITS[old.simpleString()]
    if isinstance(old, integral) and isinstance(new, T.DecimalType):
        return new.precision - new.scale >= _INTEGER_DIGITS[old.simpleString()]
    if isinstance(old, T.FloatType) and isinstance(new, T.DoubleType):
        return True
    if isinstance(old, T.DecimalType) and isinstance(new, T.DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    return isinstance(old, T.DateType) and isinstance(new, T.TimestampNTZType)


def _same_but_nullability(old: DataType, new: DataType) -> bool:
    """Whether two types are equal once the nullability of nested fields, elements and values is ignored."""
    from pyspark.sql import types as T

    if isinstance(old, T.StructType) and isinstance(new, T.StructType):
        return old.names == new.names and all(
            map(_same_but_nullability, [f.dataType for f in old.fields], [f.dataType for f in new.fields])
        )
    if isinstance(old, T.ArrayType) and isinstance(new, T.ArrayType):
        return _same_but_nullability(old.elementType, new.elementType)
    if isinstance(old, T.MapType) and isinstance(new, T.MapType):
        return _same_but_nullability(old.keyType, new.keyType) and _same_but_nullability(old.valueType, new.valueType)
    return old == new


@attrs.frozen
class Evolution:
    """What a batch changes in a stored table's columns."""

    added: tuple[StructField, ...] = ()
    widened: tuple[StructField, ...] = ()  # the stored column's new type

    def __bool__(self) -> bool:
        return bool(self.added or self.widened)


def evolve(table: str, stored: StructType, wanted: StructType) -> Evolution:
    """The columns of ``wanted`` to add to ``stored`` and those to widen; a typed error for anything else."""
    from pyspark.sql.types import StructField

    names = {f.name: f for f in stored.fields}
    added: list[StructField] = []
    widened: list[StructField] = []
    for field in wanted.fields:
        old = names.get(field.name)
        if old is None:
            added.append(StructField(field.name, field.dataType))  # nullable: rows written before have no value
        elif is_widening(field.dataType, old.dataType):
            continue  # same, or the batch is narrower: cast up on write
        elif is_widening(old.dataType, field.dataType):
            widened.append(StructField(field.name, field.dataType))  # nullable, as every evolved column
        else:
            raise SchemaEvolutionError(table, field.name, old.dataType.simpleString(), field.dataType.simpleString())
    return Evolution(added=tuple(added), widened=tuple(widened))


__all__ = ["Evolution", "SchemaEvolutionError", "evolve", "is_widening"]
