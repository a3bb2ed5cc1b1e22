"""Column types from field schemas (``tidb_type``, propagated source types, the wire alone) and the values each
wire form converts to, driven field by field through `reader_from_field`."""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.schema import Column
from cdc_core.textual import wkb_point
from cdc_core.types import DataType, MySQLType
from cdc_core.values import Geometry
from cdc_debezium.column_readers import reader_from_column, reader_from_field
from cdc_debezium.connector_modes import BinaryMode, DecimalMode, Modes, TimePrecisionMode
from cdc_debezium.wire_types import type_from_source, type_from_tidb, type_from_wire
from cdc_debezium.wire_values import CONVERSION_ERRORS, UNTYPED

DECIMAL = "org.apache.kafka.connect.data.Decimal"
SOURCE = "__debezium.source.column"
MODES = Modes()
POINT_1_2 = wkb_point(1.0, 2.0)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# ------------------------------------------------------------------------------------------- tidb_type


@pytest.mark.parametrize(
    ("tidb_type", "kind", "name", "parameters", "expected"),
    [
        ("INT", "int32", None, None, DataType(mysql_type=MySQLType.INT)),
        (
            "ENUM",
            "string",
            "io.debezium.data.Enum",
            {"allowed": "a\\,b,c"},
            DataType(mysql_type=MySQLType.ENUM, elements=("a,b", "c")),
        ),
        (
            "SET",
            "string",
            "io.debezium.data.EnumSet",
            {"allowed": "x,y"},
            DataType(mysql_type=MySQLType.SET, elements=("x", "y")),
        ),
        ("BIT", "boolean", None, None, DataType(mysql_type=MySQLType.BIT, length=1, unsigned=True)),
        (
            "BIT",
            "bytes",
            "io.debezium.data.Bits",
            {"length": "12"},
            DataType(mysql_type=MySQLType.BIT, length=12, unsigned=True),
        ),
        (
            "DATETIME",
            "int64",
            "io.debezium.time.MicroTimestamp",
            None,
            DataType(mysql_type=MySQLType.DATETIME, decimal=6),
        ),
        # milliseconds: at most 3 digits (the exact fsp, 0 to 3, is not on the wire)
        ("DATETIME", "int64", "io.debezium.time.Timestamp", None, DataType(mysql_type=MySQLType.DATETIME, decimal=3)),
        ("FLOAT", "double", None, None, DataType(mysql_type=MySQLType.FLOAT, length=12, decimal=0)),
        ("FLOAT", "float", None, None, DataType(mysql_type=MySQLType.FLOAT)),
        (
            "DECIMAL",
            "bytes",
            DECIMAL,
            {"scale": "4", "connect.decimal.precision": "10"},
            DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4),
        ),
        ("DECIMAL", "double", None, None, DataType(mysql_type=MySQLType.DECIMAL)),
        ("TEXT", "string", None, None, DataType(mysql_type=MySQLType.TEXT)),
    ],
)
def test_type_from_tidb_type(
    tidb_type: str, kind: str, name: str | None, parameters: dict[str, Any] | None, expected: DataType
) -> None:
    assert type_from_tidb(tidb_type, kind, name, parameters) == expected


# -------------------------------------------------------------------------- propagated source column types


def source(type_name: str, length: int | None = None, scale: int | None = None) -> dict[str, Any]:
    parameters = {f"{SOURCE}.type": type_name}
    if length is not None:
        parameters[f"{SOURCE}.length"] = str(length)
    if scale is not None:
        parameters[f"{SOURCE}.scale"] = str(scale)
    return parameters


VARCHAR = DataType(mysql_type=MySQLType.VARCHAR)


