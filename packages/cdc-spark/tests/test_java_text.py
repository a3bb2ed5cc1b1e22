"""The project's Java readers of TiDB's text forms (``cdc.spark.text``) against the decode's Spark SQL readers: a
value the Java reads is the SQL readers' value, never one they refuse, and every text TiDB prints is read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cdc_core.events import RowChange
from cdc_core.registry import get_codec
from cdc_core.types import DataType, parse_type_text
from cdc_spark.decoding.canal import CanalJavaText, CanalRowText, _CanalReader
from cdc_spark.decoding.java_text import read, text_function
from cdc_spark.decoding.jvm_values import TextReader
from cdc_spark.decoding.simple import SimpleJavaText, SimpleRowText, _SimpleReader
from cdc_spark.runtime.java_code import JavaCodeError, install, jar, jar_path, javac

# a few texts a query: interpreted, as cdc apply types a small batch
pytestmark = pytest.mark.usefixtures("batch_expressions")

SESSION_ZONE = "UTC"
_INTEGERS = [
    "0", "-0", "1", "-1", "007", "127", "128", "-128", "-129", "255", "256", "32767", "-32768", "32768", "8388607",
    "-8388609", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "18446744073709551615", "18446744073709551616", "15", "16",
    " 12", "+12", "12\n", "12 ", "1.0", "1e3", "", "-", "--1", "\u0661\u0662", "0x10",
]  # fmt: skip
_FLOATS = [
    "0", "1.5", "-1.5", "0.1", "2.5E-3", "1e+20", "3.4028235e+38", "3.4028236e+38", "1e-45", "1.17549435E-38",
    "1.7976931348623157e308", "1e309", "-0", "-0.0", "123456789012345678901234567890", "NaN", "Infinity", "inf",
    ".5", "5.", "1.5d", "2f", "0x1p3", " 1.5", "+1.5", "1e", "1e+", "1.5\n", "\t1.5\r", "\x1c1.5", "\x001.5", "",
]  # fmt: skip
_DECIMALS = [
    "0", "0.00", "-0.5", "12.3", "12.345", "99999999.99", "100000000.00", "-99999999.99", "007.50", "-0",
    " 1.5", "1e2", "+1", ".5", "5.", "1.5.5", "", "-", "1.5\n",
]  # fmt: skip
_DATES = [
    "2024-02-29", "2023-02-29", "0000-00-00", "2024-00-10", "2024-10-00", "0000-01-01", "9999-12-31", "0001-01-01",
    "2024-1-5", "2024-01-05 ", " 2024-01-05", "2024-01-05\n", "2024/01/05", "20240105", "2024-13-01", "2024-01-32",
]  # fmt: skip
_DATETIMES = [
    "2024-01-05 10:11:12", "2024-01-05T10:11:12", "2024-01-05 10:11:12.5", "2024-01-05 10:11:12.123456",
    "2024-01-05 10:11:12.1234567", "2024-01-05 10:11:12.123456789", "2024-01-05 10:11:12.", "0000-00-00 00:00:00",
    "2024-00-00 10:00:00", "2024-01-05 24:00:00", "2024-01-05 23:60:00", "2024-01-05 23:59:60", "2024-01-05 1:02:03",
    "2024-01-05 10:11:12 ", "2024-01-05 10:11:12Z", "2024-01-05 10:11:12+08:00", "2024-03-10 02:30:00",
    "2024-11-03 01:30:00", "2024-02-30 00:00:00", "2024-01-05",
]  # fmt: skip
CASES: list[tuple[str, str, list[str]]] = [
    *[(text, "UTC", _INTEGERS) for text in (
        "tinyint(4)", "tinyint(3) unsigned", "smallint(6)", "smallint(5) unsigned", "mediumint(9)", "int(11)",
        "int(10) unsigned", "bigint(20)", "bigint(20) unsigned", "bit(4)", "bit(64)", "year(4)",
    )],
    ("float", "UTC", _FLOATS),
    ("double", "UTC", _FLOATS),
    ("decimal(10,2)", "UTC", _DECIMALS),
    ("decimal(30,0)", "UTC", _DECIMALS),
    ("date", "UTC", _DATES),
    ("datetime(6)", "UTC", _DATETIMES),
    *[("timestamp(3)", zone, _DATETIMES) for zone in ("UTC", "America/New_York", "+08:00")],
]  # fmt: skip


def _located(zone: str) -> list[str]:
    """Simple's TIMESTAMP objects, for a column whose sample's location is ``zone``."""
    other = "Asia/Shanghai" if zone != "Asia/Shanghai" else "UTC"
    escaped = "".join(f"\\u{ord(c):04x}" for c in zone)  # the same location, every character escaped
    return [
        f'{{"location":"{zone}","value":"2024-01-05 10:11:12"}}',
        f'{{"value":"2024-01-05 10:11:12.5","location":"{zone}"}}',
        f'{{ "location" : "{zone}" , "value" : "2024-03-10 02:30:00.123456" }}',
        f'{{"location":"{zone}","value":"2024-11-03 01:30:00","extra":{{"a":[1,2]}}}}',
        f'{{"location":"{escaped}","value":"2024-01-05 10:11:12"}}',
        f'{{"location":"{other}","value":"2024-01-05 10:11:12"}}',
        f'{{"location":"{zone}","value":"0000-00-00 00:00:00"}}',
        f'{{"location":"{zone}","value":"0000-01-01 10:00:00"}}',
        f'{{"location":"{zone}","value":"2024-02-30 00:00:00"}}',
        f'{{"location":"{zone}","value":"2024-01-05 10:11:12\\n"}}',
        f'{{"location":"{zone}","value":5}}',
        f'{{"location":"{zone}","value":null}}',
        f'{{"location":"{zone}"}}',
        f'{{"location":"{zone}","value":"2024-01-05 10:11:12"}} and more',
        '"2024-01-05 10:11:12"',
        "[1]",
        "not json",
    ]


_TIMES = [
    "10:11:12", "-10:11:12", "0:00:00", "-0:00:00", "838:59:59", "-838:59:59", "839:00:00", "99:59:59",
    "100:00:00", "10:11:12.5", "10:11:12.123456", "10:11:12.1234567", "10:11:12.123456789", "10:11:12.1234567890",
    "10:60:00", "10:00:60", "1:2:3", "10:11:12.", " 10:11:12", "10:11:12 ", "10:11:12\n", "--10:11:12", "+10:11:12",
    "1011:12:13", "10:11", "", "\u0661:11:12",
]  # fmt: skip
_NAMED = [
    "0",
    "1",
    "2",
    "3",
    "4",
    "00",
    "02",
    "9223372036854775807",
    "9223372036854775808",
    "-1",
    "",
    "bronze",
    "gold",
    "silver,gold",
    "gold,silver",
    "gold,gold",
    "gold,",
    ",",
    "copper",
    "Gold",
    " 1",
    "1\n",
    "7",
]
_JSON = [
    '{"a":1}', '{"b": [1, 2.50, 1e2, -0.0, 12345678901234567890], "a": {"c": null}}', "[]", "[true,false,null]",
    '{"s":"\\u00e9\\n\\"x\\u0001"}', '{"a":1} trailing', '{"a":', " {}", "\n[1]", '"text"', "12", "null",
    "{'a':1}", '{"a":1}\n', '{"a":"é"}', '{"s":"\\ud800"}', '{"e":"\\ud83d\\ude00"}', "[1E400, 1.0e-7, -1.5E+3]",
    '{"c":"a\tb"}', '[[[{"d":[{}]}]]]', "{'q':'it''s'}", '{"a":1,}', "[1,]", '{"a":tru}', '{"\\u0041":1}',
]  # fmt: skip
_BYTES = ["", "abc", "\x00\x01\xff", "éÿ", "Ā", "café €", "\n"]
_TEXTS = ["", "plain", " blanks ", "é€😀", "\x00"]
_WIDE = [
    "0",
    "1.5",
    "-12.345",
    "123456789012345678901234567890123456789.25",
    "1.2345",
    " 1.5",
    "1e2",
    "+1",
    ".5",
    "5.",
    "",
    "-",
    "1.5\n",
]
ROW_CASES: list[tuple[str, str, list[str]]] = [
    ("time(6)", "UTC", _TIMES),
    ("enum('bronze','silver','gold')", "UTC", _NAMED),
    ("set('bronze','silver','gold')", "UTC", _NAMED),
    ("json", "UTC", _JSON),
    ("blob", "UTC", _BYTES),
    ("varchar(16)", "UTC", _TEXTS),
    ("decimal(65,4)", "UTC", _WIDE),
    ("decimal(65,0)", "UTC", _WIDE),
]  # fmt: skip

_BASE64 = ["", "AAEC/w==", "aGVsbG8=", "aGVsbG8", "aGVs bG8=", "aGVsbG8=\n", "!!", "YQ==YQ==", "YWJj\r\nZGVm"]
_SIMPLE_NUMBERS = [*_INTEGERS, "-1", "-128", "-9223372036854775808", "-18446744073709551616", "99999999999999999999",
                   "100000000000000000000", "-99999999999999999999"]  # fmt: skip
SIMPLE_ROW_CASES: list[tuple[str, str, list[str]]] = [
    *[(text, "UTC", _SIMPLE_NUMBERS) for text in (
        "tinyint(3) unsigned", "smallint(5) unsigned", "mediumint(8) unsigned", "int(10) unsigned",
        "bigint(20) unsigned", "bit(4)", "bit(64)",
    )],
    ("enum('bronze','silver','gold')", "UTC", _NAMED),
    ("set('bronze','silver','gold')", "UTC", [*_NAMED, "-1", "-0"]),
    ("blob", "UTC", _BASE64),
    ("time(6)", "UTC", _TIMES),
    ("json", "UTC", _JSON),
    ("varchar(16)", "UTC", _TEXTS),
    ("decimal(65,4)", "UTC", _WIDE),
]  # fmt: skip

# Simple's readers differ from Canal's where its codec does: integers bounded by their Spark type only, TIMESTAMP
# an object with its location
SIMPLE_CASES: list[tuple[str, str, list[str]]] = [
    *[(text, "UTC", _INTEGERS) for text in ("tinyint(4)", "smallint(6)", "mediumint(9)", "int(11)", "bigint(20)",
                                            "year(4)")],
    ("double", "UTC", _FLOATS),
    ("decimal(10,2)", "UTC", _DECIMALS),
    ("date", "UTC", _DATES),
    ("datetime(6)", "UTC", _DATETIMES),
    *[("timestamp(6)", zone, _located(zone)) for zone in ("UTC", "America/New_York")],
]  # fmt: skip
PROTOCOLS: dict[str, tuple[type[TextReader], type[CanalJavaText]]] = {
    "canal-json": (_CanalReader, CanalJavaText),
    "canal-json-rows": (_CanalReader, CanalRowText),
    "simple": (_SimpleReader, SimpleJavaText),
    "simple-rows": (_SimpleReader, SimpleRowText),
}


@pytest.fixture(scope="module")
def java(spark: Any) -> Iterator[Any]:
    assert install(spark)
    yield spark


def _compare(spark: Any, data_type: DataType, zone: str, texts: list[str], protocol: str = "canal-json") -> list[Any]:
    """Per text: whether the SQL reader read it (``sql``) or found it bad, its zero date; whether the Java reader
    read it (``java``), its zero date, and whether the two values are equal (compared in Spark, where every value
    either reads can be held)."""
    from pyspark.sql import functions as F

    sql_readers, java_readers = PROTOCOLS[protocol]
    sql = sql_readers(zone, SESSION_ZONE).visit(data_type)
    descriptor = java_readers(zone).visit(data_type)
    assert sql is not None and descriptor is not None
    text = F.col("text")
    typed = sql(text)
    java = read(text_function(spark, data_type), text, descriptor)
    frame = spark.createDataFrame([(t,) for t in texts], "text string")
    zero = typed.zero if typed.zero is not None else F.lit(None).cast("string")
    return frame.select(
        "text", typed.value.isNotNull().alias("sql"), typed.bad.alias("bad"), zero.alias("zero"),
        java["value"].isNotNull().alias("java"), java["zero"].alias("java_zero"),
        java["value"].eqNullSafe(typed.value).alias("equal"),
    ).collect()  # fmt: skip


@pytest.mark.parametrize(
    ("protocol", "type_text", "zone", "texts"),
    [("canal-json", *c) for c in CASES]
    + [("canal-json-rows", *c) for c in ROW_CASES]
    + [("simple", *c) for c in SIMPLE_CASES]
    + [("simple-rows", *c) for c in SIMPLE_ROW_CASES],
    ids=[f"canal-json-{c[0]}-{c[1]}" for c in CASES]
    + [f"canal-json-rows-{c[0]}" for c in ROW_CASES]
    + [f"simple-{c[0]}-{c[1]}" for c in SIMPLE_CASES]
    + [f"simple-rows-{c[0]}" for c in SIMPLE_ROW_CASES],
)
def test_a_value_the_java_reads_is_the_sql_readers(
    java: Any, protocol: str, type_text: str, zone: str, texts: list[str]
) -> None:
    rows = _compare(java, parse_type_text(type_text), zone, texts, protocol)
    read_by_java = 0
    for row in rows:
        assert row["java_zero"] == row["zero"], row
        if row["java"]:
            read_by_java += 1
            assert not row["bad"] and row["equal"], row
    assert read_by_java > 0


def _changefeed_texts() -> dict[str, tuple[DataType, set[str]]]:
    """Every value text of a generated Canal-JSON changefeed by its column's type, the types as the codec read them."""
    from cdc_testing.changefeed import encode, generate

    decoder = get_codec("canal-json").decoder({})
    found: dict[str, tuple[DataType, set[str]]] = {}
    for message in encode(generate(seed=7, transactions=300), "canal-json"):
        if message.value is None:
            continue
        events = decoder.decode(message)
        schema = next((e.schema for e in events if isinstance(e, RowChange) and e.schema is not None), None)
        document = json.loads(message.value)
        if schema is None or not document.get("data"):
            continue
        for column in schema.stored_columns:
            if CanalRowText("UTC").visit(column.data_type) is None:
                continue
            for row in document["data"]:
                if row.get(column.name) is not None:
                    found.setdefault(column.data_type.type_text, (column.data_type, set()))[1].add(row[column.name])
    return found


