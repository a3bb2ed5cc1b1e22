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

import json
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


def _value(text: str, data_type: DataType, cast: str) -> str:
    from pyspark.sql import types as T

    if isinstance(data_type, T.TimestampType):
        return f"timestamp_micros({cast}({text} AS BIGINT))"
    if isinstance(data_type, T.BinaryType):
        return f"unbase64({text})"
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return f"from_json({text}, {literal(sql_type(data_type))})"
    return f"{cast}({text} AS {sql_type(data_type)})"


def key_values_sql(text: str, fields: Sequence[StructField], *, lenient: bool = False) -> list[str]:
    """The typed key columns of a :func:`key_text` (SQL ``text``), in the order of ``fields``; ``lenient``: null
    where a value does not fit its field's type (a key stored when its column was wider than the batch's type: no
    key of the batch equals it), else Spark's cast error.

    A key of one column whose name JSON writes as it is reads its value's text as a substring (``{"id":"42"}``: 42)
    where the text starts as that key's does and holds no escape: parsing the JSON took about 2 s of task time per
    10^6 stored keys, the substring a tenth of that. Any other text is parsed."""
    texts = f"from_json({text}, {literal('struct<' + ', '.join(f'{quote(f.name)}: string' for f in fields) + '>')})"
    parsed = [f"{texts}.{quote(f.name)}" for f in fields]
    if len(fields) == 1 and (head := _plain_head(fields[0].name)) is not None:
        start, tail = len(head), len('"}')
        cut = f"substr({text}, {start + 1}, length({text}) - {start + tail})"
        # no escape in the text and no quote in the cut: one value, written as it is
        plain = (
            f"startswith({text}, {literal(head)}) AND endswith({text}, '\"}}') AND instr({text}, '\\\\') = 0"
            f" AND instr({cut}, '\"') = 0"
        )
        parsed = [f"CASE WHEN {plain} THEN {cut} ELSE {parsed[0]} END"]
    cast = "try_cast" if lenient else "CAST"
    return [_value(value, f.dataType, cast) for value, f in zip(parsed, fields, strict=True)]


def _plain_head(name: str) -> str | None:
    """How a key text of the one column ``name`` starts (``{"id":"``), where JSON writes the name as it is (plain
    ASCII, nothing escaped); else None."""
    written = json.dumps(name)
    if written != f'"{name}"' or not name.isascii() or not name.isprintable():
        return None
    return "{" + written + ':"'


__all__ = ["key_text", "key_text_sql", "key_values_sql"]