@pytest.mark.parametrize(
    ("wire", "parameters", "expected"),
    [
        (VARCHAR, None, VARCHAR),
        (VARCHAR, {f"{SOURCE}.type": 5}, VARCHAR),  # not a type name
        (VARCHAR, source("NOT A TYPE"), VARCHAR),
        (VARCHAR, source("VARCHAR", 40), DataType(mysql_type=MySQLType.VARCHAR, length=40)),
        (VARCHAR, source("VARCHAR"), VARCHAR),
        (VARCHAR, source("TEXT", 65535), DataType(mysql_type=MySQLType.TEXT)),  # not a sized type
        (VARCHAR, source("INT"), VARCHAR),  # the wire's string cannot carry an INT
        (
            DataType(mysql_type=MySQLType.DOUBLE),
            source("DECIMAL", 10, 4),
            DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4),
        ),
        (VARCHAR, source("DECIMAL", 10), DataType(mysql_type=MySQLType.DECIMAL, length=10)),
        (
            DataType(mysql_type=MySQLType.DECIMAL, length=20, decimal=0),
            source("BIGINT UNSIGNED", 20),
            DataType(mysql_type=MySQLType.BIGINT, unsigned=True, length=20),
        ),
        (VARCHAR, source("VARBINARY", 16), DataType(mysql_type=MySQLType.VARBINARY, length=16)),
        (
            DataType(mysql_type=MySQLType.DATETIME, decimal=6),
            source("DATETIME", 3),  # MySQL: the fsp in length
            DataType(mysql_type=MySQLType.DATETIME, decimal=3),
        ),
        (
            DataType(mysql_type=MySQLType.TIMESTAMP),  # ZonedTimestamp
            source("TIMESTAMP", 26, 0),  # PostgreSQL: the fsp in scale, length the display size
            DataType(mysql_type=MySQLType.TIMESTAMP, decimal=0),
        ),
        (
            DataType(mysql_type=MySQLType.TIME, decimal=6),
            source("TIME", 6),
            DataType(mysql_type=MySQLType.TIME, decimal=6),
        ),
        (
            DataType(mysql_type=MySQLType.TIME, decimal=3),
            source("TIME", 19),  # beyond 6: not an fsp, the wire's stays
            DataType(mysql_type=MySQLType.TIME, decimal=3),
        ),
        (
            DataType(mysql_type=MySQLType.DATETIME, decimal=3),
            source("DATETIME"),
            DataType(mysql_type=MySQLType.DATETIME, decimal=3),
        ),
        (
            DataType(mysql_type=MySQLType.BIT, length=12, unsigned=True),
            source("BIT", 12),
            DataType(mysql_type=MySQLType.BIT, length=12),
        ),
        (
            DataType(mysql_type=MySQLType.BIT, length=12, unsigned=True),
            source("BIT"),
            DataType(mysql_type=MySQLType.BIT, length=12),
        ),
        (
            DataType(mysql_type=MySQLType.ENUM, elements=("a", "b")),
            source("ENUM", 1),
            DataType(mysql_type=MySQLType.ENUM, elements=("a", "b")),
        ),
    ],
)
def test_type_from_source(wire: DataType, parameters: dict[str, Any] | None, expected: DataType) -> None:
    assert type_from_source(wire, parameters) == expected


@pytest.mark.parametrize(
    ("kind", "name", "parameters", "expected"),
    [
        ("int8", None, None, DataType(mysql_type=MySQLType.TINYINT)),
        ("int64", None, None, DataType(mysql_type=MySQLType.BIGINT)),
        ("boolean", None, None, DataType(mysql_type=MySQLType.BIT, length=1, unsigned=True)),
        ("float", None, None, DataType(mysql_type=MySQLType.FLOAT)),
        ("double", None, None, DataType(mysql_type=MySQLType.DOUBLE)),
        ("bytes", None, None, DataType(mysql_type=MySQLType.VARBINARY)),
        ("struct", None, None, DataType(mysql_type=MySQLType.JSON)),
        ("map", None, None, DataType(mysql_type=MySQLType.JSON)),
        (
            "bytes",
            "io.debezium.data.Bits",
            {"length": "3"},
            DataType(mysql_type=MySQLType.BIT, length=3, unsigned=True),
        ),
        ("string", "io.debezium.data.Enum", {"allowed": ""}, DataType(mysql_type=MySQLType.ENUM, elements=())),
        (
            "string",
            "io.debezium.data.EnumSet",
            {"allowed": "a\\,b"},
            DataType(mysql_type=MySQLType.SET, elements=("a\\", "b")),
        ),
        ("int32", "io.debezium.time.Date", None, DataType(mysql_type=MySQLType.DATE)),
        ("string", "some.unknown.Name", None, VARCHAR),
    ],
)
def test_type_from_the_wire_alone(kind: str, name: str | None, parameters: Any, expected: DataType) -> None:
    assert type_from_wire(kind, name, parameters) == expected


# ------------------------------------------------------------------------------------------ conversions


