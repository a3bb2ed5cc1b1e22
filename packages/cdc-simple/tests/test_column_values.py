"""Simple's column values one by one, below the message layer: each wire form (JSON text, Avro datum) of each
column type to its typed value, each malformed value to a `DecodeError` naming the column's field path and the
reason, each typed value to its JSON and Avro wire form, and each value's bytes in TiDB's row checksum.

Explicit examples rather than the hypothesis round trip: they run in well under a second, so mutation testing
(``nox -s mutate -- cdc_simple.columns``) can afford them for every mutant.
"""

from __future__ import annotations

import datetime as dt
import struct
import zlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from cdc_core.errors import DecodeError, EncodeError
from cdc_core.schema import Column, TableSchema
from cdc_core.textual import UTC
from cdc_core.types import DataType, MySQLType, parse_type_text
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal
from cdc_simple import columns
from cdc_simple.columns import ImageWriter, checksum_bytes, crc32, read_image
from cdc_simple.names import AVRO_TIMESTAMP, AVRO_UNSIGNED_BIGINT
from cdc_testing.strategies import kitchen_sink_schema

SCHEMA = kitchen_sink_schema(database="shop", table="sink")
TYPES = {c.name: c.data_type for c in SCHEMA.columns}
SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YEAR = "2024-01-02 00:00:00"
NAIVE = dt.datetime(2024, 1, 1)
INT = DataType(mysql_type=MySQLType.INT)


@pytest.fixture(autouse=True)
def _fresh_readers() -> None:
    """Readers and writer types are memoized per schema object: each test builds its own, so that a test sees
    the code as it is now (mutation testing forks the test process after a first run filled the memo)."""
    columns._READERS.clear()
    columns._TYPES.clear()


def _read(column: str, raw: Any) -> Any:
    return read_image(SCHEMA, {column: raw}, "data")[column]


def _refused(column: str, raw: Any) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        _read(column, raw)
    assert caught.value.field == f"data.{column}"
    return caught.value


def _unsigned(value: Any) -> tuple[str, dict[str, Any]]:
    return (AVRO_UNSIGNED_BIGINT, {"value": value})


# ------------------------------------------------------------------------------------------ wire to typed


