"""TiDB's textual value forms, value by value: what TiDB prints for each type, and what it reads back as.

Expected texts are TiDB's and Go's (``strconv.FormatFloat``, MyDecimal, MySQL TIME), not this module's output.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_core.errors import ConfigError
from cdc_core.textual import (
    UTC,
    TextFormError,
    at_scale,
    enum_index,
    enum_name,
    float32_value,
    format_date,
    format_datetime,
    format_decimal,
    format_float32,
    format_float64,
    format_float_es6,
    format_json,
    format_mysql_geometry,
    format_text,
    format_time,
    format_timestamp,
    format_vector,
    join_members,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_float,
    parse_int,
    parse_json,
    parse_mysql_geometry,
    parse_set_text,
    parse_text,
    parse_time,
    parse_timestamp,
    parse_vector,
    resolve_zone,
    set_bits,
    set_names,
    shortest_float32,
    split_members,
    to_float32,
    wkb_point,
    zone_name,
)
from cdc_core.types import DataType, MySQLType
from cdc_core.values import EnumIndex, Geometry, SetBits, ZeroTemporal

FLT_MAX = 3.4028234663852886e38
SHANGHAI = ZoneInfo("Asia/Shanghai")
COLOURS = DataType(mysql_type=MySQLType.ENUM, elements=("red", "green", "blue"))
XYZ = DataType(mysql_type=MySQLType.SET, elements=("x", "y", "z"))


# ---------------------------------------------------------------------------------------------- floats


def test_float32_rounding_and_its_range() -> None:
    assert to_float32(0.1) == 0.10000000149011612
    assert to_float32(-2.5) == -2.5
    assert to_float32(FLT_MAX) == FLT_MAX
    with pytest.raises(TextFormError, match="out of the FLOAT range"):
        to_float32(3.5e38)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (9.9, "9.9"),
        (16777217.0, "16777216"),  # 2^24 + 1 is not a float32
        (1.5e-5, "1.5e-05"),
        (FLT_MAX, "3.4028235e+38"),  # 4 digits (3.403e+38) step over FLT_MAX: more digits are tried
        (-1.0, "-1"),
    ],
)
def test_shortest_float32_digits(value: float, text: str) -> None:
    assert shortest_float32(value) == text


def test_a_float_column_reads_as_its_shortest_digits() -> None:
    assert float32_value(9.899999618530273) == 9.9
    assert float32_value(0.1) == 0.1


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.1, "0.1"), (100.0, "100"), (1.5e-5, "0.000015"), (1e20, "100000000000000000000"), (-2.5, "-2.5"), (0.0, "0")],
)
def test_format_float32_is_go_f_minus_one_32(value: float, text: str) -> None:
    assert format_float32(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.1, "0.1"), (100.0, "100"), (1.5e-7, "0.00000015"), (1e21, "1000000000000000000000"), (-0.5, "-0.5")],
)
def test_format_float64_is_go_f_minus_one_64(value: float, text: str) -> None:
    assert format_float64(value) == text


@pytest.mark.parametrize(
    ("value", "kwargs", "text"),
    [
        (123.456, {}, "123.456"),
        (0.0, {}, "0"),
        (1e-6, {}, "0.000001"),  # the plain range starts at 1e-6
        (9.99e20, {}, "999000000000000000000"),
        (1e21, {}, "1e+21"),  # and ends before 1e21
        (-1e21, {}, "-1e+21"),
        (1e-7, {}, "1e-7"),
        (1.5e-7, {}, "1.5e-7"),
        (1.25e22, {}, "1.25e+22"),
        (1e-7, {"exponent_digits": 2}, "1e-07"),  # json-iterator keeps strconv's two exponent digits
        (1e21, {"exponent_digits": 2}, "1e+21"),
        (0.10000000149011612, {"bits": 32}, "0.1"),  # a FLOAT's value: its float32 digits
        (0.10000000149011612, {}, "0.10000000149011612"),  # a DOUBLE's: every digit
        (3e-7, {"bits": 32}, "3e-7"),
    ],
)
def test_format_float_es6(value: float, kwargs: dict[str, Any], text: str) -> None:
    assert format_float_es6(value, **kwargs) == text


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_have_no_text(value: float) -> None:
    with pytest.raises(TextFormError, match="non-finite"):
        format_float_es6(value)
    with pytest.raises(TextFormError, match="non-finite"):
        format_float64(value)


# --------------------------------------------------------------------------------------------- decimal


@pytest.mark.parametrize(
    ("value", "scale", "text"),
    [
        ("12.34", 4, "12.3400"),
        ("-0.5", 2, "-0.50"),
        ("7", 0, "7"),
        ("2.5", 0, "2"),  # half-even, as MyDecimal's round
        ("0.00000001", 8, None),  # plain digits, never Python's 1E-8
        ("12345678901234567890123456789012345.123456789012345678901234567890", 30, None),  # DECIMAL(65,30)
    ],
)
def test_format_decimal_prints_exactly_scale_digits(value: str, scale: int, text: str | None) -> None:
    assert format_decimal(Decimal(value), scale) == (text or value)


def test_format_decimal_beyond_100_digits_is_an_error() -> None:
    with pytest.raises(TextFormError, match="does not fit scale 30"):
        format_decimal(Decimal("1e80"), 30)


def test_parse_decimal() -> None:
    parsed = parse_decimal(" 12.340 ")
    assert parsed == Decimal("12.34") and parsed.as_tuple().exponent == -3  # digits as written
    for bad in ("abc", ""):
        with pytest.raises(TextFormError, match=r"^not a decimal: "):
            parse_decimal(bad)
    for bad in ("NaN", "Infinity", "-inf"):
        with pytest.raises(TextFormError, match=r"^not a finite decimal: "):
            parse_decimal(bad)


@pytest.mark.parametrize(
    ("value", "scale", "text"),
    [
        ("12.34", 4, "12.3400"),
        ("7", 4, "7.0000"),
        ("-3", 2, "-3.00"),
        ("1.2345", 4, "1.2345"),
        ("1.23456", 4, "1.23456"),  # more digits than the scale: kept as written, never rounded
        ("12.34", None, "12.34"),
        ("5", 0, "5"),
    ],
)
def test_at_scale_pads_to_the_declared_scale(value: str, scale: int | None, text: str) -> None:
    assert str(at_scale(Decimal(value), scale)) == text


def test_at_scale_beyond_100_digits_is_an_error() -> None:
    with pytest.raises(TextFormError, match="does not fit scale 30"):
        at_scale(Decimal("1e80"), 30)
    assert str(at_scale(Decimal("1" + "0" * 64), 30)) == "1" + "0" * 64 + "." + "0" * 30  # 95 digits fit


# -------------------------------------------------------------------------------------------- temporal


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2024-02-29", dt.date(2024, 2, 29)),
        ("0001-01-01", dt.date(1, 1, 1)),
        ("0000-00-00", ZeroTemporal("0000-00-00")),
        ("2024-00-10", ZeroTemporal("2024-00-10")),
        ("2024-01-00", ZeroTemporal("2024-01-00")),
        ("0000-01-01", ZeroTemporal("0000-01-01")),
    ],
)
def test_parse_date(text: str, value: object) -> None:
    assert parse_date(text) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2023-02-29", "not a valid DATE: '2023-02-29'"),
        ("2024-13-01", "not a valid DATE"),
        ("2024-2-29", "not a DATE: '2024-2-29'"),
        ("2024-02-29 00:00:00", "not a DATE"),
        ("", "not a DATE"),
        ("2024-02-\u0662\u0669", "not a DATE: '2024-02-\u0662\u0669'"),  # Arabic-Indic digits, which int() reads
        ("\uff12\uff10\uff12\uff14-02-29", "not a DATE"),  # fullwidth digits
        ("2024-02-29\n", "not a DATE"),
    ],
)
def test_parse_date_rejects(text: str, reason: str) -> None:
    with pytest.raises(TextFormError, match=f"^{reason}"):
        parse_date(text)


def test_format_date() -> None:
    assert format_date(dt.date(5, 1, 2)) == "0005-01-02"
    assert format_date(ZeroTemporal("2024-00-10")) == "2024-00-10"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2024-02-29 01:02:03.456789", dt.datetime(2024, 2, 29, 1, 2, 3, 456789)),
        ("2024-02-29T01:02:03", dt.datetime(2024, 2, 29, 1, 2, 3)),
        ("2024-02-29 01:02:03.5", dt.datetime(2024, 2, 29, 1, 2, 3, 500000)),
        ("2024-02-29 01:02:03.000001", dt.datetime(2024, 2, 29, 1, 2, 3, 1)),
        ("2024-02-29 01:02:03.123456789", dt.datetime(2024, 2, 29, 1, 2, 3, 123456)),  # beyond 6: truncated
        ("0000-00-00 00:00:00", ZeroTemporal("0000-00-00 00:00:00")),
        ("2021-00-15 10:00:00", ZeroTemporal("2021-00-15 10:00:00")),
        ("2021-03-00 10:00:00", ZeroTemporal("2021-03-00 10:00:00")),
        ("0000-03-01 10:00:00", ZeroTemporal("0000-03-01 10:00:00")),
    ],
)
def test_parse_datetime(text: str, value: object) -> None:
    assert parse_datetime(text) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2024-02-29 24:00:00", "not a valid DATETIME: '2024-02-29 24:00:00'"),
        ("2024-02-30 00:00:00", "not a valid DATETIME"),
        ("2024-02-29", "not a DATETIME: '2024-02-29'"),
        ("2024-02-29 1:02:03", "not a DATETIME"),
        ("2024-02-29 01:02:\u0660\u0663", "not a DATETIME: '2024-02-29 01:02:\u0660\u0663'"),
        ("2024-02-29 01:02:03.\u0665", "not a DATETIME"),
        ("2024-02-29 01:02:03\n", "not a DATETIME"),
    ],
)
def test_parse_datetime_rejects(text: str, reason: str) -> None:
    with pytest.raises(TextFormError, match=f"^{reason}"):
        parse_datetime(text)


@pytest.mark.parametrize(
    ("value", "fsp", "text"),
    [
        (dt.datetime(2024, 2, 29, 1, 2, 3, 456789), 3, "2024-02-29 01:02:03.456"),
        (dt.datetime(2024, 2, 29, 1, 2, 3, 456789), 0, "2024-02-29 01:02:03"),
        (dt.datetime(2024, 2, 29, 1, 2, 3, 7), 6, "2024-02-29 01:02:03.000007"),
        (dt.datetime(5, 1, 2, 3, 4, 5), 1, "0005-01-02 03:04:05.0"),
        (ZeroTemporal("0000-00-00"), 2, "0000-00-00 00:00:00.00"),
        (ZeroTemporal("0000-00-00 00:00:00"), 0, "0000-00-00 00:00:00"),
        (ZeroTemporal("0000-00-00 00:00:00.000"), 3, "0000-00-00 00:00:00.000"),
    ],
)
def test_format_datetime(value: Any, fsp: int, text: str) -> None:
    assert format_datetime(value, fsp) == text


def test_timestamps_are_local_time_in_the_server_zone() -> None:
    assert parse_timestamp("2024-01-02 00:00:00.5", SHANGHAI) == dt.datetime(2024, 1, 1, 16, 0, 0, 500000, tzinfo=UTC)
    assert parse_timestamp("2024-01-02 00:00:00", SHANGHAI).tzinfo is SHANGHAI  # type: ignore[union-attr]
    assert parse_timestamp("0000-00-00 00:00:00", SHANGHAI) == ZeroTemporal("0000-00-00 00:00:00")
    moment = dt.datetime(2024, 1, 1, 16, 0, 0, 250000, tzinfo=UTC)
    assert format_timestamp(moment, 2, SHANGHAI) == "2024-01-02 00:00:00.25"
    assert format_timestamp(ZeroTemporal("0000-00-00"), 1, SHANGHAI) == "0000-00-00 00:00:00.0"
    with pytest.raises(TextFormError, match="has no time zone"):
        format_timestamp(dt.datetime(2024, 1, 1), 0, SHANGHAI)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12:34:56", dt.timedelta(hours=12, minutes=34, seconds=56)),
        ("-838:59:59.000000", -dt.timedelta(hours=838, minutes=59, seconds=59)),
        ("838:59:59", dt.timedelta(hours=838, minutes=59, seconds=59)),
        ("-838:00:00", -dt.timedelta(hours=838)),
        ("00:59:00", dt.timedelta(minutes=59)),
        ("00:00:59", dt.timedelta(seconds=59)),
        ("-00:00:01", dt.timedelta(seconds=-1)),
        (" 01:00:00.5 ", dt.timedelta(hours=1, microseconds=500000)),
        ("00:00:00.123456789", dt.timedelta(microseconds=123456)),
    ],
)
def test_parse_time(text: str, value: dt.timedelta) -> None:
    assert parse_time(text) == value


@pytest.mark.parametrize("text", ["1:2:3", "12:34", "1000:00:00", "12:34:56.", "x"])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(TextFormError, match="not a TIME"):
        parse_time(text)


@pytest.mark.parametrize(
    "text", ["12:60:00", "12:00:60", "10:00:75", "839:00:00", "-839:00:00", "999:59:59", "00:99:00", "-00:60:00.5"]
)
def test_parse_time_refuses_fields_out_of_range(text: str) -> None:
    """MySQL's TIME is -838:59:59 to 838:59:59: TiDB never prints a minute or second past 59."""
    with pytest.raises(TextFormError) as caught:
        parse_time(text)
    assert str(caught.value) == f"not a valid TIME: {text!r}"


