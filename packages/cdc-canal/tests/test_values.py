"""Canal-JSON wire strings to typed values, type by type: the ranges, the shapes the fast paths must refuse
(Python's ISO parser accepts zones, week dates and any separator; MySQL's text has none of them), and the cache
of parsed types."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from cdc_canal.inbound import TypeCache, TypeResolutionError, make_parser, resolve_type
from cdc_core.textual import UTC, TextFormError
from cdc_core.types import DataType, MySQLType
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal

SHANGHAI = ZoneInfo("Asia/Shanghai")


def parse(mysql_type: str, text: str, zone: dt.tzinfo = UTC) -> object:
    return make_parser(resolve_type(mysql_type, None), zone)(text)


@pytest.mark.parametrize(
    ("mysql_type", "low", "high"),
    [
        ("tinyint", -128, 127),
        ("tinyint unsigned", 0, 255),
        ("mediumint", -(1 << 23), (1 << 23) - 1),
        ("int(10) unsigned", 0, (1 << 32) - 1),
        ("bigint", -(1 << 63), (1 << 63) - 1),
        ("bit(3)", 0, 7),
        ("bit(1)", 0, 1),
    ],
)
def test_integers_within_the_column_range(mysql_type: str, low: int, high: int) -> None:
    assert parse(mysql_type, str(low)) == low
    assert parse(mysql_type, str(high)) == high
    for outside in (low - 1, high + 1):
        with pytest.raises(TextFormError, match=rf"^{outside} is out of range \[{low}, {high}\]$"):
            parse(mysql_type, str(outside))


def test_bare_bit_and_year_take_any_integer() -> None:
    assert parse("bit", "18446744073709551615") == 18446744073709551615  # TiCDC's "bit": no width on the wire
    assert parse("year", "2155") == 2155


@pytest.mark.parametrize("text", ["x5", "-a5", "5-", "-", "", "1_000", " 1", "١٢"])
def test_integer_text_is_ascii_digits_with_an_optional_minus(text: str) -> None:
    with pytest.raises(TextFormError, match=r"^not an integer: "):
        parse("int", text)


def test_negative_integers() -> None:
    assert parse("int", "-5") == -5
    assert parse("bigint", "-0") == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2024-02-29 01:02:03", dt.datetime(2024, 2, 29, 1, 2, 3)),
        ("2024-02-29 01:02:03.5", dt.datetime(2024, 2, 29, 1, 2, 3, 500000)),
        ("2024-02-29 01:02:03.123456", dt.datetime(2024, 2, 29, 1, 2, 3, 123456)),
        ("0000-00-00 00:00:00", ZeroTemporal("0000-00-00 00:00:00")),
        ("2024-02-30 00:00:00", None),
    ],
)
def test_datetimes(text: str, value: object) -> None:
    if value is None:
        with pytest.raises(TextFormError, match="not a valid DATETIME"):
            parse("datetime", text)
    else:
        assert parse("datetime", text) == value


@pytest.mark.parametrize(
    "text",
    [
        "2024-02-29x01:02:03",  # any separator
        "2024-02-29 01:02:03+0800",  # a zone
        "2024-02-29 01:02:03Z",
        "2024-02-29 01:02:03,5",  # a comma fraction
        "2024-02-29 01:02:03.",
        "2024-02-29 01:02:03.12a",
        "2024/02/29 01:02:03",
        "2024-02-29 01-02-03",
        "2024-02-29 01:02-03",
        "+2024-02-29 01:02:03",
    ],
)
def test_datetime_shapes_mysql_never_prints_are_refused(text: str) -> None:
    with pytest.raises(TextFormError, match="not a DATETIME"):
        parse("datetime", text)
    with pytest.raises(TextFormError, match="not a DATETIME"):
        parse("timestamp", text, SHANGHAI)


def test_timestamps_are_local_time_in_the_decoder_zone() -> None:
    value = parse("timestamp", "2024-01-02 00:00:00.25", SHANGHAI)
    assert value == dt.datetime(2024, 1, 1, 16, 0, 0, 250000, tzinfo=UTC)
    assert value.tzinfo is SHANGHAI  # type: ignore[attr-defined]
    assert parse("timestamp", "0000-00-00 00:00:00", SHANGHAI) == ZeroTemporal("0000-00-00 00:00:00")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2024-02-29", dt.date(2024, 2, 29)),
        ("0000-00-00", ZeroTemporal("0000-00-00")),
        ("2024-00-10", ZeroTemporal("2024-00-10")),
    ],
)
def test_dates(text: str, value: object) -> None:
    assert parse("date", text) == value


@pytest.mark.parametrize("text", ["2024-W09-4", "20240229", "2024/02/29", "2024-02-2Z", "02024-02-29", "2024-02-29 "])
def test_date_shapes_mysql_never_prints_are_refused(text: str) -> None:
    with pytest.raises(TextFormError, match="not a DATE"):
        parse("date", text)


def test_enums() -> None:
    colours = "enum('red','green','blue')"
    assert [parse(colours, t) for t in ("1", "3", "0", "", "green")] == ["red", "blue", "", "", "green"]
    with pytest.raises(TextFormError, match=r"^enum index 4 is out of range for 3 members$"):
        parse(colours, "4")
    with pytest.raises(TextFormError, match=r"^'purple' is neither an enum index nor a member of"):
        parse(colours, "purple")
    assert parse("enum", "2") == EnumIndex(2)  # TiCDC's bare "enum": members unknown
    assert parse("enum", "0") == ""


def test_sets() -> None:
    xyz = "set('x','y','z')"
    assert parse(xyz, "5") == ("x", "z")
    assert parse(xyz, "z,x") == ("x", "z")  # official Canal prints member names
    with pytest.raises(TextFormError, match=r"^set bits 8 name more than 3 members$"):
        parse(xyz, "8")
    assert parse("set", "6") == SetBits(6)
    with pytest.raises(TextFormError, match=r"^set value 'x,y' is not a bitmask and the members are unknown$"):
        parse("set", "x,y")


def test_text_binary_json_and_arrays() -> None:
    assert parse("varchar(10)", "héllo") == "héllo"
    assert make_parser(resolve_type("varbinary(4)", None), UTC)("\x00ÿ") == b"\x00\xff"
    with pytest.raises(TextFormError, match="above U\\+00FF at 1"):
        make_parser(resolve_type("blob", None), UTC)("aĀ")
    assert parse("json", '{"n": 12345678901234567890123}') == {"n": 12345678901234567890123}
    assert parse("json", '{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    with pytest.raises(TextFormError, match="not a JSON document"):
        parse("json", "{")
    with pytest.raises(TextFormError, match=r"^canal-json has no ARRAY columns \(MySQL has no array type\)$"):
        make_parser(DataType(mysql_type=MySQLType.ARRAY), UTC)("[1]")


@pytest.mark.parametrize(
    ("mysql_type", "expected"),
    [
        ("varchar(20) CHARACTER SET utf8mb4", DataType(mysql_type=MySQLType.VARCHAR, length=20)),
        ("text charset latin1", DataType(mysql_type=MySQLType.TEXT)),
        ("varchar(10) collate utf8mb4_bin", DataType(mysql_type=MySQLType.VARCHAR, length=10)),
        ("enum('a)b','x collate y')", DataType(mysql_type=MySQLType.ENUM, elements=("a)b", "x collate y"))),
    ],
)
def test_charset_and_collation_clauses_are_cut_after_the_parameters(mysql_type: str, expected: DataType) -> None:
    assert resolve_type(mysql_type, None) == expected


def test_resolve_type_errors_name_what_was_sent() -> None:
    with pytest.raises(TypeResolutionError, match=r"^mysqlType must be a string, got int$"):
        resolve_type(5, None)


def test_the_type_cache_parses_each_type_once_and_is_bounded() -> None:
    cache = TypeCache(SHANGHAI)
    data_type, parser = cache.lookup("timestamp", 93)
    assert data_type == DataType(mysql_type=MySQLType.TIMESTAMP)
    value = parser("2024-01-02 00:00:00")
    assert isinstance(value, dt.datetime) and value.tzinfo is SHANGHAI
    assert cache.lookup("timestamp", 93)[1] is parser
    assert cache.lookup("timestamp", True)[1] is cache.lookup("timestamp", None)[1]  # a bool is no sqlType code
    assert cache.lookup("varchar(5)", [12])[0] == DataType(mysql_type=MySQLType.VARCHAR, length=5)  # nor a list
    assert cache.lookup(None, None)[0] == DataType(mysql_type=MySQLType.LONGTEXT)
    bounded = TypeCache(UTC)  # each tinyint(n) has its own range parser: its identity shows whether it was kept
    for width in range(1, 4097):
        bounded.lookup(f"tinyint({width})", None)
    assert bounded.lookup("tinyint(4096)", None)[1] is bounded.lookup("tinyint(4096)", None)[1]
    assert bounded.lookup("tinyint(4097)", None)[1] is not bounded.lookup("tinyint(4097)", None)[1]  # full
