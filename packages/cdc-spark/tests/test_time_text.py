"""TIME as text (``time-as=string``): Spark writes exactly what cdc-core's TiDB text formatter writes."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_core.registry import installed_codecs
from cdc_core.textual import format_time
from cdc_spark import decoding
from cdc_spark.time_text import time_text

pytestmark = pytest.mark.spark

DURATIONS = [
    dt.timedelta(0),
    dt.timedelta(hours=1, minutes=2, seconds=3, microseconds=456789),
    -dt.timedelta(hours=838, minutes=59, seconds=59),
    dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999),
    -dt.timedelta(microseconds=1),
    dt.timedelta(days=2, hours=3),
    -dt.timedelta(hours=25, seconds=0.5),
]


@pytest.mark.parametrize("fsp", [0, 3, 6, None])  # None: unknown, the value's own digits
def test_interval_text_equals_the_core_formatter(spark: Any, fsp: int | None) -> None:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([(d,) for d in DURATIONS] + [(None,)], "t interval day to second")
    got = [r["text"] for r in frame.select(time_text(F.col("t"), fsp).alias("text")).collect()]
    assert got == [format_time(d, fsp) for d in DURATIONS] + [None]


@pytest.mark.skipif("canal-json" not in installed_codecs(), reason="needs cdc-canal")
def test_decode_with_time_as_string(kafka_frame: Any, change_rows: Any, kitchen_sink_canal: Any) -> None:
    frame = kafka_frame(kitchen_sink_canal(12))
    options = {"time-zone": "Asia/Shanghai"}
    as_interval = decoding.decode(frame, "canal-json", options)
    as_text = decoding.decode(frame, "canal-json", options, time_as="string")
    (name,) = as_text.tables()
    schema = as_text.schemas()[name]
    times = [c for c in schema.stored_columns if c.data_type.logical.name == "TIME"]
    assert times
    checked = 0
    for want, got in zip(change_rows(as_interval.table(*name)), change_rows(as_text.table(*name)), strict=True):
        for column in times:
            value = want[column.name]
            assert got[column.name] == (None if value is None else format_time(value, column.data_type.known_fsp))
            if want["_cdc_before"] is not None and want["_cdc_before"][column.name] is not None:
                text = format_time(want["_cdc_before"][column.name], column.data_type.known_fsp)
                assert got["_cdc_before"][column.name] == text
                checked += 1
    assert checked > 0
    assert dict(as_text.table(*name).dtypes)[times[0].name] == "string"
    as_interval.release()
    as_text.release()


def test_an_unknown_time_as_is_a_config_error(spark: Any) -> None:
    frame = spark.createDataFrame([], "key binary, value binary")
    with pytest.raises(ConfigError, match="time-as"):
        decoding.decode(frame, "debezium", time_as="text")