def convert(field: dict[str, Any], value: Any, modes: Modes = MODES, column: Column | None = None) -> Any:
    return reader_from_field({"field": "c", **field}, column, modes).convert(value)


def rejects(field: dict[str, Any], value: Any, match: str, modes: Modes = MODES) -> None:
    with pytest.raises(CONVERSION_ERRORS, match=match):
        convert(field, value, modes)


def tidb(type_name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "tidb_type": type_name, **extra}


@pytest.mark.parametrize(
    ("type_name", "kind", "low", "high"),
    [
        ("TINYINT", "int16", -128, 127),
        ("TINYINT UNSIGNED", "int16", 0, 255),
        ("SMALLINT", "int16", -32768, 32767),
        ("INT UNSIGNED", "int64", 0, 4294967295),
        ("BIGINT", "int64", -(1 << 63), (1 << 63) - 1),
    ],
)
def test_integers_are_bounded_by_their_column_type(type_name: str, kind: str, low: int, high: int) -> None:
    field = tidb(type_name, kind)
    assert convert(field, low) == low
    assert convert(field, high) == high
    rejects(field, low - 1, rf"^{low - 1} is out of range \[{low}, {high}\]")
    rejects(field, high + 1, rf"^{high + 1} is out of range \[{low}, {high}\]")
    rejects(field, "1", "expected an integer, got string")


def test_bigint_unsigned_arrives_as_twos_complement() -> None:
    field = tidb("BIGINT UNSIGNED", "int64")
    assert convert(field, -1) == (1 << 64) - 1
    assert convert(field, 5) == 5
    rejects(field, 1.0, "expected an integer, got number")


def test_bigint_unsigned_as_a_precise_decimal() -> None:
    field = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "0"}, **source_params("BIGINT UNSIGNED", 20)}
    assert convert(field, b64((18446744073709551615).to_bytes(9, "big", signed=True))) == 18446744073709551615
    rejects(field, b64((1 << 64).to_bytes(9, "big", signed=True)), "out of range")


def source_params(type_name: str, length: int) -> dict[str, Any]:
    return {"parameters": {"scale": "0", **source(type_name, length)}}


def test_bits_are_little_endian_and_bounded_by_the_length() -> None:
    field = {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "12"}}
    assert convert(field, b64(b"\xff\x0f")) == 4095
    assert convert(field, b64(b"\x01\x02")) == 0x0201
    rejects(field, b64(b"\xff\x1f"), r"^8191 is out of range \[0, 4095\]")
    assert convert(tidb("BIT", "boolean"), True) == 1
    assert convert(tidb("BIT", "boolean"), False) == 0
    untyped = {"type": "bytes", "name": "io.debezium.data.Bits", "parameters": {"length": "12"}}
    as_bytes = Column(name="c", data_type=DataType(mysql_type=MySQLType.VARBINARY))
    assert convert(untyped, b64(b"\xff\xff\x01"), column=as_bytes) == 0x1FFFF  # no BIT column: no bound


def test_floats() -> None:
    assert convert({"type": "float"}, 9.899999618530273) == 9.9
    assert convert(tidb("FLOAT", "double"), 0.1) == 0.1
    assert convert({"type": "double"}, 0.30000000000000004) == 0.30000000000000004
    assert convert({"type": "double"}, 3) == 3.0
    assert convert({"type": "double"}, Decimal("2.5")) == 2.5
    rejects({"type": "double"}, "1.5", "expected a number, got string")


def test_variable_scale_decimal() -> None:
    field = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}
    value = convert(field, {"scale": 3, "value": b64((-12345).to_bytes(2, "big", signed=True))})
    assert str(value) == "-12.345"
    assert str(convert(field, {"scale": -2, "value": b64(b"\x05")})) == "5E+2"
    assert str(convert(field, {"scale": 1000, "value": b64(b"\x01")})) == "1E-1000"
    rejects(field, {"scale": 1001, "value": b64(b"\x01")}, "scale 1001 is out of range")
    rejects(field, {"scale": -1001, "value": b64(b"\x01")}, "scale -1001 is out of range")
    rejects(field, [3, "AQ=="], r"expected a \{scale, value\} object, got array")