@pytest.mark.parametrize(
    ("column", "raw", "value"),
    [
        # JSON: digits; Avro: long
        ("c_int", "-2147483648", -2147483648),
        ("c_int", "2147483647", 2147483647),
        ("c_int", -7, -7),
        ("c_int", 0, 0),
        ("c_int_u", "4294967295", 4294967295),
        ("c_int_u", 4294967295, 4294967295),
        ("c_tinyint", "-128", -128),
        ("c_year", "2024", 2024),
        ("c_year", 2024, 2024),
        ("c_bigint", "-9223372036854775808", -9223372036854775808),
        ("c_bigint_u", "18446744073709551615", 18446744073709551615),
        # Avro BIGINT UNSIGNED: the UnsignedBigint record holding the two's-complement reinterpretation
        ("c_bigint_u", _unsigned(-1), 18446744073709551615),
        ("c_bigint_u", _unsigned(-9223372036854775808), 9223372036854775808),
        ("c_bigint_u", _unsigned(42), 42),
        ("c_bigint_u", -1, 18446744073709551615),  # a plain long, reinterpreted as unsigned too
        ("c_bit_12", "4095", 4095),
        ("c_bit_12", 4095, 4095),  # tiflow's Avro long
        ("c_bit_64", "18446744073709551615", 18446744073709551615),
        ("c_bit_64", -1, 18446744073709551615),
        ("c_bit_64", _unsigned(-2), 18446744073709551614),
        ("c_enum", "1", "red"),
        ("c_enum", "3", "blue"),
        ("c_enum", 2, "green"),
        ("c_enum", "0", ""),  # the empty-string error value MySQL stores for a bad ENUM
        ("c_enum", "4", EnumIndex(4)),
        ("c_enum", _unsigned(3), 3),
        ("c_set", "5", ("x", "z")),
        ("c_set", "0", ()),
        ("c_set", 7, ("x", "y", "z")),
        ("c_set", 2, ("y",)),
        ("c_set", "8", SetBits(8)),
        ("c_float", "9.9", 9.9),
        ("c_float", "-0.5", -0.5),
        ("c_float", 9.899999618530273, 9.9),  # Avro float: the float32 as its shortest digits
        ("c_float", "3.4028235e38", 3.4028235e38),
        ("c_double", "0.1", 0.1),
        ("c_double", 0.1, 0.1),
        ("c_double", "-1.5e308", -1.5e308),
        ("c_decimal", "12.3", Decimal("12.3000")),
        ("c_decimal", "-0.5", Decimal("-0.5000")),
        ("c_decimal_int", "-12345678901234567890", Decimal("-12345678901234567890")),
        (
            "c_decimal_wide",
            "1234567890123456789012345678.0123456789",
            Decimal("1234567890123456789012345678.0123456789"),
        ),
        ("c_date", "2024-02-29", dt.date(2024, 2, 29)),
        ("c_date", "0000-00-00", ZeroTemporal("0000-00-00")),
        ("c_date", "2024-00-10", ZeroTemporal("2024-00-10")),
        ("c_datetime", "2024-02-29 01:02:03", dt.datetime(2024, 2, 29, 1, 2, 3)),
        ("c_datetime_6", "2024-02-29 01:02:03.000007", dt.datetime(2024, 2, 29, 1, 2, 3, 7)),
        ("c_datetime", "0000-00-00 00:00:00", ZeroTemporal("0000-00-00 00:00:00")),
        ("c_time", "-838:59:59", -dt.timedelta(hours=838, minutes=59, seconds=59)),
        ("c_time_3", "12:03:04.500", dt.timedelta(hours=12, minutes=3, seconds=4, microseconds=500000)),
        ("c_char", "héllo", "héllo"),
        ("c_char", "", ""),
        ("c_text", "line\nbreak", "line\nbreak"),
        ("c_binary", "AAH/AAAAAAA=", b"\x00\x01\xff\x00\x00\x00\x00\x00"),
        ("c_blob", "", b""),
        ("c_blob", b"\x00\x80", b"\x00\x80"),  # Avro bytes
        ("c_json", '{"k": [1, "two", null]}', {"k": [1, "two", None]}),
        ("c_json", '"text"', "text"),
        ("c_json", "12345678901234567890", 12345678901234567890),
        ("c_json", "[18446744073709551617, -9223372036854775809]", [18446744073709551617, -9223372036854775809]),
        ("c_json", '{"n": 1234567890123456789012}', {"n": 1234567890123456789012}),
        ("c_json", "[1.5e300]", [1.5e300]),
        ("c_json", "null", None),
    ],
)
def test_wire_values_read_as_typed_values(column: str, raw: Any, value: Any) -> None:
    read = _read(column, raw)
    assert read == value
    assert type(read) is type(value)


def test_decimal_keeps_the_column_scale() -> None:
    assert _read("c_decimal", "12.3").as_tuple().exponent == -4
    assert _read("c_decimal_int", "5").as_tuple().exponent == 0


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ({"location": "Asia/Shanghai", "value": "2024-01-02 00:00:00"}, dt.datetime(2024, 1, 2, tzinfo=SHANGHAI)),
        ({"location": "UTC", "value": "2024-01-01 16:00:00.5"}, dt.datetime(2024, 1, 1, 16, 0, 0, 500000, tzinfo=UTC)),
        ((AVRO_TIMESTAMP, {"location": "Asia/Shanghai", "value": NEW_YEAR}), dt.datetime(2024, 1, 2, tzinfo=SHANGHAI)),
        ({"location": "UTC", "value": "0000-00-00 00:00:00"}, ZeroTemporal("0000-00-00 00:00:00")),
    ],
)  # fmt: skip
def test_timestamps_are_local_time_at_their_location(raw: Any, value: Any) -> None:
    read = _read("c_timestamp", raw)
    assert read == value
    if isinstance(value, dt.datetime):
        assert read.utcoffset() == value.utcoffset()


# ------------------------------------------------------------------------------------------ malformed values

