"""Projections that whole-stage code generation puts in generated methods of their own.

Spark fuses a chain of projections into one generated method, which must stay under the JVM's 64 KB of bytecode
(``spark.sql.codegen.hugeMethodLimit``): past it, Spark runs the whole stage without generated code, every
projection copying the row again. It moves an operator's consumer into a method of its own only where the consumer
reads each of the operator's columns more than once (and they fit in a method's 255 parameter slots). A projection
that passes a column through reads it once.

:func:`own_method` re-selects every column so that it is read twice and means the same: ``coalesce(c, c)`` where
``c`` may be null, ``least(c, c)`` where it may not (the optimizer drops the second ``c`` of a coalesce whose first
cannot be null). Everything above it goes into its own method; a column of neither kind (one that cannot be null and
holds a map) is passed as it is, and the boundary is then lost, not the values.

Outside whole-stage code a boundary is one more copy of every row. Spark decides that per projection, on the
optimized plan (rows of more nested fields than ``spark.sql.codegen.maxFields``, as a batch of many tables has, get
none), so :func:`in_whole_stage` reads the physical plan rather than guess it.

Measured on the TiCDC Avro bench's pass (three tables, seven schema ids, typed in the pass): one stage of nine
projections, 47,795 bytes of bytecode in its largest method without boundaries, 19,819 with one below each of the
four typing stages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructField


def own_method(frame: DataFrame) -> DataFrame:
    """``frame``, its columns and values the same, with the projections put over it in a generated method of their
    own (module docstring)."""
    return frame.select(*[_read_twice(field) for field in frame.schema.fields])


def in_whole_stage(frame: DataFrame) -> bool:
    """Whether every projection of ``frame``'s physical plan runs in whole-stage code: a projection outside it (its
    rows too wide, a function without generated code, whole-stage code off) copies every row, the more so for a
    boundary of :func:`own_method` that would gain nothing there."""
    return _projections_in_stages(frame._jdf.queryExecution().executedPlan(), staged=False)


def _projections_in_stages(node: Any, *, staged: bool) -> bool:
    name = node.nodeName()
    if name == "AdaptiveSparkPlan":
        return False  # planned again at run time: not known here
    if name.startswith("WholeStageCodegen"):
        staged = True
    elif name == "InputAdapter":
        staged = False  # its child runs outside the stage above it
    elif name == "Project" and not staged:
        return False
    children = node.children()
    return all(_projections_in_stages(children.apply(i), staged=staged) for i in range(children.size()))


def _read_twice(field: StructField) -> Column:
    from pyspark.sql import functions as F

    column = F.col(f"`{field.name}`")
    if field.nullable:
        return F.coalesce(column, column).alias(field.name)
    if not _ordered(field.dataType):
        return column  # least needs an order: no boundary
    return F.least(column, column).alias(field.name)


def _ordered(data_type: DataType) -> bool:
    """Whether Spark orders values of ``data_type`` (``least`` takes them): not a map, a variant, or a struct or array
    holding one."""
    from pyspark.sql.types import ArrayType, MapType, StructType, VariantType

    if isinstance(data_type, MapType | VariantType):
        return False
    if isinstance(data_type, ArrayType):
        return _ordered(data_type.elementType)
    if isinstance(data_type, StructType):
        return all(_ordered(f.dataType) for f in data_type.fields)
    return True


__all__ = ["in_whole_stage", "own_method"]