def test_precise_decimals_need_their_scale() -> None:
    with pytest.raises(Exception, match="needs its scale"):
        reader_from_field({"field": "c", "type": "bytes", "name": DECIMAL}, None, MODES)
    field = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "2"}}
    assert str(convert(field, b64((-150).to_bytes(2, "big", signed=True)))) == "-1.50"


def test_decimal_numbers_keep_or_round_their_digits() -> None:
    exact = {"type": "string", "parameters": source("DECIMAL", 10, 2)}
    assert str(convert(exact, "1.5")) == "1.50"
    assert str(convert(exact, "1.555")) == "1.555"  # an exact value past the scale is kept, never rounded
    rejects(exact, "abc", "not a decimal: 'abc'")
    assert convert(exact, "NAN").is_nan()  # PostgreSQL NUMERIC's NaN, as Debezium's string mode writes it
    double = {"type": "double", "parameters": source("DECIMAL", 10, 2)}
    assert str(convert(double, 1.555)) == "1.56"  # a double only approximates: rounded half-even
    assert str(convert(double, 2)) == "2.00"
    rejects(double, float("inf"), "not a finite decimal")
    rejects(double, [1], "expected a number, got array")
    wide = {"type": "string", "parameters": source("DECIMAL", 65, 30)}
    rejects(wide, "1e80", "does not fit scale 30")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ({"type": "struct", "name": "io.debezium.data.geometry.Point"}, {"x": 1, "y": 2.0}, Geometry(wkb=POINT_1_2)),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Point"},
            {"x": 1.0, "y": 2.0, "srid": 4326},
            Geometry(wkb=POINT_1_2, srid=4326),
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Point"},
            {"x": 9.0, "y": 9.0, "wkb": b64(POINT_1_2), "srid": 3857},
            Geometry(wkb=POINT_1_2, srid=3857),  # the WKB wins over x/y
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Geometry"},
            {"wkb": b64(POINT_1_2), "srid": None},
            Geometry(wkb=POINT_1_2),
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Geography"},
            {"wkb": b64(b"\x00" + POINT_1_2[1:]), "srid": 4326},
            Geometry(wkb=b"\x00" + POINT_1_2[1:], srid=4326),
        ),
    ],
)
def test_spatial_values(field: dict[str, Any], value: Any, expected: Geometry) -> None:
    assert convert(field, value) == expected


def test_spatial_values_rejected() -> None:
    geometry = {"type": "struct", "name": "io.debezium.data.geometry.Geometry"}
    rejects(geometry, {"wkb": b64(b"\x02" + POINT_1_2[1:])}, "not OGC Well-Known Binary")
    rejects(geometry, {"wkb": b64(b"\x01\x01\x00\x00")}, "not OGC Well-Known Binary")
    assert convert(geometry, {"wkb": b64(POINT_1_2[:5])}) == Geometry(wkb=POINT_1_2[:5])  # 5 bytes: the least
    rejects(geometry, {"wkb": b64(POINT_1_2), "srid": "4326"}, "expected an integer")
    rejects(geometry, "AQ==", r"expected a \{wkb, srid\} object, got string")
    point = {"type": "struct", "name": "io.debezium.data.geometry.Point"}
    rejects(point, [1, 2], r"expected an \{x, y\} object, got array")
    rejects(point, {"x": 1.0, "y": 2.0, "srid": 1.5}, "expected an integer")


def test_documents_structs_and_maps() -> None:
    struct = {"type": "struct"}
    assert convert(struct, {"a": Decimal("1"), "b": [Decimal("2.5"), Decimal("3.0")], "c": "x"}) == {
        "a": 1,
        "b": [2.5, 3.0],
        "c": "x",
    }
    assert type(convert(struct, {"a": Decimal("3.0")})["a"]) is float  # written with a fraction: stays one
    assert type(convert(struct, {"a": Decimal("1E+2")})["a"]) is int
    rejects(struct, [1], "expected an object, got array")
    a_map = {"type": "map"}
    assert convert(a_map, {"k": "v"}) == {"k": "v"}
    assert convert(a_map, [[1, "one"]]) == [[1, "one"]]
    rejects(a_map, "k=v", "expected an object or an array of pairs, got string")