NON_INTEGER = [
    "12x",
    "",
    "1.5",
    "١٢",  # Arabic-Indic digits: int() reads them, TiDB never writes them
    "1_000",  # int() reads digit groups
    " 12",
    "12\n",
    "+5",
    1.5,
    True,
    None.__class__,  # a non-JSON object
]


@pytest.mark.parametrize("column", ["c_int", "c_int_u", "c_bigint_u", "c_year", "c_bit_12", "c_enum", "c_set"])
@pytest.mark.parametrize("raw", NON_INTEGER, ids=repr)
def test_integral_columns_refuse_anything_but_digits(column: str, raw: Any) -> None:
    error = _refused(column, raw)
    assert error.reason == f"expected an integer (digits), got {raw!r:.60}"


@pytest.mark.parametrize("column", ["c_bigint_u", "c_bit_64", "c_enum", "c_set"])
@pytest.mark.parametrize(
    ("record", "inner"),
    [(_unsigned(None), None), (_unsigned(1.0), 1.0), (_unsigned("x"), "x"), ((AVRO_UNSIGNED_BIGINT, 5), None)],
)
def test_unsigned_bigint_records_must_hold_a_long(column: str, record: Any, inner: Any) -> None:
    assert _refused(column, record).reason == f"expected an integer (digits), got {inner!r}"


@pytest.mark.parametrize("raw", [-1, "-1", -(2**63)], ids=repr)
def test_a_negative_enum_index_is_refused(raw: Any) -> None:
    """An Avro long or JSON text below 0 names no member and is not MySQL's invalid value 0."""
    assert _refused("c_enum", raw).reason == f"ENUM index {int(raw)} is negative"


def test_a_long_text_is_cut_in_the_reason() -> None:
    error = _refused("c_int", "9" * 30 + "x" + "9" * 60)
    assert error.reason == "expected an integer (digits), got '" + "9" * 30 + "x" + "9" * 28