def test_every_text_tidb_prints_is_read_by_the_java(java: Any) -> None:
    """The texts of a generated changefeed, for every column type with a Java reader: the Java reads each one the
    SQL reads, alike (none is left to the codec)."""
    found = _changefeed_texts()
    assert len(found) >= 12
    for data_type, texts in found.values():
        for row in _compare(java, data_type, "UTC", sorted(texts), "canal-json-rows"):
            assert not row["bad"], row
            assert row["java"] == row["sql"] and row["equal"] and row["java_zero"] == row["zero"], (data_type, row)


def test_the_jar_is_made_once_per_installation_and_a_missing_jdk_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    made = jar()
    assert made == jar_path(javac()) and made.stat().st_size > 0
    stamp = made.stat().st_mtime_ns
    assert jar() == made and made.stat().st_mtime_ns == stamp  # kept, not compiled again
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(JavaCodeError, match="needs a JDK, not a JRE"):
        jar()


def _changes(decoded: Any) -> dict[tuple[str, str], list[Any]]:
    order = ("_cdc_partition", "_cdc_offset")
    return {
        name: sorted(decoded.table(*name).collect(), key=lambda r: (*[r[k] for k in order], r["_cdc_sequence"][3]))
        for name in decoded.tables()
    }


# Per protocol: the switches of each way of typing (readers, rows), and the function its plans name (None: none)
_WAYS: dict[str, dict[tuple[str, str], str | None]] = {
    "canal-json": {("on", "on"): "cdc_rows_", ("on", "off"): "cdc_tidb_text", ("off", "on"): None},
    "simple": {("on", "on"): "cdc_rows_", ("on", "off"): "cdc_tidb_text", ("off", "on"): None},
}


