"""A constant mapping looked up in a Spark expression, safe to plan from several threads at once.

``create_map(lit(k1), lit(v1), ...)[key]`` is the obvious spelling, but the optimizer folds that ``map(...)`` by
evaluating it, and a ``map(...)`` expression fills a builder of its own that is not safe to share between threads.
The job plans a batch's tables side by side over one decoded batch (:mod:`cdc_spark.table_workers`), and the plans
share their expressions, so two threads could fold one map at once (the race seen with ``from_avro``'s options,
:mod:`cdc_spark.decoding.avro_records`). A ``CASE`` over the keys builds nothing, and its value is the same: null
for a key that is absent or null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import Column


# Parts of a text key: neither is in a topic name (Kafka allows letters, digits, '.', '_', '-') nor in a number
_SEPARATOR: Final = "\x00"
_NULL: Final = "\x01"


def key_text(*parts: object) -> str:
    """Values (a topic, numbers, None) as one text, the one :func:`key_column` makes of the same values in Spark: a
    key of a :func:`lookup` or an ``isin`` (one literal text each, where literal structs take Spark long to plan)."""
    return _SEPARATOR.join(_NULL if part is None else str(part) for part in parts)


def key_column(*columns: Column) -> Column:
    """The :func:`key_text` of each row's ``columns``."""
    from pyspark.sql import functions as F

    return F.concat_ws(_SEPARATOR, *[F.coalesce(column.cast("string"), F.lit(_NULL)) for column in columns])


def lookup(mapping: Mapping[str, object], key: Column) -> Column:
    """``mapping[key]`` as a Spark expression: null where ``key`` is null or not in ``mapping``."""
    from pyspark.sql import functions as F

    if not mapping:
        return F.lit(None)
    (first, value), *rest = mapping.items()
    found = F.when(key == F.lit(first), F.lit(value))
    for name, value in rest:
        found = found.when(key == F.lit(name), F.lit(value))
    return found


__all__ = ["key_column", "key_text", "lookup"]
