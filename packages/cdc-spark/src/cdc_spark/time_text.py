"""TIME columns as MySQL text instead of Spark intervals (``time-as=string``).

The contract types TIME as ``interval day to second``, which holds every MySQL TIME (negative, over 24 hours).
Targets that cannot store intervals (or users who want TiDB's own text) get ``[-]HH:MM:SS[.fraction]`` with the
column's fractional-second digits, the same text :func:`cdc_core.textual.format_time` writes, computed in Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cdc_core.errors import ConfigError
from cdc_core.schema import TableSchema
from cdc_core.types import LogicalType

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

TIME_AS: Final = ("interval", "string")


def check_time_as(value: str) -> str:
    if value not in TIME_AS:
        raise ConfigError(f"time-as={value!r}: expected one of {', '.join(TIME_AS)}")
    return value


def time_text(interval: Column, fsp: int | None) -> Column:
    """``[-]HH:MM:SS[.f]`` of a day-time interval, hours not wrapped at 24, ``fsp`` fraction digits; with the fsp
    unknown, 6 digits where the value has microseconds and none where it has none (as `format_time` writes it)."""
    from pyspark.sql import functions as F

    def part(unit: str) -> Column:
        return F.abs(F.extract(F.lit(unit), interval))

    seconds = part("SECOND")  # decimal(8,6)
    whole = F.floor(seconds)
    hours = part("DAY") * 24 + part("HOUR")
    text = F.format_string(
        "%s%02d:%02d:%02d",
        F.when(interval < F.expr("INTERVAL '0' SECOND"), F.lit("-")).otherwise(F.lit("")),
        hours.cast("long"),
        part("MINUTE").cast("long"),
        whole.cast("long"),
    )
    micros = ((seconds - whole) * 1_000_000).cast("long")
    if fsp is None:
        text = F.when(micros == 0, text).otherwise(F.concat(text, F.lit("."), F.format_string("%06d", micros)))
    elif fsp > 0:
        text = F.concat(text, F.lit("."), F.substring(F.format_string("%06d", micros), 1, fsp))
    return F.when(interval.isNotNull(), text)


def with_time_text(frame: DataFrame, schema: TableSchema) -> DataFrame:
    """``frame`` (a change frame of ``schema``'s table) with every TIME column, and its before image, as text."""
    from pyspark.sql import functions as F

    times = [c for c in schema.stored_columns if c.data_type.logical is LogicalType.TIME]
    if not times:
        return frame
    before = F.col("_cdc_before")
    for column in times:
        before = before.withField(
            column.name, time_text(F.col("_cdc_before").getField(column.name), column.data_type.known_fsp)
        )
    replaced = {c.name: time_text(F.col(c.name), c.data_type.known_fsp) for c in times}
    replaced["_cdc_before"] = F.when(F.col("_cdc_before").isNotNull(), before)
    result: DataFrame = frame.withColumns(replaced)
    return result