@pytest.mark.compiled  # the three ways compared under generated code, as a large batch types them
@pytest.mark.parametrize("protocol", ["canal-json", "simple"])
def test_a_protocol_is_typed_by_the_java_readers_and_alike_without_them(
    java: Any, kafka_frame: Any, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    """Canal-JSON's rows typed by the Java row typer, by the SQL typing with the Java readers, and with Spark SQL
    alone: the same rows; Simple's with and without the Java readers. Each way decodes with a decoder of its own: a
    typing another test kept in the shared one would type the batch in its first stage, under that test's plans."""
    from cdc_spark.decoding import Decoder, decode, java_rows, java_text
    from cdc_testing.changefeed import encode, generate
    from cdc_testing.spark_plans import kept_plans

    plans = kept_plans(monkeypatch)  # the typing is in the plans the decode keeps (its tables start after it)
    frame = kafka_frame(list(encode(generate(seed=3, transactions=150), protocol)))
    changes = {}
    for (readers, rows), function in _WAYS[protocol].items():
        monkeypatch.setenv(java_text.SWITCH_ENV, readers)
        monkeypatch.setenv(java_rows.SWITCH_ENV, rows)
        plans.clear()
        decoded = decode(frame, protocol, decoder=Decoder())
        try:
            changes[(readers, rows)] = _changes(decoded)
            plan = " ".join(plans)
            assert decoded.paths["jvm"] > 0
        finally:
            decoded.release()
        for named in ("cdc_rows_", "cdc_tidb_text"):
            assert (named in plan) == (named == function), (readers, rows, named)
    first, *others = changes.values()
    assert all(other == first for other in others) and sum(len(rows) for rows in first.values()) > 100


def test_a_session_without_a_jdk_reads_with_spark_sql_and_says_why(
    spark: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import weakref

    from cdc_spark.decoding.java_text import JavaText
    from cdc_spark.runtime import java_code

    monkeypatch.setattr(java_code, "_INSTALLED", weakref.WeakKeyDictionary())
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    with caplog.at_level("WARNING", logger="cdc_spark.runtime.java_code"):
        assert JavaText.of(spark) is None
    assert "not used" in caplog.text and "no javac on PATH" in caplog.text
