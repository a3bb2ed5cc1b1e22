"""Spark types and values of the spatial and array columns (no Spark session needed: pyspark's type objects)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from cdc_core.types import DataType, MySQLType, parse_type_text
from cdc_core.values import Geometry
from cdc_spark.decoding.spark_types import spark_type, spark_value


def test_geometry_is_a_wkb_and_srid_struct() -> None:
    point = DataType(mysql_type=MySQLType.POINT)
    assert spark_type(point).simpleString() == "struct<wkb:binary,srid:int>"
    assert spark_value(Geometry(wkb=b"\x01", srid=4326), point) == (b"\x01", 4326)


def test_array_elements_take_their_own_spark_form() -> None:
    prices = parse_type_text("array<decimal(10,2)>")
    assert spark_type(prices).simpleString() == "array<decimal(10,2)>"
    assert spark_value([Decimal("1.5"), None], prices) == [Decimal("1.50"), None]
    days = parse_type_text("array<date>")
    assert spark_value([dt.date(2024, 2, 29)], days) == [dt.date(2024, 2, 29)]