@pytest.mark.parametrize(
    ("column", "raw", "reason"),
    [
        ("c_float", "abc", "'abc' is not a float(12) value: not a number: 'abc'"),
        ("c_float", "1e39", "'1e39' is not a float(12) value: 1e+39 is out of the FLOAT range"),
        ("c_float", 1e39, "1e+39 is not a float(12) value: 1e+39 is out of the FLOAT range"),
        ("c_float", 3, "unexpected int value for a float(12) column"),
        ("c_float", b"1", "unexpected bytes value for a float(12) column"),
        ("c_double", "x", "'x' is not a double(22) value: not a number: 'x'"),
        ("c_float", "1_000.5", "'1_000.5' is not a float(12) value: not a number: '1_000.5'"),
        ("c_float", "\u0661.5", "'\u0661.5' is not a float(12) value: not a number: '\u0661.5'"),
        ("c_double", "1_000.5", "'1_000.5' is not a double(22) value: not a number: '1_000.5'"),
        ("c_double", 5, "unexpected int value for a double(22) column"),
        ("c_decimal", "x", "'x' is not a decimal(10,4) value: not a decimal: 'x'"),
        ("c_decimal", "1.5e", "'1.5e' is not a decimal(10,4) value: not a decimal: '1.5e'"),
        ("c_decimal", 12.3, "unexpected float value for a decimal(10,4) column"),
        ("c_date", "2024-02-30", "'2024-02-30' is not a date value: not a valid DATE: '2024-02-30'"),
        ("c_date", "2024-2-3", "'2024-2-3' is not a date value: not a DATE: '2024-2-3'"),
        ("c_date", 19782, "unexpected int value for a date column"),
        ("c_datetime", "2024-02-29 24:00:00",
         "'2024-02-29 24:00:00' is not a datetime value: not a valid DATETIME: '2024-02-29 24:00:00'"),
        ("c_datetime", "bad", "'bad' is not a datetime value: not a DATETIME: 'bad'"),
        ("c_time", "12:60", "'12:60' is not a time value: not a TIME: '12:60'"),
        ("c_time", "10:60:00", "'10:60:00' is not a time value: not a valid TIME: '10:60:00'"),
        ("c_time", "10:00:75", "'10:00:75' is not a time value: not a valid TIME: '10:00:75'"),
        ("c_time", "١٢:00:00", "'١٢:00:00' is not a time value: not a TIME: '١٢:00:00'"),
        ("c_time", 3600, "unexpected int value for a time column"),
        ("c_char", 5, "unexpected int value for a char(10) column"),
        ("c_varchar", b"x", "unexpected bytes value for a varchar(64) column"),
        ("c_binary", "AA!=", "'AA!=' is not a binary(8) value: Only base64 data is allowed"),
        ("c_binary", "AAE", "'AAE' is not a binary(8) value: Incorrect padding"),
        ("c_blob", 5, "expected base64 text or bytes, got int"),
        ("c_json", "{bad", "'{bad' is not a json value: not a JSON document: "
         "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ("c_json", 5, "unexpected int value for a json column"),
    ],
)  # fmt: skip
def test_malformed_values_name_the_column_and_the_reason(column: str, raw: Any, reason: str) -> None:
    assert _refused(column, raw).reason == reason


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("2024-01-02 00:00:00", "expected a TIMESTAMP object {location, value}"),
        ({"location": "UTC"}, "expected a TIMESTAMP object {location, value}"),
        ({"value": "2024-01-02 00:00:00"}, "expected a TIMESTAMP object {location, value}"),
        ({"location": 8, "value": "2024-01-02 00:00:00"}, "expected a TIMESTAMP object {location, value}"),
        ({"location": "UTC", "value": 0}, "expected a TIMESTAMP object {location, value}"),
        (("other", {"location": "UTC", "value": NEW_YEAR}), "expected a TIMESTAMP object {location, value}"),
        ((AVRO_TIMESTAMP, {"location": "UTC", "value": NEW_YEAR}, 1), "expected a TIMESTAMP object {location, value}"),
        ({"location": "Mars/Olympus", "value": "2024-01-02 00:00:00"}, "unknown TIMESTAMP location 'Mars/Olympus'"),
        ({"location": "UTC", "value": "bad"},
         "{'location': 'UTC', 'value': 'bad'} is not a timestamp value: not a DATETIME: 'bad'"),
    ],
)  # fmt: skip
def test_malformed_timestamps(raw: Any, reason: str) -> None:
    assert _refused("c_timestamp", raw).reason == reason


def test_a_column_not_in_the_schema_is_named() -> None:
    with pytest.raises(DecodeError) as caught:
        read_image(SCHEMA, {"id": "1", "zz": "1", "aa": "2"}, "data")
    assert caught.value.reason == "column 'aa' is not in shop.sink version 1"
    assert caught.value.field == "data"


def test_absent_columns_stay_absent_and_nulls_stay_null() -> None:
    assert read_image(SCHEMA, {"id": "1", "c_int": None}, "data") == {"id": 1, "c_int": None}
    old = {"id": "1", "c_json": '{"a": 1}', "c_int": "5"}
    typed_old = read_image(SCHEMA, old, "old")
    new = read_image(SCHEMA, {"id": "1", "c_json": '{"a": 1}', "c_int": None}, "data", same_as=(old, typed_old))
    assert new == {"id": 1, "c_json": {"a": 1}, "c_int": None}
    assert list(new) == ["id", "c_int", "c_json"]  # schema order


def test_an_update_reuses_immutable_values_of_the_other_image_but_never_shares_a_document() -> None:
    old_wire = {"id": "1", "c_varchar": "same", "c_json": '{"a": [1]}', "c_int": "1", "c_date": "2024-02-29"}
    old = read_image(SCHEMA, old_wire, "old")
    new_wire = {"id": "1", "c_varchar": "same", "c_json": '{"a": [1]}', "c_int": "2", "c_date": "2024-03-01"}
    new = read_image(SCHEMA, new_wire, "data", same_as=(old_wire, old))
    assert new == {"id": 1, "c_int": 2, "c_date": dt.date(2024, 3, 1), "c_varchar": "same", "c_json": {"a": [1]}}
    assert new["c_json"] is not old["c_json"]
    new["c_json"]["a"].append(2)
    assert old["c_json"] == {"a": [1]}
    # a malformed value is reported even when the other image has the same column
    with pytest.raises(DecodeError) as caught:
        read_image(SCHEMA, {"id": "1", "c_int": "x"}, "data", same_as=(old_wire, old))
    assert caught.value.field == "data.c_int"