@pytest.mark.parametrize(
    "text",
    [
        "\u0661\u0662:34:56",  # Arabic-Indic 12, which int() and str.isdigit() accept
        "12:\u0663\u0664:56",
        "12:34:\u0665\u0666",
        "12:34:56.\u0667",
        "\u0967\u0968:34:56",  # Devanagari
        "\uff11\uff12:34:56",  # fullwidth
    ],
)
def test_parse_time_refuses_non_ascii_digits(text: str) -> None:
    with pytest.raises(TextFormError) as caught:
        parse_time(text)
    assert str(caught.value) == f"not a TIME: {text!r}"


@pytest.mark.parametrize(
    ("value", "fsp", "text"),
    [
        (-dt.timedelta(hours=838, minutes=59, seconds=59), 0, "-838:59:59"),
        (dt.timedelta(microseconds=-1), 6, "-00:00:00.000001"),
        (dt.timedelta(hours=1, microseconds=500000), 1, "01:00:00.5"),
        (dt.timedelta(hours=100, minutes=2, seconds=3, microseconds=40000), 2, "100:02:03.04"),
        (dt.timedelta(0), 0, "00:00:00"),
    ],
)
def test_format_time(value: dt.timedelta, fsp: int, text: str) -> None:
    assert format_time(value, fsp) == text


