"""Typed values to Avro datums and back, column by column, in TiCDC's handling modes (no registry needed).

Expected datums are what TiCDC's Avro encoder writes: decimals as minimal two's-complement unscaled bytes or
TiDB's text, BIGINT UNSIGNED as a long (two's complement) or text, BIT as trimmed big-endian bytes, ENUM/SET as
member names, temporal values as TiDB's text with exactly fsp fraction digits.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_avro.datum import bit_bytes, decimal_bytes, reader_for, unscaled_decimal, writer_for
from cdc_avro.tidbtypes import BigintUnsignedMode, DecimalMode
from cdc_core.textual import UTC, TextFormError, fraction_digits
from cdc_core.types import DataType, MySQLType
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal, own_fsp

SHANGHAI = ZoneInfo("Asia/Shanghai")
PRECISE, STRING = DecimalMode.PRECISE, DecimalMode.STRING
LONG, TEXT = BigintUnsignedMode.LONG, BigintUnsignedMode.STRING
COLOURS = DataType(mysql_type=MySQLType.ENUM, elements=("red", "green", "blue"))
XYZ = DataType(mysql_type=MySQLType.SET, elements=("x", "y", "z"))
COMMAS = DataType(mysql_type=MySQLType.SET, elements=("a,b", "c", "d,"))


def T(mysql_type: MySQLType, **kwargs: Any) -> DataType:
    return DataType(mysql_type=mysql_type, **kwargs)


def write(data_type: DataType, value: Any, decimal: DecimalMode = PRECISE, bigint: BigintUnsignedMode = LONG) -> Any:
    return writer_for(data_type, "", decimal, bigint, SHANGHAI)(value)


def read(data_type: DataType, datum: Any, primitive: str = "") -> Any:
    return reader_for(data_type, primitive, SHANGHAI)(datum)


@pytest.mark.parametrize(
    ("unscaled", "raw"),
    [(0, b"\x00"), (127, b"\x7f"), (128, b"\x00\x80"), (-1, b"\xff"), (-128, b"\x80"), (-129, b"\xff\x7f")],
)
def test_decimal_bytes_are_minimal_twos_complement(unscaled: int, raw: bytes) -> None:
    assert decimal_bytes(unscaled) == raw


def test_unscaled_decimals_and_bit_bytes() -> None:
    assert unscaled_decimal(Decimal("12.34"), 4) == 123400
    assert unscaled_decimal(Decimal("-0.5"), 1) == -5
    with pytest.raises(TextFormError, match=r"^1\.234 has more than 2 fraction digits$"):
        unscaled_decimal(Decimal("1.234"), 2)
    assert [bit_bytes(v) for v in (0, 1, 255, 256, 4095)] == [b"\x00", b"\x01", b"\xff", b"\x01\x00", b"\x0f\xff"]
    with pytest.raises(TextFormError, match=r"^BIT value -1 is negative$"):
        bit_bytes(-1)


# (type, value, datum as TiCDC writes it, writer modes, reader primitive)
ROUND_TRIPS: list[tuple[DataType, Any, Any, dict[str, Any], str]] = [
    (T(MySQLType.INT), -7, -7, {}, "int"),
    (T(MySQLType.YEAR), 2024, 2024, {}, "int"),
    (T(MySQLType.BIGINT, unsigned=True), (1 << 64) - 1, -1, {}, "long"),
    (T(MySQLType.BIGINT, unsigned=True), 1 << 63, -(1 << 63), {}, "long"),
    (T(MySQLType.BIGINT, unsigned=True), (1 << 63) - 1, (1 << 63) - 1, {}, "long"),
    (T(MySQLType.BIGINT, unsigned=True), (1 << 64) - 1, "18446744073709551615", {"bigint": TEXT}, "string"),
    (T(MySQLType.FLOAT), 9.9, 9.9, {}, "float"),
    (T(MySQLType.DOUBLE), 0.1, 0.1, {}, "double"),
    (T(MySQLType.DECIMAL, length=10, decimal=4), Decimal("12.3400"), b"\x01\xe2\x08", {}, "bytes"),
    (T(MySQLType.DECIMAL, length=10, decimal=4), Decimal("-1.5000"), "-1.5000", {"decimal": STRING}, "string"),
    (T(MySQLType.BIT, length=12), 4095, b"\x0f\xff", {}, "bytes"),
    (T(MySQLType.VARBINARY, length=4), b"\x00\xff", b"\x00\xff", {}, "bytes"),
    (T(MySQLType.VARCHAR, length=9), "héllo", "héllo", {}, "string"),
    (COLOURS, "green", "green", {}, "string"),
    (XYZ, ("x", "z"), "x,z", {}, "string"),
    (XYZ, (), "", {}, "string"),
    (T(MySQLType.DATE), dt.date(5, 1, 2), "0005-01-02", {}, "string"),
    (T(MySQLType.DATE), ZeroTemporal("0000-00-00"), "0000-00-00", {}, "string"),
    (T(MySQLType.DATETIME), dt.datetime(2024, 2, 29, 1, 2, 3), "2024-02-29 01:02:03", {}, "string"),
    (T(MySQLType.DATETIME, decimal=3), dt.datetime(2024, 2, 29, 1, 2, 3, 456000), "2024-02-29 01:02:03.456", {}, ""),
    (T(MySQLType.DATETIME, decimal=6), dt.datetime(2024, 2, 29, 1, 2, 3, 7), "2024-02-29 01:02:03.000007", {}, ""),
    (
        T(MySQLType.TIMESTAMP, decimal=2),
        dt.datetime(2024, 1, 1, 16, 0, 0, 250000, tzinfo=UTC),
        "2024-01-02 00:00:00.25",  # the server zone's local time
        {},
        "string",
    ),
    (T(MySQLType.TIME, decimal=1), dt.timedelta(hours=-838, minutes=-59, seconds=-59), "-838:59:59.0", {}, ""),
    (T(MySQLType.TIME), dt.timedelta(hours=12, minutes=3, seconds=4), "12:03:04", {}, ""),
    (T(MySQLType.JSON), {"k": [1, "two"]}, '{"k": [1, "two"]}', {}, "string"),
    (T(MySQLType.VECTOR), [1.5, -2.0], "[1.5,-2]", {}, "string"),
]


@pytest.mark.parametrize(
    ("data_type", "value", "datum", "modes", "primitive"),
    ROUND_TRIPS,
    ids=[f"{t.type_text()}-{i}" for i, (t, *_) in enumerate(ROUND_TRIPS)],
)
def test_values_to_datums_and_back(
    data_type: DataType, value: Any, datum: Any, modes: dict[str, Any], primitive: str
) -> None:
    assert write(data_type, value, **modes) == datum
    back = read(data_type, Decimal("12.34") if datum == b"\x01\xe2\x08" else datum, primitive)
    assert back == value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        assert back.tzinfo is SHANGHAI


def test_enum_and_set_writers_take_indexes_and_refuse_non_members() -> None:
    assert write(COLOURS, EnumIndex(3)) == "blue"
    assert write(XYZ, SetBits(0b110)) == "y,z"
    assert write(XYZ, ["x", "y"]) == "x,y"
    for bad in ("purple", EnumIndex(0), EnumIndex(9), 1):
        with pytest.raises(TextFormError, match="is not a member of enum"):
            write(COLOURS, bad)
    for bad_set in (("q",), SetBits(8), "x"):
        with pytest.raises(TextFormError, match="is not a subset of set"):
            write(XYZ, bad_set)


def test_set_members_with_commas_are_matched_in_declared_order() -> None:
    assert read(COMMAS, "a,b,c") == ("a,b", "c")
    assert read(COMMAS, "c,d,") == ("c", "d,")
    assert read(COMMAS, "a,b") == ("a,b",)
    assert read(XYZ, "z,x") == ("z", "x")  # plain members: as written
    with pytest.raises(TextFormError, match="is not a subset of set"):
        read(COMMAS, "a,b,q")
    with pytest.raises(TextFormError, match="is not a subset of set"):
        read(COMMAS, "c,a,b")  # out of declared order


def test_writers_refuse_values_of_another_type() -> None:
    cases: list[tuple[DataType, Any, str]] = [
        (T(MySQLType.INT), True, "expected an integer, got bool"),
        (T(MySQLType.INT), "1", "expected an integer, got str"),
        (T(MySQLType.BIGINT, unsigned=True), -1, "-1 is out of the BIGINT UNSIGNED range"),
        (T(MySQLType.BIGINT, unsigned=True), 1 << 64, "is out of the BIGINT UNSIGNED range"),
        (T(MySQLType.DOUBLE), "1.5", "expected a number, got str"),
        (T(MySQLType.FLOAT), False, "expected a number, got bool"),
        (T(MySQLType.VARBINARY), "ab", "expected bytes, got str"),
        (T(MySQLType.VARCHAR), b"ab", "expected text, got bytes"),
    ]
    for data_type, value, reason in cases:
        with pytest.raises(TextFormError, match=reason):
            write(data_type, value)
    assert write(T(MySQLType.DOUBLE), Decimal("2.5")) == 2.5
    assert write(T(MySQLType.DOUBLE), 3) == 3.0
    assert write(T(MySQLType.VARBINARY), bytearray(b"\x01")) == b"\x01"


def test_temporal_writers_fall_back_to_tidb_text() -> None:
    assert write(T(MySQLType.DATETIME, decimal=2), ZeroTemporal("0000-00-00")) == "0000-00-00 00:00:00.00"
    assert write(T(MySQLType.TIMESTAMP), ZeroTemporal("0000-00-00 00:00:00")) == "0000-00-00 00:00:00"
    with pytest.raises(TextFormError, match="has no time zone"):
        write(T(MySQLType.TIMESTAMP), dt.datetime(2024, 1, 1))
    # an aware value in a DATETIME column: TiDB's text of it (the fast path is for naive values only)
    with pytest.raises(TextFormError):
        write(T(MySQLType.DATE), "2024-01-01")


@pytest.mark.parametrize(
    ("data_type", "datum", "value"),
    [
        (T(MySQLType.DATE), "2024-02-29", dt.date(2024, 2, 29)),
        (T(MySQLType.DATE), "2024-00-10", ZeroTemporal("2024-00-10")),
        # the fsp is not known: a zero date keeps its whole text, to be written back as read
        (T(MySQLType.DATETIME), "0000-00-00 00:00:00.000", ZeroTemporal("0000-00-00 00:00:00.000")),
        (T(MySQLType.DATETIME), "0000-00-00 00:00:00.100", ZeroTemporal("0000-00-00 00:00:00.100")),
        (T(MySQLType.DATETIME), "2024-02-29T01:02:03", dt.datetime(2024, 2, 29, 1, 2, 3)),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03.5", dt.datetime(2024, 2, 29, 1, 2, 3, 500000)),
        (T(MySQLType.TIMESTAMP), "0000-00-00 00:00:00.00", ZeroTemporal("0000-00-00 00:00:00.00")),
        (T(MySQLType.TIME), "-00:00:01.5", -dt.timedelta(seconds=1, microseconds=500000)),
        (T(MySQLType.TIME), "100:00:00.123456789", dt.timedelta(hours=100, microseconds=123456)),
        (T(MySQLType.TIME), "1:02:03", dt.timedelta(hours=1, minutes=2, seconds=3)),
        (T(MySQLType.BIT, length=64), b"\xff" * 8, (1 << 64) - 1),
        (T(MySQLType.DECIMAL, length=10, decimal=4), "12.34", Decimal("12.3400")),
    ],
)
def test_readers(data_type: DataType, datum: Any, value: Any) -> None:
    assert read(data_type, datum, "string" if isinstance(datum, str) else "bytes") == value


@pytest.mark.parametrize(
    ("data_type", "datum"),
    [
        (T(MySQLType.DATE), "2024-02-30"),
        (T(MySQLType.DATE), "2024-W09-4"),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03+08:00"),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03Z"),
        (T(MySQLType.TIMESTAMP), "2024-02-29 01:02:03,5"),
        (T(MySQLType.TIME), "12:3:04"),
        (T(MySQLType.TIME), "1234:00:00"),
        (T(MySQLType.TIME), "12:03:04."),
        (T(MySQLType.TIME), "12:03:04.1234567890"),
        (T(MySQLType.TIME), "12:03"),
        (T(MySQLType.DECIMAL, length=10, decimal=4), 12.34),
    ],
)
def test_readers_refuse_what_tidb_never_writes(data_type: DataType, datum: Any) -> None:
    with pytest.raises(TextFormError):
        read(data_type, datum, "bytes" if isinstance(datum, float) else "string")


def test_edges_of_the_integer_decimal_and_datetime_forms() -> None:
    assert write(T(MySQLType.BIGINT, unsigned=True), 0) == 0
    assert read(T(MySQLType.BIGINT, unsigned=True), 0, "long") == 0
    assert write(T(MySQLType.BIGINT), -5) == -5  # signed: no two's-complement reinterpretation
    assert read(T(MySQLType.BIGINT), -5, "long") == -5
    wide = Decimal("1234567890123456789012345678901234567890.12")  # 42 digits: past the default 28-digit context
    assert unscaled_decimal(wide, 2) == 123456789012345678901234567890123456789012
    moment = dt.datetime(2024, 2, 29, 1, 2, 3)  # no microseconds: the fraction is still printed, fsp digits
    assert write(T(MySQLType.DATETIME, decimal=3), moment) == "2024-02-29 01:02:03.000"
    assert write(T(MySQLType.TIMESTAMP, decimal=2), moment.replace(tzinfo=UTC)) == "2024-02-29 09:02:03.00"
    with pytest.raises(TextFormError, match=r"^expected a decimal, got float$"):
        read(T(MySQLType.DECIMAL, length=10, decimal=4), 12.34, "bytes")


@pytest.mark.parametrize("data_type", [T(MySQLType.GEOMETRY), T(MySQLType.ARRAY, item=T(MySQLType.INT))])
def test_types_without_a_text_form_are_refused_both_ways(data_type: DataType) -> None:
    with pytest.raises(TextFormError, match="has no plain text form"):
        write(data_type, b"\x01")
    with pytest.raises(TextFormError, match="has no plain text form"):
        read(data_type, "x", "string")


@pytest.mark.parametrize(
    ("data_type", "datum", "reason"),
    [
        # ISO forms the standard library's fromisoformat reads but TiDB never prints
        (T(MySQLType.DATETIME), "2024-W09-4 01:02:03", "not a DATETIME: '2024-W09-4 01:02:03'"),
        (T(MySQLType.TIMESTAMP), "2024-W09-4 01:02:03", "not a DATETIME: '2024-W09-4 01:02:03'"),
        (T(MySQLType.DATETIME), "2024-02-29 010203.1", "not a DATETIME: '2024-02-29 010203.1'"),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03.+08", "not a DATETIME: '2024-02-29 01:02:03.+08'"),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03.٥", "not a DATETIME: '2024-02-29 01:02:03.٥'"),
        (T(MySQLType.DATETIME), "2024-02-30 01:02:03", "not a valid DATETIME: '2024-02-30 01:02:03'"),
        (T(MySQLType.DATE), "2024-02-٢٩", "not a DATE: '2024-02-٢٩'"),
        (T(MySQLType.TIME), "12:345:56", "not a TIME: '12:345:56'"),
        (T(MySQLType.TIME), "12:34:567", "not a TIME: '12:34:567'"),
        (T(MySQLType.TIME), "12:60:00", "not a valid TIME: '12:60:00'"),
        (T(MySQLType.TIME), "12:00:60", "not a valid TIME: '12:00:60'"),
        (T(MySQLType.TIME), "-839:00:00", "not a valid TIME: '-839:00:00'"),
        (T(MySQLType.TIME), "١٢:00:00", "not a TIME: '١٢:00:00'"),
    ],
)
def test_readers_refuse_with_the_reason(data_type: DataType, datum: str, reason: str) -> None:
    with pytest.raises(TextFormError) as caught:
        read(data_type, datum, "string")
    assert str(caught.value) == reason


@pytest.mark.parametrize(
    ("data_type", "datum", "value"),
    [
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03.1234567", dt.datetime(2024, 2, 29, 1, 2, 3, 123456)),
        (T(MySQLType.DATETIME), "2024-02-29 01:02:03.000001", dt.datetime(2024, 2, 29, 1, 2, 3, 1)),
        (T(MySQLType.DATETIME), "0000-00-00 00:00:00", ZeroTemporal("0000-00-00 00:00:00")),
        (T(MySQLType.DATETIME), "2024-00-00 00:00:00.00", ZeroTemporal("2024-00-00 00:00:00.00")),
        (T(MySQLType.DATE), "0000-00-00", ZeroTemporal("0000-00-00")),
        (T(MySQLType.DATE), "0005-01-02", dt.date(5, 1, 2)),
        (T(MySQLType.TIMESTAMP), "2024-02-29 01:02:03.5", dt.datetime(2024, 2, 29, 1, 2, 3, 500000, tzinfo=SHANGHAI)),
        (T(MySQLType.TIMESTAMP), "2024-02-29T01:02:03", dt.datetime(2024, 2, 29, 1, 2, 3, tzinfo=SHANGHAI)),
        (T(MySQLType.TIME), "00:00:00", dt.timedelta(0)),
        (T(MySQLType.TIME), "-838:59:59", -dt.timedelta(hours=838, minutes=59, seconds=59)),
        (T(MySQLType.JSON), '{"a": [1, null]}', {"a": [1, None]}),
    ],
)
def test_readers_of_text_datums(data_type: DataType, datum: str, value: Any) -> None:
    read_value = read(data_type, datum, "string")
    assert read_value == value
    assert isinstance(read_value, type(value)) and (isinstance(value, dt.datetime) or type(read_value) is type(value))
    if isinstance(value, dt.datetime | dt.timedelta):  # the writer schema has no fsp: the text's digits are kept
        assert own_fsp(read_value) == fraction_digits(datum)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        assert read_value.tzinfo is SHANGHAI  # local time at the zone, not converted


class _Moment(dt.datetime):
    """A datetime subclass such as pandas.Timestamp: the writers take TiDB's general text path for it."""


def test_temporal_writers_of_zero_values_and_datetime_subclasses() -> None:
    assert write(T(MySQLType.DATE), ZeroTemporal("0000-00-00")) == "0000-00-00"
    assert write(T(MySQLType.DATE), dt.date(5, 1, 2)) == "0005-01-02"
    assert write(T(MySQLType.DATETIME), ZeroTemporal("2024-00-00 00:00:00")) == "2024-00-00 00:00:00"
    assert write(T(MySQLType.DATETIME, decimal=6), _Moment(2024, 2, 29, 1, 2, 3, 7)) == "2024-02-29 01:02:03.000007"
    aware = _Moment(2024, 1, 1, 16, 0, 0, 250000, tzinfo=UTC)
    assert write(T(MySQLType.TIMESTAMP, decimal=1), aware) == "2024-01-02 00:00:00.2"  # at the writer's zone
    assert (
        write(T(MySQLType.TIME, decimal=2), -dt.timedelta(hours=838, seconds=1, microseconds=5000)) == "-838:00:01.00"
    )
    assert write(T(MySQLType.JSON), {"b": 1, "a": [True, None]}) == '{"b": 1, "a": [true, null]}'