def test_a_same_wire_value_with_another_typed_form_is_read_again() -> None:
    # the other image's typed value is only reused for the same column name
    other_wire = {"c_int": "5"}
    new = read_image(SCHEMA, {"c_tinyint": "5"}, "data", same_as=(other_wire, {"c_int": 5}))
    assert new == {"c_tinyint": 5}
    new = read_image(SCHEMA, {"c_int": "5"}, "data", same_as=({"c_int": "6"}, {"c_int": 6}))
    assert new == {"c_int": 5}


def _schema(*types: str) -> TableSchema:
    return TableSchema(
        database="d",
        table="t",
        columns=[Column(name=f"c{i}", data_type=parse_type_text(t)) for i, t in enumerate(types)],
    )


def test_vector_geometry_and_array_columns() -> None:
    schema = _schema("vector(3)", "geometry")
    assert read_image(schema, {"c0": "[1,2.5,-3]"}, "data") == {"c0": [1.0, 2.5, -3.0]}
    with pytest.raises(DecodeError) as caught:
        read_image(schema, {"c0": "[1,x]"}, "data")
    assert caught.value.field == "data.c0"
    assert caught.value.reason.startswith("'[1,x]' is not a vector(3) value: ")
    array = TableSchema(
        database="d", table="t", columns=[Column(name="a", data_type=DataType(mysql_type=MySQLType.ARRAY, item=INT))]
    )
    with pytest.raises(DecodeError) as caught:
        read_image(array, {"a": "[1,2]"}, "data")
    assert caught.value.field == "data.a"
    assert caught.value.reason == "'[1,2]' is not a array<int> value: array<int> has no plain text form (array)"
    with pytest.raises(DecodeError) as caught:
        read_image(schema, {"c1": "POINT(1 2)"}, "data")
    assert caught.value.field == "data.c1"
    assert caught.value.reason.startswith("'POINT(1 2)' is not a geometry value: ")


# ------------------------------------------------------------------------------------------------ checksum


def _length_prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "little") + data


@pytest.mark.parametrize(
    ("column", "raw", "contribution"),
    [
        # integers: 8-byte little-endian uint64 of the value
        ("c_int", "-2", (2**64 - 2).to_bytes(8, "little")),
        ("c_int", 300, (300).to_bytes(8, "little")),
        ("c_bigint_u", _unsigned(-1), b"\xff" * 8),
        ("c_bigint_u", ("long", 7), (7).to_bytes(8, "little")),  # the encoder's union notation
        ("c_enum", "3", (3).to_bytes(8, "little")),
        ("c_set", 5, (5).to_bytes(8, "little")),
        ("c_bit_64", "18446744073709551615", b"\xff" * 8),
        ("c_year", "2024", (2024).to_bytes(8, "little")),
        # floats: the float64 bits (a FLOAT as its float32 value widened)
        ("c_double", "0.1", struct.pack("<d", 0.1)),
        ("c_double", 0.1, struct.pack("<d", 0.1)),
        ("c_double", float("nan"), bytes(8)),
        ("c_double", float("-inf"), bytes(8)),
        ("c_double", float("inf"), bytes(8)),
        # the rest: the wire text, length-prefixed
        ("c_decimal", "12.3400", _length_prefixed(b"12.3400")),
        ("c_varchar", "héllo", _length_prefixed("héllo".encode())),
        ("c_text", "\ud800", _length_prefixed(b"\xed\xa0\x80")),  # a lone surrogate as TiDB's bytes
        ("c_date", "2024-02-29", _length_prefixed(b"2024-02-29")),
        ("c_blob", "AAH/", _length_prefixed(b"\x00\x01\xff")),
        ("c_blob", b"\x00\x01", _length_prefixed(b"\x00\x01")),
        # TIMESTAMP: its text converted to UTC, at the fraction digits it was written with
        ("c_timestamp", {"location": "Asia/Shanghai", "value": NEW_YEAR}, _length_prefixed(b"2024-01-01 16:00:00")),
        ("c_timestamp_6", {"location": "Asia/Shanghai", "value": "2024-01-02 07:30:00.120"},
         _length_prefixed(b"2024-01-01 23:30:00.120")),
        ("c_timestamp", (AVRO_TIMESTAMP, {"location": "UTC", "value": NEW_YEAR}), _length_prefixed(NEW_YEAR.encode())),
        ("c_timestamp", {"location": "Asia/Shanghai", "value": "0000-00-00 00:00:00"},
         _length_prefixed(b"0000-00-00 00:00:00")),
    ],
)  # fmt: skip
def test_checksum_contribution_of_each_value(column: str, raw: Any, contribution: bytes) -> None:
    assert checksum_bytes(raw, TYPES[column], f"data.{column}") == contribution


