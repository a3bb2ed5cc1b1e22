"""A constant mapping looked up in a Spark expression, safe to plan from several threads at once.

``create_map(lit(k1), lit(v1), ...)[key]`` is the obvious spelling, but the optimizer folds that ``map(...)`` by
evaluating it, and a ``map(...)`` expression fills a builder of its own that is not safe to share between threads.
The job plans a batch's tables side by side over one decoded batch (:mod:`cdc_spark.table_workers`), and the plans
share their expressions, so two threads could fold one map at once (the race seen with ``from_avro``'s options,
:mod:`cdc_spark.decoding.avro_records`). A ``CASE`` over the keys builds nothing, and its value is the same: null
for a key that is absent or null.

The ``CASE`` gives the value's position in an array of the values, not the value: Spark writes a number literal
(a long, an int, a timestamp) into the generated Java code as text, where an array literal is a reference. A
mapping whose numbers change from batch to batch (each partition's clock) would otherwise make every batch's code
new, compiled again (Janino, then the JIT) though nothing else changed: 4 classes of 800-1,000 lines a table and
batch in the bench's changefeed.
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


def lookup(mapping: Mapping[str, object], key: Column, marker: int | None = None) -> Column:
    """``mapping[key]`` as a Spark expression: null where ``key`` is null or not in ``mapping``. With ``marker`` (a
    long; the values are numbers), the values' array ends with it after the null, unread: a kept plan of the
    expression takes another batch's values of the same keys there (:func:`cdc_spark.runtime.plan_reuse.
    with_lookup_values`)."""
    from pyspark.sql import functions as F

    if marker is not None and -(1 << 31) <= marker < (1 << 31):
        raise ValueError(f"a lookup's marker is a long outside the ints (a literal of its own type): {marker}")
    if not mapping:
        return F.lit(None)
    (first, *rest) = mapping
    position = F.when(key == F.lit(first), F.lit(1))
    for number, name in enumerate(rest, start=2):
        position = position.when(key == F.lit(name), F.lit(number))
    # the positions are the same whatever the values: the code is too (see the module). A key not found reads the
    # null after the values: Spark 4.1's generated element_at of an array literal ignores a null position and
    # reads the position the previous row left
    end = [F.lit(None)] if marker is None else [F.lit(None), F.lit(marker)]
    values = F.array(*[F.lit(value) for value in mapping.values()], *end)
    return F.element_at(values, position.otherwise(F.lit(len(mapping) + 1)))


__all__ = ["key_column", "key_text", "lookup"]