def test_json_and_sets() -> None:
    json_field = {"type": "string", "name": "io.debezium.data.Json"}
    assert convert(json_field, '{"n": 12345678901234567890123}') == {"n": 12345678901234567890123}  # no float
    assert convert(json_field, '{"n": 1.5, "s": "é"}') == {"n": 1.5, "s": "é"}
    rejects(json_field, "{", "not a JSON document")
    set_field = {"type": "string", "name": "io.debezium.data.EnumSet", "parameters": {"allowed": "x,y,z"}}
    assert convert(set_field, "z,x") == ("x", "z")
    assert convert(set_field, "z,x") == ("x", "z")  # memoised, the same answer
    assert convert(set_field, "") == ()
    rejects(set_field, "q", "'q' is not a member")
    rejects(set_field, 3, "expected a string, got integer")


def test_arrays_convert_each_element() -> None:
    field = {"type": "array", "items": {"type": "int32", "name": "io.debezium.time.Date"}}
    assert convert(field, [0, None, 1]) == [dt.date(1970, 1, 1), None, dt.date(1970, 1, 2)]
    rejects(field, 0, "expected an array, got integer")
    vector = {"type": "array", "name": "io.debezium.data.FloatVector", "items": {"type": "float"}}
    assert convert(vector, [0.1, 2]) == [0.1, 2.0]


def test_binary_handling_modes() -> None:
    field = {"type": "string", "parameters": source("VARBINARY", 4)}
    assert convert(field, "AQL/", Modes(binary=BinaryMode.BASE64)) == b"\x01\x02\xff"
    assert convert(field, "AQL_", Modes(binary=BinaryMode.BASE64_URL_SAFE)) == b"\x01\x02\xff"
    assert convert(field, "0102ff", Modes(binary=BinaryMode.HEX)) == b"\x01\x02\xff"
    assert convert({"type": "bytes"}, "AQL/", Modes(binary=BinaryMode.HEX)) == b"\x01\x02\xff"  # bytes: base64
    rejects(field, "AQL", "[Ii]ncorrect padding|number of data characters", Modes(binary=BinaryMode.BASE64))


def test_schemaless_columns_follow_the_connector_settings() -> None:
    def read(data_type: DataType, value: Any, modes: Modes = MODES) -> Any:
        return reader_from_column(Column(name="c", data_type=data_type), modes).convert(value)

    assert read(DataType(mysql_type=MySQLType.BIGINT, unsigned=True), -2) == (1 << 64) - 2
    with pytest.raises(CONVERSION_ERRORS, match="out of range"):
        read(DataType(mysql_type=MySQLType.TINYINT), 128)
    assert read(DataType(mysql_type=MySQLType.BIT, length=1), True) == 1
    assert read(DataType(mysql_type=MySQLType.BIT, length=12), b64(b"\xff\x0f")) == 4095
    scale_4 = DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4)
    assert str(read(scale_4, 12.34)) == "12.3400"
    assert str(read(scale_4, "12.34", Modes(decimal=DecimalMode.STRING))) == "12.3400"
    assert str(read(scale_4, b64((123400).to_bytes(3, "big")), Modes(decimal=DecimalMode.PRECISE))) == "12.3400"
    assert read(DataType(mysql_type=MySQLType.JSON), {"a": "1"}) == {"a": "1"}  # hstore as a map
    assert read(DataType(mysql_type=MySQLType.JSON), '{"a": 1}') == {"a": 1}
    assert read(DataType(mysql_type=MySQLType.VARBINARY), "AQI=") == b"\x01\x02"
    assert read(DataType(mysql_type=MySQLType.POINT), {"x": 1.0, "y": 2.0}) == Geometry(wkb=POINT_1_2)
    assert read(DataType(mysql_type=MySQLType.GEOMETRY), {"wkb": b64(POINT_1_2), "srid": 0}) == Geometry(
        wkb=POINT_1_2, srid=0
    )
    assert read(DataType(mysql_type=MySQLType.ARRAY, item=DataType(mysql_type=MySQLType.INT)), [1, None]) == [1, None]
    assert read(DataType(mysql_type=MySQLType.ARRAY), [{"a": Decimal("1")}]) == [{"a": 1}]
    assert read(DataType(mysql_type=MySQLType.VECTOR), "[1.5,2]") == [1.5, 2.0]


# ------------------------------------------------------------------------ edges the tables above miss


def user(data_type: DataType) -> Column:
    return Column(name="c", data_type=data_type)