@pytest.mark.parametrize(
    ("column", "raw", "reason"),
    [
        ("c_int", "x", "expected an integer (digits), got 'x'"),
        ("c_double", "x", "cannot checksum 'x': could not convert string to float: 'x'"),
        ("c_blob", "AA!=", "cannot checksum 'AA!=': Only base64 data is allowed"),
        ("c_varchar", 5, "cannot checksum a int value"),
        ("c_timestamp", {"location": "Mars/Olympus", "value": NEW_YEAR},
         f"cannot checksum {{'location': 'Mars/Olympus', 'value': '{NEW_YEAR}'}}: unknown time zone 'Mars/Olympus'"),
        ("c_timestamp", {"location": "UTC", "value": "x"},
         "cannot checksum {'location': 'UTC', 'value': 'x'}: not a DATETIME: 'x'"),
        ("c_timestamp", "2024-01-02 00:00:00", "expected a TIMESTAMP object {location, value}"),
    ],
)  # fmt: skip
def test_checksum_of_a_malformed_value_names_the_field(column: str, raw: Any, reason: str) -> None:
    with pytest.raises(DecodeError) as caught:
        checksum_bytes(raw, TYPES[column], f"data.{column}")
    assert caught.value.reason == reason
    assert caught.value.field == f"data.{column}"


def test_row_crc32_chains_the_columns_in_schema_order_and_skips_nulls() -> None:
    image = {"c_varchar": "ab", "c_int": "-1", "id": "7", "c_date": None}
    expected = zlib.crc32((7).to_bytes(8, "little"))
    expected = zlib.crc32(b"\xff" * 8, expected)
    expected = zlib.crc32(_length_prefixed(b"ab"), expected)
    assert crc32(SCHEMA, image, "data") == expected
    assert crc32(SCHEMA, {}, "data") == 0
    with pytest.raises(DecodeError) as caught:
        crc32(SCHEMA, {"id": "7", "c_int": "x"}, "data")
    assert caught.value.field == "data.c_int"


# ------------------------------------------------------------------------------------------------ writer

TYPED: dict[str, Any] = {
    "id": 7,
    "c_int": -5,
    "c_int_u": 4294967295,
    "c_bigint_u": 18446744073709551615,
    "c_year": 2024,
    "c_float": 9.9,
    "c_double": 0.1,
    "c_decimal": Decimal("12.3400"),
    "c_date": dt.date(2024, 2, 29),
    "c_datetime_3": dt.datetime(2024, 2, 29, 1, 2, 3, 456789),
    "c_timestamp": dt.datetime(2024, 1, 1, 16, 0, 0, tzinfo=UTC),
    "c_time": -dt.timedelta(hours=838, minutes=59, seconds=59),
    "c_char": "héllo",
    "c_binary": b"\x00\x01\xff",
    "c_enum": "blue",
    "c_set": ("x", "z"),
    "c_bit_12": 4095,
    "c_bit_64": 18446744073709551615,
    "c_json": {"k": [1, None]},
    "c_text": None,
}


