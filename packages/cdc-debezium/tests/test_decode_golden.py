"""Golden decoding of the upstream corpus: every TiCDC message and the real Debezium 2.4 all-types row.

Expected values are worked out by hand from the messages, the protocol notes and the SQL of
``datatype.ddl.sql``/``datatype.dml.sql`` (session ``sql_mode=''``, ``time_zone='UTC'``), never by running
the decoder.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core.codec import Options
from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_core.values import written_fsp
from cdc_debezium import OPTIONS, DebeziumDecoder
from cdc_testing.corpus import corpus_files

EXTRACTED = "{repo}/pkg/sink/codec/debezium/codec_test.extracted/{name}.*.json"
TESTDATA = "*/pkg/sink/codec/debezium/testdata/"
REPOS = ("tiflow", "ticdc")
TICDC_META = {
    "version": "2.4.0.Final",
    "connector": "TiCDC",
    "cluster": "test_cluster",
    "cluster_id": "test_cluster",
    "source_ts_ms": 0,  # commit ts 1 has physical time 0
    "ts_ms": 1701326309000,  # the frozen encode clock
    "snapshot": "false",
    "server_id": 0,
    "file": "",
    "pos": 0,
    "row": 0,
    "thread": 0,
}


def _file(repo: str, name: str) -> Path:
    (path,) = corpus_files(EXTRACTED.format(repo=repo, name=name))
    return path


def decode(value: bytes, key: bytes | None = None, **options: object) -> list[Any]:
    message = Message(value=value, key=key, topic="t", partition=2, offset=9)
    return get_codec("debezium").decoder(options).decode(message)


def decode_pair(repo: str, key_name: str | None, value_name: str) -> Any:
    key = _file(repo, key_name).read_bytes() if key_name else None
    (event,) = decode(_file(repo, value_name).read_bytes(), key)
    return event


# ------------------------------------------------------------------------------------ TiCDC row messages

ROWS = [
    # (key file, value file, op, before, after, schema included)
    ("TestEncodeInsert.01", "TestEncodeInsert.02", Op.INSERT, None, {"tiny": 1}, False),
    ("TestEncodeInsert.03", "TestEncodeInsert.04", Op.INSERT, None, {"tiny": 1}, True),
    ("TestEncodeUpdate.01", "TestEncodeUpdate.02", Op.UPDATE, {"tiny": 2}, {"tiny": 1}, False),
    ("TestEncodeUpdate.03", "TestEncodeUpdate.04", Op.UPDATE, {"tiny": 2}, {"tiny": 1}, True),
    # output-old-value=false: no "before" key at all, so no old image
    ("TestEncodeUpdate.05", "TestEncodeUpdate.06", Op.UPDATE, None, {"tiny": 1}, False),
    ("TestEncodeDelete.01", "TestEncodeDelete.02", Op.DELETE, {"tiny": 2}, None, False),
    ("TestEncodeDelete.03", "TestEncodeDelete.04", Op.DELETE, {"tiny": 2}, None, True),
]


@pytest.mark.parametrize("repo", REPOS)
@pytest.mark.parametrize(("key", "value", "op", "before", "after", "with_schema"), ROWS)
def test_ticdc_rows(repo: str, key: str, value: str, op: Op, before: Any, after: Any, with_schema: bool) -> None:
    event = decode_pair(repo, key, value)
    if not with_schema:  # every column text: the one type a schemaless column has without a user schema
        before, after = ({k: str(v) for k, v in image.items()} if image else image for image in (before, after))
    assert event == RowChange(op=op, database="test", table="table1", before=before, after=after, commit_ts=1)
    assert event.meta == TICDC_META
    assert (event.source.topic, event.source.partition, event.source.offset) == ("t", 2, 9)
    if not with_schema:
        # schemaless without a user TableSchema: every column text, the key from the key document
        assert event.schema is not None and event.schema.primary_key == ("tiny",)
        assert [c.data_type.mysql_type for c in event.schema.columns] == [MySQLType.LONGTEXT]
        return
    (column,) = event.schema.columns
    # int16 with no tidb_type: the smallest MySQL type Kafka Connect's int16 holds
    assert column.name == "tiny" and column.data_type.mysql_type is MySQLType.SMALLINT
    # tiflow's test column is nullable, ticdc's is NOT NULL
    assert column.nullable is (repo == "tiflow")
    assert event.schema.primary_key == ("tiny",)  # from the key document


def test_ticdc_row_typed_by_user_schema_without_message_schema() -> None:
    schema = TableSchema(
        database="test",
        table="table1",
        columns=[Column(name="tiny", data_type=DataType(mysql_type=MySQLType.TINYINT, unsigned=True))],
    )
    decoder = DebeziumDecoder(Options([s for s in OPTIONS if s.for_decoder], protocol="debezium"), schemas=[schema])
    value = _file("tiflow", "TestEncodeUpdate.02").read_bytes()
    (event,) = decoder.decode(Message(value=value))
    assert event.before == {"tiny": 2} and event.after == {"tiny": 1}
    assert event.schema is schema


@pytest.mark.parametrize("repo", REPOS)
def test_ticdc_watermark(repo: str) -> None:
    event = decode_pair(repo, "TestCheckPointEvent.01", "TestCheckPointEvent.02")
    assert event == Watermark(ts=3)


# ------------------------------------------------------------------------------------- TiCDC DDL messages

ID_INT_NOT_NULL = Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False)
PK_ID = [Index(name="PRIMARY", columns=["id"], unique=True, primary=True)]


@pytest.mark.parametrize(("repo", "table", "length"), [("tiflow", "table1", 0), ("ticdc", "table2", 10)])
def test_ticdc_rename_table(repo: str, table: str, length: int | None) -> None:
    # tiflow's test builds the event with TableInfo table1 and PreTableInfo table2, ticdc's the other way
    # round; both write source.table = the new name and id = "old","new".
    event = decode_pair(repo, "TestDDLEvent.01", "TestDDLEvent.02")
    column = Column(name="id", data_type=DataType(mysql_type=MySQLType.INT, length=length), nullable=False)
    assert event == DDLEvent(
        ddl_type=DDLType.RENAME,
        sql="RENAME TABLE test.table1 to test.table2",
        database="test",
        table=table,
        commit_ts=1,
        table_schema=TableSchema(database="test", table=table, columns=[column], indexes=PK_ID),
        pre_table_schema=TableSchema(
            database="test", table="table2" if table == "table1" else "table1", columns=[column], indexes=PK_ID
        ),
    )
    old = "table2" if table == "table1" else "table1"
    assert event.meta["table_ids"] == [f"test.{old}", f"test.{table}"]
    assert event.meta["ts_ms"] == 1701326309000


@pytest.mark.parametrize(
    ("repo", "sql", "length"),
    [("tiflow", "CREATE TABLE test.table1", 0), ("ticdc", "CREATE TABLE test.table1(id int(10) primary key)", 10)],
)
def test_ticdc_create_table_without_schema(repo: str, sql: str, length: int | None) -> None:
    event = decode_pair(repo, "TestDDLEvent.03", "TestDDLEvent.04")
    column = Column(name="id", data_type=DataType(mysql_type=MySQLType.INT, length=length), nullable=False)
    assert event == DDLEvent(
        ddl_type=DDLType.CREATE,
        sql=sql,
        database="test",
        table="table1",
        commit_ts=1,
        table_schema=TableSchema(database="test", table="table1", columns=[column], indexes=PK_ID),
    )
    if repo == "ticdc":
        assert event.meta["default_charset"] == "utf8mb4"


@pytest.mark.parametrize("repo", REPOS)
def test_ticdc_drop_table(repo: str) -> None:
    event = decode_pair(repo, "TestDDLEvent.05", "TestDDLEvent.06")
    assert event == DDLEvent(
        ddl_type=DDLType.ERASE, sql="DROP TABLE test.table2", database="test", table="table2", commit_ts=1
    )


def test_every_corpus_file_decodes() -> None:
    """Every value file decodes to exactly one event; key files are rejected with a typed error."""
    from cdc_core.errors import DecodeError

    files = corpus_files("*/pkg/sink/codec/debezium/**/*.json")
    values = [f for f in files if ".key." not in f.name and not f.name.endswith(".key.json")]
    keys = [f for f in files if f not in values]
    assert len(values) == 2 * 12 and len(keys) == 2 * 12
    for path in values:
        assert len(decode(path.read_bytes())) == 1, path
    for path in keys:
        with pytest.raises(DecodeError, match="key"):
            decode(path.read_bytes())


# ------------------------------------------------------------------------ real Debezium 2.4 all-types row


def _t(name: str, **kwargs: Any) -> DataType:
    return DataType(mysql_type=MySQLType(name), **kwargs)


ABC = ("a", "b", "c")
# datatype.ddl.sql, written out by hand as the TableSchema a user would supply.
FOO_COLUMNS: list[tuple[str, DataType]] = [
    ("pk", _t("int")),
    *[(f"col_d_{s}", _t("date")) for s in ("2023", "1000", "9999", "0000")],
    ("col_dt", _t("datetime")),
    ("col_dt_fsp_0", _t("datetime", decimal=0)),
    ("col_dt_fsp_1", _t("datetime", decimal=1)),
    ("col_dt_fsp_4", _t("datetime", decimal=4)),
    ("col_dt_fsp_6", _t("datetime", decimal=6)),
    ("col_dt_0000", _t("datetime", decimal=6)),
    ("col_t", _t("time")),
    ("col_t_fsp_0", _t("time", decimal=0)),
    ("col_t_fsp_1", _t("time", decimal=1)),
    ("col_t_fsp_4", _t("time", decimal=4)),
    ("col_t_fsp_6", _t("time", decimal=6)),
    ("col_t_neg", _t("time", decimal=6)),
    ("col_ts", _t("timestamp")),
    ("col_ts_fsp_0", _t("timestamp", decimal=0)),
    ("col_ts_fsp_1", _t("timestamp", decimal=1)),
    ("col_ts_fsp_5", _t("timestamp", decimal=5)),
    ("col_ts_fsp_6", _t("timestamp", decimal=6)),
    ("col_y", _t("year")),
    ("col_bit_1", _t("bit", length=1)),
    ("col_bit_5", _t("bit", length=5)),
    ("col_bit_6", _t("bit", length=6)),
    ("col_bit_60", _t("bit", length=60)),
    ("col_varchar", _t("varchar", length=100)),
    ("col_char", _t("char", length=100)),
    ("col_varbinary", _t("varbinary", length=100)),
    ("col_binary", _t("binary", length=100)),
    ("col_blob", _t("blob")),
    ("col_decimal", _t("decimal", length=10, decimal=5)),
    ("col_numeric", _t("decimal", length=10, decimal=5)),
    ("col_float", _t("float")),
    ("col_double", _t("double")),
    ("col_int", _t("int")),
    ("col_int_unsigned", _t("int", unsigned=True)),
    ("col_tinyint", _t("tinyint")),
    ("col_tinyint_unsigned", _t("tinyint", unsigned=True)),
    ("col_smallint", _t("smallint")),
    ("col_smallint_unsigned", _t("smallint", unsigned=True)),
    ("col_mediumint", _t("mediumint")),
    ("col_mediumint_unsigned", _t("mediumint", unsigned=True)),
    ("col_bigint", _t("bigint")),
    ("col_bigint_unsigned", _t("bigint", unsigned=True)),
    ("col_enum", _t("enum", elements=ABC)),
    ("col_enum_invalid", _t("enum", elements=ABC)),
    ("col_set", _t("set", elements=ABC)),
    ("col_set_invalid", _t("set", elements=ABC)),
    ("col_json", _t("json")),
]
FOO = TableSchema(
    database="test",
    table="foo",
    columns=[Column(name=n, data_type=t, nullable=n != "pk") for n, t in FOO_COLUMNS],
    indexes=[Index(name="PRIMARY", columns=["pk"], unique=True, primary=True)],
)

UTC = dt.UTC
STAMP = dt.datetime(2023, 11, 30, 12, 34, 56)  # '2023-11-30 12:34:56.123456' rounded to fsp 0
CLOCK = dt.timedelta(hours=12, minutes=34, seconds=56)
# The row datatype.dml.sql inserted, as MySQL stores it (fractions rounded to each column's fsp).
FOO_ROW: dict[str, Any] = {
    "pk": 1,
    "col_d_2023": dt.date(2023, 11, 30),
    "col_d_1000": dt.date(1000, 1, 1),
    "col_d_9999": dt.date(9999, 12, 31),
    "col_d_0000": None,  # Debezium writes the zero date as null: a zero date and NULL look alike
    "col_dt": STAMP,
    "col_dt_fsp_0": STAMP,
    "col_dt_fsp_1": STAMP.replace(microsecond=100000),
    "col_dt_fsp_4": STAMP.replace(microsecond=123500),
    "col_dt_fsp_6": STAMP.replace(microsecond=123456),
    "col_dt_0000": None,
    "col_t": CLOCK,
    "col_t_fsp_0": CLOCK,
    "col_t_fsp_1": CLOCK + dt.timedelta(microseconds=100000),
    "col_t_fsp_4": CLOCK + dt.timedelta(microseconds=123500),
    "col_t_fsp_6": CLOCK + dt.timedelta(microseconds=123456),
    "col_t_neg": -(CLOCK + dt.timedelta(microseconds=123456)),
    "col_ts": STAMP.replace(tzinfo=UTC),
    "col_ts_fsp_0": STAMP.replace(tzinfo=UTC),
    "col_ts_fsp_1": STAMP.replace(microsecond=100000, tzinfo=UTC),
    "col_ts_fsp_5": STAMP.replace(microsecond=123460, tzinfo=UTC),
    "col_ts_fsp_6": STAMP.replace(microsecond=123456, tzinfo=UTC),
    "col_y": 2023,
    "col_bit_1": 1,
    "col_bit_5": 16,
    "col_bit_6": 16,
    "col_bit_60": 16,
    "col_varchar": "foo",
    "col_char": "foo",
    "col_varbinary": b"foo",
    "col_binary": b"foo" + bytes(97),  # BINARY(100) keeps its zero padding
    "col_blob": b"foo",
    "col_decimal": Decimal("12345.12345"),
    "col_numeric": Decimal("12345.12345"),
    "col_float": 12345.123,  # the FLOAT's shortest digits, not the widened float32 12345.123046875
    "col_double": 12345.12345,
    "col_int": -2147483648,
    "col_int_unsigned": 4294967295,
    "col_tinyint": -128,
    "col_tinyint_unsigned": 255,
    "col_smallint": -32768,
    "col_smallint_unsigned": 65535,
    "col_mediumint": -8388608,
    "col_mediumint_unsigned": 16777215,
    "col_bigint": -9223372036854775808,
    "col_bigint_unsigned": 18446744073709551615,
    "col_enum": "a",
    "col_enum_invalid": "",  # 'd' is not a member: MySQL stores the invalid empty value
    "col_set": ("a", "b"),
    "col_set_invalid": (),
    "col_json": ["foo"],
}


def _datatype_files() -> tuple[bytes, bytes]:
    value = next(p for p in corpus_files(TESTDATA + "datatype.dbz.json") if "tiflow" in str(p))
    return value.read_bytes(), value.with_name("datatype.dbz.key.json").read_bytes()


def test_real_debezium_row_with_user_schema_is_exact() -> None:
    value, key = _datatype_files()
    decoder = DebeziumDecoder(Options([s for s in OPTIONS if s.for_decoder], protocol="debezium"), schemas=[FOO])
    (event,) = decoder.decode(Message(value=value, key=key))
    assert event.op is Op.INSERT and (event.database, event.table) == ("test", "foo")
    assert event.before is None
    assert list(event.after) == list(FOO_ROW)
    for name, expected in FOO_ROW.items():
        got = event.after[name]
        assert got == expected and type(got) is type(expected), name
    assert event.after["col_ts"].utcoffset() == dt.timedelta(0)
    assert event.after["col_decimal"].as_tuple().exponent == -5  # the declared scale survives the double
    assert event.commit_ts is None  # real Debezium has no TSO
    assert event.meta == {
        "version": "2.4.0.Final",
        "connector": "mysql",
        "cluster": "dbserver1",
        "source_ts_ms": 1701673705000,
        "ts_ms": 1701673705263,
        "snapshot": "false",
        "server_id": 223344,
        "file": "mysql-bin.000005",
        "pos": 10394,
        "row": 0,
        "thread": 11,
    }


# What the message's own schema cannot say without tidb_type or a user schema, and what comes back instead.
LOSSY_WITHOUT_USER_SCHEMA: dict[str, Any] = {
    "col_varbinary": "Zm9v",  # binary columns are typed "string": the base64 text stays text
    "col_binary": "Zm9v" + "A" * 130 + "==",
    "col_blob": "Zm9v",
    "col_decimal": 12345.12345,  # decimal.handling.mode=double: a DOUBLE to the reader
    "col_numeric": 12345.12345,
    "col_bigint_unsigned": -1,  # int64 two's complement, the unsigned flag is not on the wire
}


def test_real_debezium_row_from_its_own_schema() -> None:
    value, key = _datatype_files()
    (event,) = decode(value, key)
    expected = {**FOO_ROW, **LOSSY_WITHOUT_USER_SCHEMA}
    for name, want in expected.items():
        got = event.after[name]
        # a TIMESTAMP of unknown fsp remembers its text's digits: a datetime still, of a subclass
        kind = dt.datetime if isinstance(want, dt.datetime) else type(want)
        assert got == want and (type(got) is kind or (kind is dt.datetime and isinstance(got, kind))), name
    assert [written_fsp(event.after[f"col_ts_fsp_{n}"]) for n in (1, 5)] == [1, 5]
    schema = event.schema
    assert schema.primary_key == ("pk",)
    assert schema.column("col_dt_fsp_4").data_type == DataType(mysql_type=MySQLType.DATETIME, decimal=6)
    assert schema.column("col_dt").data_type == DataType(mysql_type=MySQLType.DATETIME, decimal=3)
    assert schema.column("col_enum").data_type.elements == ABC
    assert schema.column("col_set").data_type.elements == ABC
    assert schema.column("col_bit_60").data_type.length == 60
    assert schema.column("col_bit_1").data_type.mysql_type is MySQLType.BIT
    assert schema.column("col_tinyint_unsigned").data_type.mysql_type is MySQLType.SMALLINT
    assert schema.column("pk").nullable is False and schema.column("col_int").nullable is True


def test_key_document_as_value_is_a_typed_error() -> None:
    from cdc_core.errors import DecodeError

    _, key = _datatype_files()
    with pytest.raises(DecodeError) as info:
        decode(key)
    assert info.value.field == "payload.op" and info.value.offset == 9 and "key" in info.value.reason


def test_decoded_corpus_survives_canonical_json() -> None:
    """The CLI's canonical JSON carries every decoded corpus event without loss (typed values included)."""
    from cdc_core import canonical

    decoder = get_codec("debezium").decoder()
    count = 0
    for path in corpus_files("*/pkg/sink/codec/debezium/**/*.json"):
        if ".key." in path.name:
            continue
        for event in decoder.decode(Message(value=path.read_bytes())):
            assert canonical.loads(canonical.dumps(event), schema=getattr(event, "schema", None)) == event
            count += 1
    assert count == 24