def test_a_users_column_type_picks_the_converter_for_a_plain_wire_form() -> None:
    """Fields without a logical name, typed by the user's TableSchema (schemaless-to-typed streams)."""
    decimal_2 = user(DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=2))
    assert str(convert({"type": "bytes"}, b64((-150).to_bytes(2, "big", signed=True)), column=decimal_2)) == "-1.50"
    assert str(convert({"type": "float"}, 1.555, column=decimal_2)) == "1.56"  # a float: rounded to the scale
    assert str(convert({"type": "string"}, "1.555", column=decimal_2)) == "1.555"  # text: exact, kept
    assert convert({"type": "int32"}, 0, column=user(DataType(mysql_type=MySQLType.DATE))) == dt.date(1970, 1, 1)
    assert convert({"type": "int32"}, 5, column=user(DataType(mysql_type=MySQLType.INT))) == 5
    assert convert({"type": "bytes"}, "/w8=", column=user(DataType(mysql_type=MySQLType.BIT, length=12))) == 4095
    enum = user(DataType(mysql_type=MySQLType.ENUM, elements=("red", "green")))
    assert convert({"type": "string"}, "red", column=enum) == "red"
    dates = user(DataType(mysql_type=MySQLType.ARRAY, item=DataType(mysql_type=MySQLType.DATE)))
    assert convert({"type": "array", "items": {"type": "int32"}}, [1], column=dates) == [dt.date(1970, 1, 2)]
    with pytest.raises(Exception, match=r"^unsupported field schema type 'weird'$"):
        reader_from_field({"field": "c", "type": "weird"}, user(DataType(mysql_type=MySQLType.INT)), MODES)


def test_exact_and_wide_decimals() -> None:
    numeric = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "2"}}
    assert str(convert(numeric, Decimal("1.555"))) == "1.555"  # an exact NUMERIC past the scale: kept as written
    wide = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "30"}}
    digits = 10**39 + 1  # 40 digits: beyond the default 28-digit context
    assert str(convert(wide, b64(digits.to_bytes(17, "big", signed=True)))) == "1" + "0" * 9 + "." + "0" * 29 + "1"
    variable = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"}
    value = convert(variable, {"scale": 30, "value": b64(digits.to_bytes(17, "big", signed=True))})
    assert str(value) == "1" + "0" * 9 + "." + "0" * 29 + "1"
    assert str(convert(variable, {"scale": -1000, "value": b64(b"\x01")})) == "1E+1000"
    no_scale = {"type": "string", "parameters": source("DECIMAL")}
    assert str(convert(no_scale, "1.5")) == "1.5"


def test_integers_at_zero_and_unbounded_bits() -> None:
    assert convert(tidb("BIGINT UNSIGNED", "int64"), 0) == 0
    assert convert(tidb("BIT", "boolean"), 1) == 1
    bits = {"type": "bytes", "name": "io.debezium.data.Bits"}  # no length parameter: no bound
    assert convert(bits, b64(b"\xff" * 9)) == (1 << 72) - 1
    precise = {"type": "bytes", "name": DECIMAL, **source_params("BIGINT UNSIGNED", 20)}
    rejects(precise, Decimal("1.5"), r"^1\.5 is not an integer$")  # a NUMERIC with a fraction


def test_untyped_values_are_text() -> None:
    """A column no schema types is text, whatever JSON kind each value has (one type per column)."""
    assert [UNTYPED(v) for v in (True, False, "x", 7, 1.5, None)] == ["true", "false", "x", "7", "1.5", "null"]
    assert UNTYPED(Decimal("3.140000104904175")) == "3.140000104904175"  # the digits as written
    assert UNTYPED(Decimal("5.0")) == "5.0" and UNTYPED(Decimal("1E+2")) == "1E+2"
    assert UNTYPED(12345678901234567890123) == "12345678901234567890123"
    assert UNTYPED({"wkb": "AQ==", "srid": None, "n": [Decimal("2.5"), 1]}) == '{"wkb":"AQ==","srid":null,"n":[2.5,1]}'


def test_documents_keep_json_number_types_inside_lists() -> None:
    document = convert({"type": "struct"}, {"b": [Decimal("2.5"), Decimal("3")]})
    assert [type(item) for item in document["b"]] == [float, int]


def test_json_with_a_lone_surrogate() -> None:
    assert convert({"type": "string", "name": "io.debezium.data.Json"}, '{"s": "\ud800"}') == {"s": "\ud800"}


