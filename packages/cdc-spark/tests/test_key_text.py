"""A key's text (`cdc_spark.merge.keys`): equal across the widenings schema evolution makes, independent of the
session's time zone, and read back to the typed key (what a truncate does with every stored key)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from cdc_spark.merge.keys import key_text_sql, key_values_sql

pytestmark = pytest.mark.spark


def texts(spark: Any, ddl: str, rows: list[tuple[Any, ...]]) -> list[str]:
    frame = spark.createDataFrame(rows, ddl)
    fields = list(frame.schema.fields)
    return [r[0] for r in frame.selectExpr(key_text_sql(fields)).collect()]


def test_a_key_has_one_text_whatever_the_width_of_its_type(spark: Any) -> None:
    narrow = texts(
        spark, "id int, price decimal(10,2), ratio float", [(7, Decimal("1.50"), 0.5), (8, Decimal("2"), -0.0)]
    )
    wide = texts(
        spark, "id bigint, price decimal(12,4), ratio double", [(7, Decimal("1.5000"), 0.5), (8, Decimal("2"), 0.0)]
    )
    assert narrow == wide == ['{"id":"7","price":"1.5","ratio":"0.5"}', '{"id":"8","price":"2","ratio":"0.0"}']


def test_a_timestamp_key_is_written_in_microseconds_whatever_the_session_zone(spark: Any) -> None:
    moment = dt.datetime(2024, 5, 1, 12, 0, 0, 250, tzinfo=dt.UTC)
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        first = texts(spark, "at timestamp, raw binary", [(moment, b"\x00\xff")])
        spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
        assert texts(spark, "at timestamp, raw binary", [(moment, b"\x00\xff")]) == first
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert first == ['{"at":"1714564800000250","raw":"AP8="}']


def test_the_typed_key_is_read_back_from_its_text(spark: Any) -> None:
    moment = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)
    ddl = "id bigint, price decimal(12,4), at timestamp, raw binary, tags array<string>, `odd name` string"
    rows = [(9, Decimal("1.2500"), moment, b"\x01", ["a", "b"], "x'y")]
    frame = spark.createDataFrame(rows, ddl)
    fields = list(frame.schema.fields)
    keyed = frame.selectExpr(f"{key_text_sql(fields)} AS k")
    typed = keyed.selectExpr(
        *[f"{value} AS `{f.name}`" for f, value in zip(fields, key_values_sql("k", fields), strict=True)]
    )
    assert typed.schema == frame.schema
    assert typed.collect() == frame.collect()


@pytest.mark.parametrize(
    ("ddl", "values"),
    [
        ("id bigint", [0, -7, 2**63 - 1]),
        ("id decimal(20,4)", [Decimal("1.5000"), Decimal("-0.0001"), Decimal("12345678901234.0000")]),
        ("id double", [0.1, -0.0, float("inf"), 1e-300]),
        ("id timestamp", [dt.datetime(1969, 12, 31, 23, 59, 59, 999999)]),
        ("id date", [dt.date(2024, 2, 29)]),
        ("id binary", [b"\xfb\xff/+", b""]),
        ("id string", ["plain", "", 'a "quoted" one', "back\\slash", "tab\there", "ünï €", "}", '"}']),
        ("`odd name` string", ['x"y']),
    ],
)
def test_a_one_column_key_is_read_back_from_its_text_without_parsing_where_it_can(
    spark: Any, ddl: str, values: list[Any]
) -> None:
    frame = spark.createDataFrame([(v,) for v in values], ddl)
    fields = list(frame.schema.fields)
    keyed = frame.selectExpr(f"{key_text_sql(fields)} AS k")
    (value,) = key_values_sql("k", fields)
    assert keyed.selectExpr(f"{value} AS v").collect() == [(v,) for v in values]


def test_a_text_not_of_the_key_it_is_read_as_is_parsed(spark: Any) -> None:
    (value,) = key_values_sql("k", list(spark.createDataFrame([], "id bigint").schema.fields))
    texts = spark.createDataFrame([('{"id":"5"}',), ('{"id":"5","region":"eu"}',), ('{"other":"5"}',)], "k string")
    assert [r[0] for r in texts.selectExpr(value).collect()] == [5, 5, None]
