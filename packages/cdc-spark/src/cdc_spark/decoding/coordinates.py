"""A message's coordinates (topic, partition, offset), and frames joined by them.

The codecs key their clocks and their state by the message's topic and partition as they are, None included (a
frame that is not Spark's Kafka source may have no topic). A plain join ``on`` the coordinates drops every row
whose topic is null, as SQL's ``=`` never holds for null: the joins here hold a null equal to a null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


__all__ = ["COORDINATES", "join_on_coordinates"]