def test_zoned_values_use_the_decoder_zone_not_the_hosts(host_zone: Callable[[str], None]) -> None:
    host_zone("Asia/Shanghai")  # not UTC: a value converted in the host's zone instead of the decoder's shows
    iso = {"type": "string", "name": "io.debezium.time.IsoTimestamp"}
    assert convert(iso, "2019-07-09T02:28:57.123456+08:00") == dt.datetime(2019, 7, 8, 18, 28, 57, 123456)
    zoned = {"type": "string", "name": "io.debezium.time.ZonedTimestamp"}
    assert convert(zoned, "2024-01-01T16:00:00+08:00").utcoffset() == dt.timedelta(0)
    schemaless = reader_from_column(Column(name="c", data_type=DataType(mysql_type=MySQLType.TIMESTAMP)), MODES)
    assert schemaless.convert("2024-01-01T16:00:00+08:00").utcoffset() == dt.timedelta(0)


def test_schemaless_time_precision_and_kinds() -> None:
    def read(data_type: DataType, value: Any, modes: Modes = MODES) -> Any:
        return reader_from_column(Column(name="c", data_type=data_type), modes).convert(value)

    adaptive = Modes(time_precision=TimePrecisionMode.ADAPTIVE)
    assert read(DataType(mysql_type=MySQLType.DATETIME, decimal=3), 1000) == dt.datetime(1970, 1, 1, 0, 0, 1)
    assert read(DataType(mysql_type=MySQLType.DATETIME, decimal=4), 1000) == dt.datetime(1970, 1, 1, 0, 0, 0, 1000)
    assert read(DataType(mysql_type=MySQLType.TIME, decimal=3), 1000, adaptive) == dt.timedelta(seconds=1)
    assert read(DataType(mysql_type=MySQLType.TIME, decimal=4), 1000, adaptive) == dt.timedelta(milliseconds=1)
    assert read(DataType(mysql_type=MySQLType.TIME, decimal=0), 1000) == dt.timedelta(milliseconds=1)
    assert read(DataType(mysql_type=MySQLType.BIGINT), -5) == -5
    assert read(DataType(mysql_type=MySQLType.SET, elements=("x", "y", "z")), "z,x") == ("x", "z")
    dates = DataType(mysql_type=MySQLType.ARRAY, item=DataType(mysql_type=MySQLType.DATE))
    assert read(dates, [0, None]) == [dt.date(1970, 1, 1), None]
    scale_2 = DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=2)
    assert str(read(scale_2, Decimal("1.555"))) == "1.56"  # double mode: the number is a double's digits
    assert str(read(scale_2, "1.555", Modes(decimal=DecimalMode.STRING))) == "1.555"
    column = Column(name="c", data_type=scale_2)
    assert reader_from_column(column, MODES).column is column


@pytest.mark.parametrize(
    ("wire", "parameters", "expected"),
    [
        (
            DataType(mysql_type=MySQLType.TIME, decimal=3),
            source("TIME", 6),
            DataType(mysql_type=MySQLType.TIME, decimal=6),
        ),
        (
            DataType(mysql_type=MySQLType.DATETIME, decimal=3),
            source("DATETIME", 7),
            DataType(mysql_type=MySQLType.DATETIME, decimal=3),
        ),
        (
            DataType(mysql_type=MySQLType.BIT, length=12, unsigned=True),
            source("BIT", 5),
            DataType(mysql_type=MySQLType.BIT, length=5),
        ),
        (
            DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4),
            source("DECIMAL", 12),
            DataType(mysql_type=MySQLType.DECIMAL, length=12, decimal=4),
        ),
    ],
)
def test_type_from_source_boundaries(wire: DataType, parameters: dict[str, Any], expected: DataType) -> None:
    assert type_from_source(wire, parameters) == expected


def test_a_tidb_type_that_is_not_decimal_ignores_the_wire_precision() -> None:
    parameters = {"scale": "0", "connect.decimal.precision": "20"}
    expected = DataType(mysql_type=MySQLType.BIGINT, unsigned=True)
    assert type_from_tidb("BIGINT UNSIGNED", "bytes", DECIMAL, parameters) == expected


