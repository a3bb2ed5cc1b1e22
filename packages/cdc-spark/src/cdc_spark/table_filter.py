"""Messages of tables a run does not apply, left out before decode where the protocol names the table plainly.

Canal-JSON, Simple (JSON) and Debezium JSON carry the database and table as plain fields of the message value;
Spark reads them with ``get_json_object`` without decoding anything else. The batch's distinct names are
collected (one small aggregate over the cached batch) and matched on the driver with the run's patterns
(:meth:`cdc_spark.routing.Routing.selected`, Python's regular expressions), and only messages of tables found
excluded are dropped: a message whose names cannot be read this way (DDL, watermarks, compressed or malformed
values) is decoded as before, and the decoded tables are filtered again. TiCDC Avro and Simple's Avro encoding
are filtered after decode only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from cdc_spark.routing import Routing

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

# protocol -> (JSON paths of the database, JSON paths of the table), the first path present wins
MESSAGE_TABLE: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "canal-json": (("$.database",), ("$.table",)),
    "simple": (("$.database",), ("$.table",)),
    "debezium": (("$.payload.source.db", "$.source.db"), ("$.payload.source.table", "$.source.table")),
}
_SEPARATOR: Final = "\u0000"  # in no database or table name


def _read(value: Column, paths: Sequence[str]) -> Column:
    from pyspark.sql import functions as F

    return F.coalesce(*[F.get_json_object(value, path) for path in paths])


def named_tables(protocol: str, options: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The JSON paths naming a message's table, None when the protocol's messages do not name it plainly."""
    if protocol == "simple" and str(options.get("encoding-format", "json")) != "json":
        return None
    return MESSAGE_TABLE.get(protocol)


def drop_excluded(frame: DataFrame, protocol: str, options: Mapping[str, object], routing: Routing) -> DataFrame:
    """``frame`` (Kafka-shaped messages) without the messages of tables ``routing`` does not select."""
    from pyspark.sql import functions as F

    paths = named_tables(protocol, options)
    if paths is None or not routing.filters_tables:
        return frame
    value = F.col("value").cast("string")
    database, table = _read(value, paths[0]), _read(value, paths[1])
    names = frame.select(database.alias("d"), table.alias("t")).where("d IS NOT NULL AND t IS NOT NULL").distinct()
    excluded = [(r["d"], r["t"]) for r in names.collect() if not routing.selected(r["d"], r["t"])]
    if not excluded:
        return frame
    listed = F.concat_ws(_SEPARATOR, database, table).isin([f"{d}{_SEPARATOR}{t}" for d, t in excluded])
    dropped = F.when(database.isNotNull() & table.isNotNull(), listed)  # null (kept) when a name is unread
    return frame.where(~F.coalesce(dropped, F.lit(False)))


__all__ = ["MESSAGE_TABLE", "drop_excluded", "named_tables"]
