"""Spark types of columns and decoded values in the Python form Spark's row converter expects (no Spark session
needed: pyspark's type objects)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from cdc_core.types import DataType, MySQLType, parse_type_text
from cdc_core.values import EnumIndex, Geometry, SetBits
from cdc_spark.decoding.spark_types import ValueRangeError, spark_type, spark_value


@pytest.mark.parametrize(
    ("type_text", "value", "expected"),
    [
        # 38 significant digits: more than the thread's default decimal context holds.
        ("decimal(38,10)", Decimal("1" * 28 + ".5"), Decimal("1" * 28 + ".5000000000")),
        ("decimal(20,0) unsigned", Decimal("18446744073709551615"), Decimal("18446744073709551615")),
        ("decimal(10,2)", "3.1", Decimal("3.10")),
        ("decimal(65,30)", Decimal("1" * 35 + "." + "9" * 30), "1" * 35 + "." + "9" * 30),
    ],
)
def test_decimals_keep_every_digit(type_text: str, value: object, expected: object) -> None:
    got = spark_value(value, parse_type_text(type_text))
    assert got == expected
    assert type(got) is type(expected)


def test_unknown_members_travel_as_their_numbers() -> None:
    assert spark_value(EnumIndex(3), parse_type_text("enum('a','b')")) == "3"
    assert spark_value(SetBits(5), parse_type_text("set('a','b')")) == ["5"]


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


@pytest.mark.parametrize(
    ("type_text", "spark", "largest"),
    [
        ("bit(8)", "bigint", 255),
        ("bit(63)", "bigint", 2**63 - 1),
        ("bit(64)", "decimal(20,0)", Decimal(2**64 - 1)),
        # TiCDC's Canal-JSON says ``bit`` without the width: it may be BIT(64), whose upper half no bigint holds
        ("bit", "decimal(20,0)", Decimal(2**64 - 1)),
    ],
)
def test_a_bit_column_holds_its_widest_value(type_text: str, spark: str, largest: int | Decimal) -> None:
    data_type = parse_type_text(type_text)
    assert spark_type(data_type).simpleString() == spark
    value = spark_value(int(largest), data_type)
    assert value == largest and type(value) is type(largest)


@pytest.mark.parametrize(
    ("type_text", "value"),
    [
        ("tinyint(4)", 128),
        ("smallint(6)", -(2**15) - 1),
        ("int(11)", 2**31),
        ("bigint(20)", 2**63),
        ("bigint(20) unsigned", 10**20),
        ("bit(8)", 2**63),
    ],
)
def test_an_integer_beyond_its_spark_type_is_a_range_error(type_text: str, value: int) -> None:
    """A decoder's int that its column's Spark type cannot hold is that message's error, not the Arrow conversion's
    of the whole batch."""
    with pytest.raises(ValueRangeError, match=f"{value} does not fit"):
        spark_value(value, parse_type_text(type_text))