# ---------------------------------------------------------------------------------------------- zones


@pytest.fixture
def host_in_shanghai(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This host's zone set to Asia/Shanghai (a test in UTC could not tell the host zone from the fallback)."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_resolve_zone_follows_ticdc_tz(host_in_shanghai: None) -> None:
    moment = dt.datetime(2024, 6, 1, 12)
    for name in (None, "", "system", " Local "):
        assert resolve_zone(name).utcoffset(moment) == dt.timedelta(hours=8)
    assert resolve_zone("utc") is UTC
    assert resolve_zone("Z") is UTC
    assert resolve_zone("+08:00") == dt.timezone(dt.timedelta(hours=8))
    assert resolve_zone("-0530") == dt.timezone(-dt.timedelta(hours=5, minutes=30))
    assert resolve_zone("Asia/Shanghai") == SHANGHAI
    for bad in ("Mars/Olympus", "../etc/passwd"):
        with pytest.raises(ConfigError, match="unknown time zone"):
            resolve_zone(bad)


def test_zone_names_as_simple_writes_them() -> None:
    assert zone_name(SHANGHAI) == "Asia/Shanghai"
    assert zone_name(UTC) == "UTC"
    assert zone_name(dt.timezone(dt.timedelta(hours=8))) == "UTC+08:00"


# ---------------------------------------------------------------------------------------- enum and set


def test_enum_index_and_name() -> None:
    assert [enum_name(i, COLOURS) for i in (0, 1, 3)] == ["", "red", "blue"]
    assert enum_name(4, COLOURS) == EnumIndex(4)  # beyond the members: kept as the index
    assert enum_name(1, DataType(mysql_type=MySQLType.ENUM)) == EnumIndex(1)  # members unknown
    assert [enum_index(v, COLOURS) for v in ("", "red", "blue", EnumIndex(9))] == [0, 1, 3, 9]
    with pytest.raises(TextFormError, match="'purple' is not a member"):
        enum_index("purple", COLOURS)


def test_set_bits_and_names() -> None:
    assert set_names(0b101, XYZ) == ("x", "z")
    assert set_names(0, XYZ) == ()
    assert set_names(0b111, XYZ) == ("x", "y", "z")
    assert set_names(0b1000, XYZ) == SetBits(8)  # a bit beyond the members
    assert set_names(3, DataType(mysql_type=MySQLType.SET)) == SetBits(3)
    assert set_bits(("x", "z"), XYZ) == 5
    assert set_bits(["y"], XYZ) == 2
    assert set_bits(SetBits(9), XYZ) == 9
    with pytest.raises(TextFormError, match="'q' is not a member"):
        set_bits(["q"], XYZ)


def test_set_text_reads_back_in_declaration_order() -> None:
    assert parse_set_text("z,x", XYZ) == ("x", "z")
    assert parse_set_text("", XYZ) == ()
    assert parse_set_text("b,a", DataType(mysql_type=MySQLType.SET)) == ("b", "a")  # members unknown: as written


@pytest.mark.parametrize(
    ("members", "allowed"),
    [
        (("a,b", "c"), "a\\,b,c"),
        (("a,",), "a\\,"),
        (("a", "", "b"), "a,,b"),
        (("x",), "x"),
        (("a\\b",), "a\\b"),
        (("a\\",), "a\\"),
    ],
)
def test_member_lists_escape_commas(members: tuple[str, ...], allowed: str) -> None:
    assert join_members(members) == allowed
    assert split_members(allowed) == members


def test_no_members() -> None:
    assert split_members("") == ()
    assert join_members(()) == ""


# ------------------------------------------------------------------------------- json, vector, geometry


def test_json_text_is_tidbs() -> None:
    assert format_json({"a": [1, "é", None], "b": {"c": True}}) == '{"a": [1, "é", null], "b": {"c": true}}'
    assert parse_json('{"a":[1,2.5]}') == {"a": [1, 2.5]}
    with pytest.raises(TextFormError, match="not a JSON document"):
        parse_json("{")


def test_vectors() -> None:
    assert format_vector([1.5, 0.1, -2.0]) == "[1.5,0.1,-2]"
    assert parse_vector(" [1.5, 0.1] ") == [1.5, 0.10000000149011612]
    assert parse_vector("[]") == []
    assert parse_vector("[ ]") == []
    for bad in ("1,2", "[1,2", "1,2]", "[1.5", "1.5]", "[a]", "[1,,2]"):
        with pytest.raises(TextFormError, match="not a VECTOR"):
            parse_vector(bad)


POINT = bytes.fromhex("0101000000" + "000000000000f03f" + "0000000000000040")  # WKB little-endian POINT(1 2)


def test_wkb_point() -> None:
    assert wkb_point(1.0, 2.0) == POINT


def test_mysql_geometry_is_srid_then_wkb() -> None:
    raw = (4326).to_bytes(4, "little") + POINT
    assert parse_mysql_geometry(raw) == Geometry(wkb=POINT, srid=4326)
    assert format_mysql_geometry(Geometry(wkb=POINT, srid=4326)) == raw
    assert format_mysql_geometry(Geometry(wkb=POINT, srid=None)) == bytes(4) + POINT
    big_endian = bytes(4) + b"\x00" + POINT[1:]
    assert parse_mysql_geometry(big_endian) == Geometry(wkb=big_endian[4:], srid=None)  # SRID 0: unset
    assert parse_mysql_geometry(raw[:9]).wkb == POINT[:5]  # the shortest accepted: SRID, byte order, type
    with pytest.raises(TextFormError, match="at least 9 bytes, got 8"):
        parse_mysql_geometry(raw[:8])
    with pytest.raises(TextFormError, match="byte order marker 2"):
        parse_mysql_geometry(bytes(4) + b"\x02" + POINT[1:])
    with pytest.raises(TextFormError, match="expected a Geometry, got bytes"):
        format_mysql_geometry(POINT)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------- dispatchers


def test_int_and_float_text() -> None:
    assert parse_int(" -42 ") == -42
    assert parse_int("18446744073709551615") == 18446744073709551615
    assert parse_float("1e3") == 1000.0
    for bad in ("4.2", "", "x"):
        with pytest.raises(TextFormError, match="not an integer"):
            parse_int(bad)
    with pytest.raises(TextFormError, match="not a number"):
        parse_float("x")


@pytest.mark.parametrize(
    "text",
    [
        "1_000",  # a digit group
        "\u0661\u0662",  # Arabic-Indic 12
        "\uff11\uff12",  # fullwidth 12
        "-\u0967",  # Devanagari 1
        "12\u2003",  # an em space, which str.strip() removes
    ],
)
def test_int_and_float_text_are_what_tidb_prints(text: str) -> None:
    """int() and float() read these; TiDB never prints them, so every protocol reading text refuses them."""
    with pytest.raises(TextFormError) as caught:
        parse_int(text)
    assert str(caught.value) == f"not an integer: {text!r}"
    with pytest.raises(TextFormError) as caught:
        parse_float(text + ".5" if text.isdigit() else text)
    assert str(caught.value).startswith("not a number: ")
    data_type = T(MySQLType.INT)
    with pytest.raises(TextFormError):
        parse_text(text, data_type)
    with pytest.raises(TextFormError):
        parse_text("1_000.25", T(MySQLType.DOUBLE))


def T(mysql_type: MySQLType, **kwargs: Any) -> DataType:
    return DataType(mysql_type=mysql_type, **kwargs)


# (type, value, TiDB text): ENUM prints its index, SET its bitmask, BIT its unsigned value
TEXTS: list[tuple[DataType, object, str]] = [
    (T(MySQLType.INT), -7, "-7"),
    (T(MySQLType.BIGINT, unsigned=True), 18446744073709551615, "18446744073709551615"),
    (T(MySQLType.YEAR), 2024, "2024"),
    (T(MySQLType.BIT, length=12), 4095, "4095"),
    (T(MySQLType.FLOAT), 9.9, "9.9"),
    (T(MySQLType.DOUBLE), 0.1, "0.1"),
    (T(MySQLType.DECIMAL, length=10, decimal=4), Decimal("12.3400"), "12.3400"),
    (T(MySQLType.DATE), dt.date(2024, 2, 29), "2024-02-29"),
    (T(MySQLType.DATETIME, decimal=3), dt.datetime(2024, 2, 29, 1, 2, 3, 456000), "2024-02-29 01:02:03.456"),
    (T(MySQLType.TIMESTAMP, decimal=1), dt.datetime(2024, 1, 1, 16, 0, 0, 500000, tzinfo=UTC), "2024-01-02 00:00:00.5"),
    (T(MySQLType.TIME, decimal=2), dt.timedelta(hours=-1, microseconds=-10000), "-01:00:00.01"),
    (COLOURS, "blue", "3"),
    (XYZ, ("x", "z"), "5"),
    (T(MySQLType.JSON), {"k": [1, "two"]}, '{"k": [1, "two"]}'),
    (T(MySQLType.VECTOR), [1.5, -2.0], "[1.5,-2]"),
    (T(MySQLType.VARCHAR, length=20), "héllo", "héllo"),
]


@pytest.mark.parametrize(("data_type", "value", "text"), TEXTS, ids=[t.type_text() for t, _, _ in TEXTS])
def test_format_and_parse_text(data_type: DataType, value: Any, text: str) -> None:
    assert format_text(value, data_type, SHANGHAI) == text
    assert parse_text(text, data_type, SHANGHAI) == value


def test_format_text_rejects_values_of_another_type() -> None:
    with pytest.raises(TextFormError, match="str value 'x' does not fit int"):
        format_text("x", T(MySQLType.INT))
    with pytest.raises(TextFormError, match="expected text, got int"):
        format_text(5, T(MySQLType.VARCHAR, length=5))
    with pytest.raises(TextFormError, match="'purple' is not a member"):  # a TextFormError passes unchanged
        format_text("purple", COLOURS)
    with pytest.raises(TextFormError, match="has no plain text form"):
        format_text(b"x", T(MySQLType.BLOB))


def test_parse_text_defaults_to_utc_and_refuses_binary() -> None:
    assert parse_text("2024-01-02 00:00:00", T(MySQLType.TIMESTAMP)) == dt.datetime(2024, 1, 2, tzinfo=UTC)
    assert format_text(dt.datetime(2024, 1, 2, tzinfo=SHANGHAI), T(MySQLType.TIMESTAMP)) == "2024-01-01 16:00:00"
    assert parse_text("2", COLOURS) == "green"
    assert parse_text("6", XYZ) == ("y", "z")
    assert parse_text("9.9", T(MySQLType.FLOAT)) == 9.9
    with pytest.raises(TextFormError, match="has no plain text form"):
        parse_text("x", T(MySQLType.BLOB))
    with pytest.raises(TextFormError, match="has no plain text form"):
        parse_text("x", T(MySQLType.GEOMETRY))