def test_json_wire_image_is_tidbs_text() -> None:
    wire = ImageWriter("json", "Asia/Shanghai").write(SCHEMA, TYPED)
    assert wire == {
        "id": "7",
        "c_int": "-5",
        "c_int_u": "4294967295",
        "c_bigint_u": "18446744073709551615",
        "c_year": "2024",
        "c_float": "9.9",
        "c_double": "0.1",
        "c_decimal": "12.3400",
        "c_date": "2024-02-29",
        "c_datetime_3": "2024-02-29 01:02:03.456",
        "c_timestamp": {"location": "Asia/Shanghai", "value": "2024-01-02 00:00:00"},
        "c_time": "-838:59:59",
        "c_char": "héllo",
        "c_binary": "AAH/",
        "c_enum": "3",
        "c_set": "5",
        "c_bit_12": "4095",
        "c_bit_64": "18446744073709551615",
        "c_json": '{"k": [1, null]}',
        "c_text": None,
    }
    assert list(wire) == sorted(TYPED)  # Go's encoding/json sorts map keys


def test_avro_wire_image_holds_union_branches() -> None:
    wire = ImageWriter("avro", "UTC").write(SCHEMA, TYPED)
    assert wire == {
        "id": ("long", 7),
        "c_int": ("long", -5),
        "c_int_u": ("long", 4294967295),
        "c_bigint_u": (AVRO_UNSIGNED_BIGINT, {"value": -1}),
        "c_year": ("long", 2024),
        "c_float": ("float", 9.9),
        "c_double": ("double", 0.1),
        "c_decimal": ("string", "12.3400"),
        "c_date": ("string", "2024-02-29"),
        "c_datetime_3": ("string", "2024-02-29 01:02:03.456"),
        "c_timestamp": (AVRO_TIMESTAMP, {"location": "UTC", "value": "2024-01-01 16:00:00"}),
        "c_time": ("string", "-838:59:59"),
        "c_char": ("string", "héllo"),
        "c_binary": ("bytes", b"\x00\x01\xff"),
        "c_enum": ("long", 3),
        "c_set": ("long", 5),
        "c_bit_12": ("long", 4095),
        "c_bit_64": ("long", -1),
        "c_json": ("string", '{"k": [1, null]}'),
        "c_text": None,
    }
    assert list(wire) == list(TYPED)  # Avro keeps the image's order
    assert ImageWriter("avro", "UTC").write(SCHEMA, {"c_bigint_u": 9223372036854775807})["c_bigint_u"] == (
        AVRO_UNSIGNED_BIGINT,
        {"value": 9223372036854775807},
    )
    assert ImageWriter("avro", "UTC").write(SCHEMA, {"c_bigint": -1})["c_bigint"] == ("long", -1)


def test_the_writer_renders_special_values() -> None:
    writer = ImageWriter("json", "UTC")
    image = {"c_enum": EnumIndex(0), "c_set": SetBits(8), "c_date": ZeroTemporal("0000-00-00")}
    assert writer.write(SCHEMA, image) == {"c_date": "0000-00-00", "c_enum": "0", "c_set": "8"}
    assert ImageWriter("json", "UTC").write(SCHEMA, {"c_int": True}) == {"c_int": "1"}


def test_the_writer_selects_columns_and_shares_the_other_images_text() -> None:
    writer = ImageWriter("json", "UTC")
    assert writer.write(SCHEMA, TYPED, columns=("id", "c_int")) == {"c_int": "-5", "id": "7"}
    other_typed = {"c_int": -5, "c_date": dt.date(2024, 2, 29), "c_year": 2024.0}
    other_wire = {"c_int": "shared", "c_date": "shared", "c_year": "shared"}
    wire = writer.write(
        SCHEMA, {"c_int": -5, "c_date": dt.date(2024, 3, 1), "c_year": 2024}, same_as=(other_typed, other_wire)
    )
    assert wire == {"c_date": "2024-03-01", "c_int": "shared", "c_year": "2024"}  # a float 2024.0 is another value


