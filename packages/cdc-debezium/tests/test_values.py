"""Column types from field schemas (``tidb_type``, propagated source types, the wire alone) and the values each
wire form converts to, driven field by field through `reader_from_field`."""

from __future__ import annotations

import base64
import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from cdc_core.schema import Column
from cdc_core.textual import wkb_point
from cdc_core.types import DataType, MySQLType
from cdc_core.values import Geometry
from cdc_debezium.inbound import (
    CONVERSION_ERRORS,
    BinaryMode,
    DecimalMode,
    Modes,
    reader_from_column,
    reader_from_field,
    type_from_source,
    type_from_tidb,
    type_from_wire,
)

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
        ("DATETIME", "int64", "io.debezium.time.Timestamp", None, DataType(mysql_type=MySQLType.DATETIME)),
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
        ("string", "io.debezium.data.Enum", None, DataType(mysql_type=MySQLType.ENUM, elements=())),
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
    rejects(exact, "NaN", "not a finite decimal")
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
