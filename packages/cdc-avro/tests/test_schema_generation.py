"""Generated schemas pinned byte for byte to what TiCDC's Go encoder registers (reference 4.2, 4.3)."""

from __future__ import annotations

import json
from typing import Any

import fastavro
import pytest

from cdc_avro.names import key_subject, record_namespace, sanitize_topic, value_subject
from cdc_avro.schemagen import SchemaOptions, escape_member, key_record, value_record
from cdc_avro.tidbtypes import FROM_TIDB_TYPE, TIDB_TYPE, BigintUnsignedMode, DecimalMode
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.textual import split_members
from cdc_core.types import NOT_IN_TIDB, DataType, MySQLType
from cdc_testing.strategies import kitchen_sink_schema


def _col(name: str, type_name: str, *, nullable: bool = True, default: str | None = None, **kw: Any) -> Column:
    data_type = DataType(mysql_type=MySQLType(type_name), **kw)
    return Column(name=name, data_type=data_type, nullable=nullable, default=default)


TABLE = TableSchema(
    database="my.db",
    table="t-1",
    columns=[
        _col("id", "int", nullable=False, length=11),
        _col("name", "varchar", length=32),
        _col("price", "decimal", length=10, decimal=4, default="1.5"),
        _col("ratio", "float", default="3.14"),
        _col("flags", "bit", nullable=False, length=5),
        _col("color", "enum", nullable=False, default="c", elements=("a,b", "c")),
        _col("big", "bigint", nullable=False, unsigned=True, default="18446744073709551615"),
        _col("1st col", "int", unsigned=True),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)

EXPECTED_VALUE = (
    '{"type":"record","name":"t_1","namespace":"default.my_db","fields":['
    '{"name":"id","type":{"type":"int","connect.parameters":{"tidb_type":"INT"}}},'
    '{"default":null,"name":"name","type":["null",{"type":"string","connect.parameters":{"tidb_type":"TEXT"}}]},'
    '{"default":null,"name":"price","type":["null",{"type":"bytes","connect.parameters":{"tidb_type":"DECIMAL"},'
    '"logicalType":"decimal","precision":10,"scale":4}]},'
    '{"default":3.140000104904175,"name":"ratio","type":[{"type":"float","connect.parameters":{"tidb_type":"FLOAT"}},'
    '"null"]},'
    '{"name":"flags","type":{"type":"bytes","connect.parameters":{"length":"5","tidb_type":"BIT"}}},'
    '{"default":"c","name":"color","type":{"type":"string","connect.parameters":{"allowed":"a\\\\,b,c",'
    '"tidb_type":"ENUM"}}},'
    '{"default":-1,"name":"big","type":{"type":"long","connect.parameters":{"tidb_type":"BIGINT UNSIGNED"}}},'
    '{"default":null,"name":"_1st_col","type":["null",{"type":"long","connect.parameters":'
    '{"tidb_type":"INT UNSIGNED"}}]},'
    '{"default":"","name":"_tidb_op","type":"string"},'
    '{"default":0,"name":"_tidb_commit_ts","type":"long"},'
    '{"default":0,"name":"_tidb_commit_physical_time","type":"long"}]}'
)


def test_value_schema_is_byte_identical_to_ticdc() -> None:
    plan = value_record(TABLE, SchemaOptions(tidb_extension=True))
    assert plan.schema_json == EXPECTED_VALUE
    fastavro.parse_schema(json.loads(plan.schema_json))  # and it is a valid Avro schema


def test_key_schema_has_handle_key_only_and_no_extension() -> None:
    plan = key_record(TABLE, SchemaOptions(tidb_extension=True))
    assert plan is not None
    assert plan.schema_json == (
        '{"type":"record","name":"t_1","namespace":"default.my_db","fields":['
        '{"name":"id","type":{"type":"int","connect.parameters":{"tidb_type":"INT"}}}]}'
    )


def test_key_record_absent_without_handle_key() -> None:
    table = TableSchema(database="d", table="t", columns=[_col("a", "int")])
    assert key_record(table, SchemaOptions()) is None


def test_string_modes_change_decimal_and_bigint_unsigned() -> None:
    options = SchemaOptions(decimal_mode=DecimalMode.STRING, bigint_mode=BigintUnsignedMode.STRING)
    fields = {f["name"]: f for f in json.loads(value_record(TABLE, options).schema_json)["fields"]}
    # a string DECIMAL keeps its default (only the logical type cannot carry one) and its text
    assert fields["price"] == {
        "default": "1.5",
        "name": "price",
        "type": [{"type": "string", "connect.parameters": {"tidb_type": "DECIMAL"}}, "null"],
    }
    assert fields["big"] == {
        "default": "18446744073709551615",
        "name": "big",
        "type": {"type": "string", "connect.parameters": {"tidb_type": "BIGINT UNSIGNED"}},
    }
    assert "_tidb_op" not in fields


def test_checksum_fields_follow_the_extension() -> None:
    options = SchemaOptions(
        decimal_mode=DecimalMode.STRING, bigint_mode=BigintUnsignedMode.STRING, tidb_extension=True, row_checksum=True
    )
    text = value_record(TABLE, options).schema_json
    assert text.endswith(
        '{"default":"","name":"_tidb_row_level_checksum","type":"string"},'
        '{"default":false,"name":"_tidb_corrupted","type":"boolean"},'
        '{"default":0,"name":"_tidb_checksum_version","type":"int"}]}'
    )


def test_namespace_and_subjects() -> None:
    assert record_namespace("S.chema", "N-amespace") == "N_amespace.S_chema"
    assert sanitize_topic("tidb.app.orders") == "tidb_app_orders"
    assert key_subject("tidb.app.orders") == "tidb_app_orders-key"
    assert value_subject("tidb.app.orders") == "tidb_app_orders-value"


def test_enum_members_escaped_and_split_back() -> None:
    members = ("a,b", "it''s", "plain", "")
    allowed = ",".join(escape_member(m) for m in members)
    assert allowed == "a\\,b,it's,plain,"
    assert split_members(allowed) == ("a,b", "it's", "plain", "")


def test_binary_and_bit_defaults_are_base64_as_go_marshals_byte_slices() -> None:
    table = TableSchema(
        database="d",
        table="t",
        columns=[_col("b", "varbinary", nullable=False, default="ab", length=4), _col("n", "int", default="7")],
    )
    fields = json.loads(value_record(table, SchemaOptions()).schema_json)["fields"]
    assert fields[0]["default"] == "YWI="
    assert fields[1] == {
        "default": 7,
        "name": "n",
        "type": [{"type": "int", "connect.parameters": {"tidb_type": "INT"}}, "null"],
    }


def test_tidb_type_tables_are_complete() -> None:
    assert set(TIDB_TYPE) == set(MySQLType) - NOT_IN_TIDB
    assert set(FROM_TIDB_TYPE) == set(TIDB_TYPE.values())


def test_kitchen_sink_schema_parses_for_every_mode() -> None:
    for decimal_mode in DecimalMode:
        for bigint_mode in BigintUnsignedMode:
            options = SchemaOptions(decimal_mode=decimal_mode, bigint_mode=bigint_mode, tidb_extension=True)
            plan = value_record(kitchen_sink_schema(), options)
            fastavro.parse_schema(json.loads(plan.schema_json))
            assert [f.name for f in plan.fields] == list(kitchen_sink_schema().column_names)


@pytest.mark.parametrize(("decimal_mode", "bigint_mode"), [(d, b) for d in DecimalMode for b in BigintUnsignedMode])
def test_schema_read_back_from_the_writer_schema_regenerates_it(
    decimal_mode: DecimalMode, bigint_mode: BigintUnsignedMode
) -> None:
    """A consumer's view of the table (types, nullability, defaults, key) writes the very same schema again."""
    import datetime as dt

    from cdc_avro.readers import record_reader

    for table in (TABLE, kitchen_sink_schema(), kitchen_sink_schema(nullable=False)):
        options = SchemaOptions(decimal_mode=decimal_mode, bigint_mode=bigint_mode, tidb_extension=True)
        text = value_record(table, options).schema_json
        reader = record_reader(text, dt.UTC)
        key = key_record(table, options)
        assert key is not None
        key_names = tuple(f.name for f in record_reader(key.schema_json, dt.UTC).fields)
        again = TableSchema(
            database=reader.database,
            table=reader.table,
            columns=[f.column for f in reader.fields],
            indexes=[Index(name="PRIMARY", columns=key_names, unique=True, primary=True)],
        )
        assert value_record(again, options).schema_json == text
        again_key = key_record(again, options)
        assert again_key is not None and again_key.schema_json == key.schema_json


# Reference section 4.3, one row per MySQL type: (Avro type, tidb_type) signed and unsigned, default modes.
TYPE_TABLE = {
    "tinyint": ("int", "INT", "int", "INT UNSIGNED"),
    "smallint": ("int", "INT", "int", "INT UNSIGNED"),
    "mediumint": ("int", "INT", "int", "INT UNSIGNED"),
    "int": ("int", "INT", "long", "INT UNSIGNED"),
    "bigint": ("long", "BIGINT", "long", "BIGINT UNSIGNED"),
    "float": ("float", "FLOAT", "float", "FLOAT"),
    "double": ("double", "DOUBLE", "double", "DOUBLE"),
    "decimal": ("bytes", "DECIMAL", "bytes", "DECIMAL"),
    "date": ("string", "DATE", "string", "DATE"),
    "datetime": ("string", "DATETIME", "string", "DATETIME"),
    "timestamp": ("string", "TIMESTAMP", "string", "TIMESTAMP"),
    "time": ("string", "TIME", "string", "TIME"),
    "year": ("int", "YEAR", "int", "YEAR"),
    "char": ("string", "TEXT", "string", "TEXT"),
    "varchar": ("string", "TEXT", "string", "TEXT"),
    "tinytext": ("string", "TEXT", "string", "TEXT"),
    "text": ("string", "TEXT", "string", "TEXT"),
    "mediumtext": ("string", "TEXT", "string", "TEXT"),
    "longtext": ("string", "TEXT", "string", "TEXT"),
    "binary": ("bytes", "BLOB", "bytes", "BLOB"),
    "varbinary": ("bytes", "BLOB", "bytes", "BLOB"),
    "tinyblob": ("bytes", "BLOB", "bytes", "BLOB"),
    "blob": ("bytes", "BLOB", "bytes", "BLOB"),
    "mediumblob": ("bytes", "BLOB", "bytes", "BLOB"),
    "longblob": ("bytes", "BLOB", "bytes", "BLOB"),
    "enum": ("string", "ENUM", "string", "ENUM"),
    "set": ("string", "SET", "string", "SET"),
    "bit": ("bytes", "BIT", "bytes", "BIT"),
    "json": ("string", "JSON", "string", "JSON"),
    "vector": ("string", "TiDBVECTORFloat32", "string", "TiDBVECTORFloat32"),
}


@pytest.mark.parametrize("type_name", sorted(TYPE_TABLE))
def test_every_mysql_type_maps_as_the_reference_says(type_name: str) -> None:
    assert set(TYPE_TABLE) == {t.value for t in MySQLType if t not in NOT_IN_TIDB}
    for unsigned, (avro, tidb) in ((False, TYPE_TABLE[type_name][:2]), (True, TYPE_TABLE[type_name][2:])):
        column = _col(
            "c", type_name, nullable=False, unsigned=unsigned, elements=("a",) if type_name in ("enum", "set") else None
        )
        table = TableSchema(database="d", table="t", columns=[column])
        (field,) = json.loads(value_record(table, SchemaOptions()).schema_json)["fields"]
        assert (field["type"]["type"], field["type"]["connect.parameters"]["tidb_type"]) == (avro, tidb)


@pytest.mark.parametrize(
    ("type_name", "default", "text"),
    [("float", "100", b'"default":100,'), ("double", "1e-7", b'"default":1e-7,'), ("double", "2.5", b'"default":2.5,')],
)
def test_float_defaults_are_printed_as_go_prints_float64(type_name: str, default: str, text: bytes) -> None:
    table = TableSchema(database="d", table="t", columns=[_col("f", type_name, nullable=False, default=default)])
    assert text in value_record(table, SchemaOptions()).schema_json.encode()
