"""A message's coordinates (topic, partition, offset), and frames joined by them.

The codecs key their clocks and their state by the message's topic and partition as they are, None included (a
frame that is not Spark's Kafka source may have no topic). A plain join ``on`` the coordinates drops every row
whose topic is null, as SQL's ``=`` never holds for null: the joins here hold a null equal to a null.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from cdc_spark.decoding.literal_lookup import key_column, key_text

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

COORDINATES: Final = ("topic", "partition", "offset")


def join_on_coordinates(rows: DataFrame, other: DataFrame, how: str, *, broadcast: bool = True) -> DataFrame:
    """``rows`` joined to ``other`` (which has the coordinates, and other columns ``rows`` lacks) where their
    coordinates are equal, a null equal to a null; ``other`` broadcast to the tasks unless told otherwise. The
    result has ``rows``' columns, then ``other``'s but the coordinates."""
    from pyspark.sql import functions as F

    renamed = other.withColumnsRenamed({name: f"__joined_{name}" for name in COORDINATES})
    condition = F.col(COORDINATES[0]).eqNullSafe(F.col(f"__joined_{COORDINATES[0]}"))
    for name in COORDINATES[1:]:
        condition = condition & F.col(name).eqNullSafe(F.col(f"__joined_{name}"))
    joined = rows.join(F.broadcast(renamed) if broadcast else renamed, on=condition, how=how)
    return joined.drop(*[f"__joined_{name}" for name in COORDINATES])


def at_coordinates(found: Iterable[tuple[str | None, int | None, int | None]]) -> Column:
    """Whether a row's coordinates are one of ``found``, a null equal to a null (never null itself). Each is tested
    as one text: as literal structs, Spark took longer to plan the test than to run it (0.4-0.8 s for 160)."""
    from pyspark.sql import functions as F

    here = key_column(*[F.col(name) for name in COORDINATES])
    return here.isin(*sorted(key_text(*c) for c in found))


__all__ = ["COORDINATES", "at_coordinates", "join_on_coordinates"]
