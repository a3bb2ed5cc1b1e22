"""Avro DECIMAL, in string mode and as the Avro decimal logical type, reads at its column's scale."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cdc_avro.datum import reader_for
from cdc_core.textual import UTC
from cdc_core.types import DataType, MySQLType

DECIMAL_10_4 = DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4)


@pytest.mark.parametrize(
    ("primitive", "datum", "expected"),
    [
        ("string", "12.34", "12.3400"),  # avro-decimal-handling-mode=string
        ("string", "-3", "-3.0000"),
        ("bytes", Decimal("12.34"), "12.3400"),  # precise: a decimal datum with fewer digits than the column
        ("bytes", Decimal("12.3456"), "12.3456"),
    ],
)
def test_avro_decimals_are_read_at_the_column_scale(primitive: str, datum: object, expected: str) -> None:
    assert str(reader_for(DECIMAL_10_4, primitive, UTC)(datum)) == expected