@pytest.mark.parametrize(
    ("encoding", "column", "value", "reason"),
    [
        ("json", "c_binary", "text", "expected bytes, got str"),
        ("avro", "c_blob", 5, "expected bytes, got int"),
        ("json", "c_timestamp", NAIVE, f"TIMESTAMP value {NAIVE!r} has no time zone"),
        ("avro", "c_timestamp", NAIVE, f"TIMESTAMP value {NAIVE!r} has no time zone"),
        ("json", "c_enum", "purple", "'purple' is not a member of enum('red', 'green', 'blue')"),
        ("json", "c_char", 5, "expected text, got int"),
        ("avro", "c_set", ("w",), "'w' is not a member of set('x', 'y', 'z')"),
        ("avro", "c_int", "x", "invalid literal for int() with base 10: 'x'"),
    ],
)  # fmt: skip
def test_the_writer_refuses_a_value_its_column_cannot_hold(encoding: str, column: str, value: Any, reason: str) -> None:
    with pytest.raises(EncodeError) as caught:
        ImageWriter(encoding, "UTC").write(SCHEMA, {column: value})
    assert caught.value.field == column
    assert caught.value.table == "shop.sink"
    assert caught.value.protocol == "simple"
    assert str(caught.value.reason) == reason


@pytest.mark.parametrize(
    ("column", "value", "datum"),
    [
        ("c_bigint_u", 9223372036854775807, (AVRO_UNSIGNED_BIGINT, {"value": 9223372036854775807})),
        ("c_bigint_u", 9223372036854775808, (AVRO_UNSIGNED_BIGINT, {"value": -9223372036854775808})),
        ("c_bit_64", 9223372036854775808, ("long", -9223372036854775808)),
        ("c_bit_64", 9223372036854775807, ("long", 9223372036854775807)),
        ("c_bit_64", 0, ("long", 0)),
    ],
)
def test_avro_longs_hold_unsigned_64_bit_values_in_twos_complement(column: str, value: int, datum: Any) -> None:
    assert ImageWriter("avro", "UTC").write(SCHEMA, {column: value}) == {column: datum}
    assert _read(column, datum[1] if datum[0] == "long" else datum) == value  # a long is read back as the int


def test_avro_timestamps_are_local_time_at_the_writers_zone() -> None:
    moment = dt.datetime(2024, 1, 1, 16, 0, 0, 123456, tzinfo=UTC)
    wire = ImageWriter("avro", "Asia/Shanghai").write(SCHEMA, {"c_timestamp_6": moment, "c_timestamp": moment})
    assert wire == {
        "c_timestamp_6": (AVRO_TIMESTAMP, {"location": "Asia/Shanghai", "value": "2024-01-02 00:00:00.123456"}),
        "c_timestamp": (AVRO_TIMESTAMP, {"location": "Asia/Shanghai", "value": "2024-01-02 00:00:00"}),
    }


def test_values_do_not_depend_on_the_hosts_zone(host_zone: Callable[[str], None]) -> None:
    host_zone("Asia/Tokyo")  # the consumer's clock in another zone than UTC
    at = {"location": "Asia/Shanghai", "value": "2024-01-02 00:00:00"}
    assert checksum_bytes(at, TYPES["c_timestamp"], "data.c_timestamp") == _length_prefixed(b"2024-01-01 16:00:00")
    assert _read("c_timestamp", at) == dt.datetime(2024, 1, 1, 16, tzinfo=UTC)
    moment = dt.datetime(2024, 1, 1, 16, tzinfo=UTC)
    assert ImageWriter("avro", "UTC").write(SCHEMA, {"c_timestamp": moment}) == {
        "c_timestamp": (AVRO_TIMESTAMP, {"location": "UTC", "value": "2024-01-01 16:00:00"})
    }
    assert ImageWriter("json", "UTC").write(SCHEMA, {"c_timestamp": moment}) == {
        "c_timestamp": {"location": "UTC", "value": "2024-01-01 16:00:00"}
    }


def test_the_writer_refuses_a_column_not_in_the_schema() -> None:
    with pytest.raises(EncodeError) as caught:
        ImageWriter("avro", "UTC").write(SCHEMA, {"id": 1, "nope": 2})
    assert caught.value.field == "nope"
    assert caught.value.table == "shop.sink"
    assert caught.value.protocol == "simple"
    assert caught.value.reason == "column is not in the table schema"