def test_columns_from_field_schemas() -> None:
    micro = {"field": "c", "type": "int64", "name": "io.debezium.time.MicroTimestamp", "tidb_type": "DATETIME"}
    assert reader_from_field(micro, None, MODES).column.data_type == DataType(  # type: ignore[union-attr]
        mysql_type=MySQLType.DATETIME, decimal=6
    )
    enum = {
        "field": "c",
        "type": "string",
        "name": "io.debezium.data.Enum",
        "tidb_type": "ENUM",
        "parameters": {"allowed": "a,b"},
    }
    assert reader_from_field(enum, None, MODES).column.data_type.elements == ("a", "b")  # type: ignore[union-attr]
    plain = reader_from_field({"field": "price", "type": "int32"}, None, MODES).column
    assert plain == Column(name="price", data_type=DataType(mysql_type=MySQLType.INT), nullable=True)
    commented = {
        "field": "c_1",
        "type": "int32",
        "optional": False,
        "parameters": {f"{SOURCE}.name": "", f"{SOURCE}.comment": "the price"},
    }
    column = reader_from_field(commented, None, MODES).column
    assert column is not None
    assert (column.name, column.nullable, column.comment) == ("c_1", False, "the price")
    odd = {"field": "c", "type": "int32", "parameters": {f"{SOURCE}.comment": 5}}
    assert reader_from_field(odd, None, MODES).column.comment is None  # type: ignore[union-attr]
    as_json = user(DataType(mysql_type=MySQLType.JSON))
    assert convert({"type": "array", "items": {"type": "int32"}}, [1, 2], column=as_json) == [1, 2]


@pytest.mark.parametrize(
    ("field", "reason"),
    [
        ({"field": "c", "type": 5}, r"^field schema has no string 'type'$"),
        ({"field": "c", "type": "int32", "name": 5}, r"^field schema 'name' is not a string$"),
        ({"field": "c", "type": "int32", "parameters": []}, r"^field schema 'parameters' is not an object$"),
        ({"type": "int32"}, r"^field schema has no string 'field'$"),
        ({"field": "c", "type": "int32", "tidb_type": 5}, r"^'tidb_type' is not a string$"),
        ({"field": "c", "type": "array"}, r"^array field schema has no 'items' object$"),
        ({"field": "c", "type": "weird", "name": "x.Y"}, r"^unsupported field schema type 'weird' \(x\.Y\)$"),
        ({"field": "c", "type": "weird"}, r"^unsupported field schema type 'weird'$"),
        (
            {"field": "c", "type": "bytes", "name": DECIMAL},
            r"^a precise DECIMAL needs its scale \(schema parameter or user TableSchema\)$",
        ),
        (
            {"field": "c", "type": "bytes", "name": DECIMAL, "parameters": {"scale": "x"}},
            r"^parameter scale is not an integer: 'x'$",
        ),
    ],
)
def test_malformed_field_schemas(field: dict[str, Any], reason: str) -> None:
    with pytest.raises(Exception, match=reason):
        reader_from_field(field, None, MODES)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ({"type": "int32", "name": "io.debezium.time.Date"}, 10**18, r"days from 1970-01-01 is outside"),
        ({"type": "string", "name": "io.debezium.time.IsoDate"}, "2024-13-01Z", r"^not an ISO date: '2024-13-01Z'$"),
        ({"type": "string", "name": "io.debezium.time.IsoTime"}, "25:00:00Z", r"^not an ISO time: '25:00:00Z'$"),
        ({"type": "string", "name": "io.debezium.time.IsoTimestamp"}, "x", r"^not an ISO timestamp: 'x'$"),
        ({"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "x", r"^not an ISO timestamp with zone: 'x'$"),
        ({"type": "string", "name": "io.debezium.time.ZonedTime"}, "x", r"^not an ISO time with offset: 'x'$"),
        ({"type": "string", "name": "io.debezium.time.ZonedTime"}, "10:00:00", r"^ZonedTime without a zone"),
        (
            {"type": "int64", "name": "io.debezium.time.MicroDuration"},
            10**23,
            r"^100000000000000000000000 us is beyond the largest duration \(999999999 days\)$",
        ),
        (
            {"type": "struct", "name": "io.debezium.data.geometry.Geometry"},
            {"wkb": b64(b"\x02\x01\x00\x00\x00")},
            r"^wkb is not OGC Well-Known Binary$",
        ),
    ],
)
def test_malformed_values_name_the_reason(field: dict[str, Any], value: Any, reason: str) -> None:
    rejects(field, value, reason)
