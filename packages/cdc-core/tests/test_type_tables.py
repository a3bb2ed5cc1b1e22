"""Completeness of the MySQL/TiDB type tables: every type is mapped, every alias and parameter form parses."""

from __future__ import annotations

import pytest

from cdc_core.errors import SchemaError
from cdc_core.types import (
    DEFAULT_LENGTHS,
    INTEGER_BITS,
    MYSQL_TO_LOGICAL,
    TYPE_ALIASES,
    LogicalType,
    MySQLType,
    integer_range,
    parse_type_text,
    signed_range,
    unsigned_max,
)


def test_every_mysql_type_has_a_logical_type() -> None:
    assert set(MYSQL_TO_LOGICAL) == set(MySQLType)


def test_every_logical_type_is_reached() -> None:
    assert set(MYSQL_TO_LOGICAL.values()) == set(LogicalType)


def test_every_integer_type_has_a_width_and_nothing_else_does() -> None:
    integers = {t for t, logical in MYSQL_TO_LOGICAL.items() if logical is LogicalType.INT}
    assert set(INTEGER_BITS) == integers


@pytest.mark.parametrize("mysql_type", list(MySQLType))
def test_every_type_name_parses_to_itself(mysql_type: MySQLType) -> None:
    assert parse_type_text(mysql_type.value).mysql_type is mysql_type


@pytest.mark.parametrize(("alias", "target"), list(TYPE_ALIASES.items()))
def test_every_alias_parses(alias: str, target: MySQLType) -> None:
    assert parse_type_text(alias).mysql_type is target


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int(10) unsigned", (MySQLType.INT, 10, None, True, None)),
        ("decimal(10,4)", (MySQLType.DECIMAL, 10, 4, False, None)),
        ("varchar(16)", (MySQLType.VARCHAR, 16, None, False, None)),
        ("enum('a','b')", (MySQLType.ENUM, None, None, False, ("a", "b"))),
        ("set('x','y,z')", (MySQLType.SET, None, None, False, ("x", "y,z"))),
        ("datetime(6)", (MySQLType.DATETIME, None, 6, False, None)),
        ("bit(64)", (MySQLType.BIT, 64, None, False, None)),
        ("BIGINT(20) UNSIGNED ZEROFILL", (MySQLType.BIGINT, 20, None, True, None)),
    ],
)
def test_parameter_forms(text: str, expected: tuple[object, ...]) -> None:
    parsed = parse_type_text(text)
    assert (parsed.mysql_type, parsed.length, parsed.decimal, parsed.unsigned, parsed.elements) == expected


@pytest.mark.parametrize(
    "text",
    [
        "decimal(1\u00b2,2)",  # superscript two: str.isdigit() takes it, int() does not
        "varchar(\u0661\u0666)",  # Arabic-Indic 16: str.isdigit() and int() both take it
        "datetime(\uff16)",  # fullwidth 6
        "decimal(10,-2)",
        "int(1_0)",
        "decimal(1,2,3)",
    ],
)
def test_parameters_are_ascii_integers(text: str) -> None:
    with pytest.raises(SchemaError) as caught:
        parse_type_text(text)
    assert str(caught.value) == f"column type {text!r}: parameters must be one or two integers"


@pytest.mark.parametrize(
    "text", ["int(10) unsigned", "decimal(10,4)", "varchar(16)", "enum('a','b')", "datetime(6)", "bit(7)"]
)
def test_type_text_round_trips(text: str) -> None:
    assert parse_type_text(text).type_text() == text


def test_integer_ranges_follow_the_widths() -> None:
    assert unsigned_max(MySQLType.BIGINT) == 2**64 - 1
    assert unsigned_max(MySQLType.MEDIUMINT) == 2**24 - 1
    assert signed_range(MySQLType.TINYINT) == (-128, 127)
    assert signed_range(MySQLType.INT) == (-(2**31), 2**31 - 1)


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("tinyint(3) unsigned", (0, 255)),
        ("mediumint(9)", (-(2**23), 2**23 - 1)),
        ("int(10) unsigned", (0, 2**32 - 1)),
        ("bigint(20)", (-(2**63), 2**63 - 1)),
        ("bigint(20) unsigned", (0, 2**64 - 1)),
        ("bit(4)", (0, 15)),
        ("bit(64)", (0, 2**64 - 1)),
        ("bit", None),  # TiCDC's bare bit: the width is not on the wire
        ("year(4)", None),
        ("decimal(10,2)", None),
    ],
)
def test_integer_columns_bound_what_decoders_accept(text: str, bounds: tuple[int, int] | None) -> None:
    assert integer_range(parse_type_text(text)) == bounds


def test_default_lengths_are_for_known_types_only() -> None:
    assert set(DEFAULT_LENGTHS) <= set(MySQLType)
    assert DEFAULT_LENGTHS[MySQLType.BIGINT] == 20
