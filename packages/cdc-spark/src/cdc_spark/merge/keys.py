"""A row's key as one text: how the key state of every table fits in one state table.

:func:`key_text` writes a row's key columns as a JSON object of their values' texts (``{"id":"42"}``), the same
for every value that compares equal across the widenings schema evolution makes: an ``int`` and the ``bigint`` it
widens to, a ``decimal(10,2)`` 1.50 and the ``decimal(12,4)`` 1.5000 (trailing zeros of a fraction dropped), a
``float`` and the ``double`` it widens to. Timestamps are written as microseconds since the epoch, so the text
does not depend on the session's time zone. :func:`key_values_sql` reads the typed columns back from a text.

Both are SQL text, which the resolve of a batch embeds in its one statement (:func:`key_text` wraps it as a
Column).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cdc_spark.merge.statements import literal, quote, sql_type

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql.types import DataType, StructField


def _text(column: str, data_type: DataType) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, T.DecimalType):
        text = f"CAST({column} AS STRING)"
        trimmed = f"regexp_replace(regexp_replace({text}, '0+$', ''), '[.]$', '')"
        return f"CASE WHEN instr({text}, '.') > 0 THEN {trimmed} ELSE {text} END"
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        wide = f"CAST({column} AS DOUBLE)"
        return f"CASE WHEN {wide} = 0 THEN '0.0' ELSE CAST({wide} AS STRING) END"  # -0.0 equals 0.0
    if isinstance(data_type, T.TimestampType):
        return f"CAST(unix_micros({column}) AS STRING)"
    if isinstance(data_type, T.BinaryType):
        return f"base64({column})"
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return f"to_json({column})"
    return f"CAST({column} AS STRING)"


def key_text_sql(fields: Sequence[StructField], qualifier: str | None = None) -> str:
    """The text of the key made of ``fields`` (columns of the frame, or of ``qualifier``'s side of a join)."""
    prefix = f"{qualifier}." if qualifier else ""
    parts = ", ".join(f"{literal(f.name)}, {_text(prefix + quote(f.name), f.dataType)}" for f in fields)
    return f"to_json(named_struct({parts}))"


def key_text(fields: Sequence[StructField], qualifier: str | None = None) -> Column:
    from pyspark.sql import functions as F

    return F.expr(key_text_sql(fields, qualifier))


def _value(text: str, data_type: DataType) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, T.TimestampType):
        return f"timestamp_micros(CAST({text} AS BIGINT))"
    if isinstance(data_type, T.BinaryType):
        return f"unbase64({text})"
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return f"from_json({text}, {literal(sql_type(data_type))})"
    return f"CAST({text} AS {sql_type(data_type)})"


def key_values_sql(text: str, fields: Sequence[StructField]) -> list[str]:
    """The typed key columns of a :func:`key_text` (SQL ``text``), in the order of ``fields``."""
    texts = f"from_json({text}, {literal('struct<' + ', '.join(f'{quote(f.name)}: string' for f in fields) + '>')})"
    return [_value(f"{texts}.{quote(f.name)}", f.dataType) for f in fields]


__all__ = ["key_text", "key_text_sql", "key_values_sql"]
