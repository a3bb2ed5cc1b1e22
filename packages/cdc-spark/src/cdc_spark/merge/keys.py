"""A row's key as one text: how the key state of every table fits in one state table.

:func:`key_text` writes a row's key columns as a JSON object of their values' texts (``{"id":"42"}``), the same
for every value that compares equal across the widenings schema evolution makes: an ``int`` and the ``bigint`` it
widens to, a ``decimal(10,2)`` 1.50 and the ``decimal(12,4)`` 1.5000 (trailing zeros of a fraction dropped), a
``float`` and the ``double`` it widens to. Timestamps are written as microseconds since the epoch, so the text
does not depend on the session's time zone. :func:`key_values` reads the typed columns back from a text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType, StructField


def _text(column: Column, data_type: DataType) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.DecimalType):
        text = column.cast("string")
        trimmed = F.regexp_replace(F.regexp_replace(text, "0+$", ""), "\\.$", "")
        return F.when(F.instr(text, ".") > 0, trimmed).otherwise(text)
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        wide = column.cast("double")
        return F.when(wide == 0, F.lit("0.0")).otherwise(wide.cast("string"))  # -0.0 equals 0.0
    if isinstance(data_type, T.TimestampType):
        return F.unix_micros(column).cast("string")
    if isinstance(data_type, T.BinaryType):
        return F.base64(column)
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return F.to_json(column)
    return column.cast("string")


def key_text(fields: Sequence[StructField], qualifier: str | None = None) -> Column:
    """The text of the key made of ``fields`` (columns of the frame, or of ``qualifier``'s side of a join)."""
    from pyspark.sql import functions as F

    def column(name: str) -> Column:
        return F.col(f"{qualifier}.`{name}`" if qualifier else f"`{name}`")

    return F.to_json(F.struct(*[_text(column(f.name), f.dataType).alias(f.name) for f in fields]))


def _value(text: Column, data_type: DataType) -> Column:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(data_type, T.TimestampType):
        return F.timestamp_micros(text.cast("bigint"))
    if isinstance(data_type, T.BinaryType):
        return F.unbase64(text)
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return F.from_json(text, data_type.simpleString())
    return text.cast(data_type)


def key_values(text: Column, fields: Sequence[StructField]) -> list[Column]:
    """The typed key columns of a :func:`key_text`, named after ``fields``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    texts = F.from_json(text, T.StructType([T.StructField(f.name, T.StringType()) for f in fields]))
    return [_value(texts.getField(f.name), f.dataType).alias(f.name) for f in fields]


__all__ = ["key_text", "key_values"]
