"""Debezium JSON's envelope on the JVM plan, read by Spark SQL (``from_json``) and by the Java reader
(``DebeziumShape``): the same routes, tables, commit ts, ops and image texts, and the Java reader stricter where it
says so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.debezium import KEY_CLASS, DebeziumAdapter, _key_names
from cdc_spark.decoding.java_text import JavaText, java_function
from cdc_spark.decoding.python_path import MESSAGE_COLUMNS

pytestmark = pytest.mark.spark

_SCHEMA = {
    "type": "struct",
    "name": "shop.t.Envelope",
    "fields": [
        {"field": "before", "type": "struct", "optional": True, "fields": [{"field": "id", "type": "int32"}]},
        {"field": "after", "type": "struct", "optional": True, "fields": [{"field": "id", "type": "int32"}]},
    ],
}
_KEY = json.dumps({"schema": {"type": "struct"}, "payload": {"id": 1}}).encode()


def _payload(op: str = "c", **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "before": None,
        "after": {"id": 1, "n": "x"},
        "op": op,
        "ts_ms": 5,
        "source": {"version": "2.7", "db": "shop", "table": "t", "commit_ts": 449},
    }
    payload.update(changes)
    return payload


def _enveloped(payload: dict[str, Any], schema: Any = _SCHEMA) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}).encode()


# Messages both readers read alike: rows of every op, value texts of each JSON kind, watermarks and what the codec
# takes (DDL, a tombstone, text after the document, a payload whose image is missing, commit ts out of range).
_ALIKE: list[tuple[bytes | None, bytes | None]] = [
    (_KEY, _enveloped(_payload())),
    (_KEY, _enveloped(_payload("r"))),
    (_KEY, _enveloped(_payload("u", before={"id": 1, "n": "w"}))),
    (_KEY, _enveloped(_payload("d", before={"id": 1, "n": "x"}, after=None))),
    (_KEY, _enveloped(_payload("d"))),  # a delete without its before image
    (
        _KEY,
        b'{"schema":{"type":"struct"},"payload":{"op":"c","source":{"db":"shop","table":"t","commit_ts":7},'
        b'"after":{"f":1.50,"e":1e2,"g":-0.0,"z":-0,"i":12345678901234567890,"b":true,"c":false,"s":"\\u00e9\\n",'
        b'"o":{"wkb":"AQ==", "srid" : null},"a":[1, "x"],"n":null,"t":"2024-01-01T00:00:00Z"}}}',
    ),
    (None, _enveloped(_payload(), schema=None)),  # no schema: the codec's without a table-schema
    (None, json.dumps(_payload()).encode()),  # a schemaless stream's message: its members at the top
    (None, _enveloped({"op": "m", "source": {"commit_ts": 451}})),  # TiCDC's watermark
    (None, _enveloped({"op": "m", "source": {"commit_ts": -1}})),
    (None, _enveloped(_payload(ddl="ALTER TABLE t ADD c INT"))),
    (None, _enveloped(_payload(source={"db": "shop", "table": "t", "commit_ts": -3}))),
    (None, _enveloped(_payload(source={"db": "shop", "table": "t", "commit_ts": 2**63}))),
    (None, _enveloped(_payload(source={"db": "shop", "commit_ts": 3}))),  # no table
    (_KEY, None),  # a tombstone
    (_KEY, _enveloped(_payload()) + b" x"),  # text after the document
    (b"[1]", _enveloped(_payload())),  # a key that is not an object
    (None, b"\xff" + _enveloped(_payload())),  # not UTF-8
]


def _prepared(kafka_frame: Any, pairs: list[tuple[bytes | None, bytes | None]], java: bool) -> list[dict[str, Any]]:
    frame = kafka_frame([Message(key=k, value=v) for k, v in pairs]).select(*MESSAGE_COLUMNS)
    session_java = JavaText.of(frame.sparkSession)
    assert session_java is not None, "the tests' sessions run the project's Java code"
    adapter = DebeziumAdapter({}, "UTC", java=session_java if java else None)
    prepared = adapter.prepare(frame)
    columns = [A.ROUTE, A.DATABASE, A.TABLE, A.SHAPE, A.TS, "__env"]
    rows = prepared.orderBy("offset").select(*columns).collect()
    return [{c: (row[c].asDict(recursive=True) if c == "__env" else row[c]) for c in columns} for row in rows]


def _assert_alike(by_sql: list[dict[str, Any]], by_java: list[dict[str, Any]]) -> None:
    """The same routes, tables, commit ts, ops and (for rows) images; a shape where the other has one."""
    for index, (sql_row, java_row) in enumerate(zip(by_sql, by_java, strict=True)):
        sql, java = dict(sql_row, __env=dict(sql_row["__env"])), dict(java_row, __env=dict(java_row["__env"]))
        shapes_given = (sql[A.SHAPE] is None) == (java[A.SHAPE] is None)
        assert shapes_given, (index, sql, java)
        sql[A.SHAPE] = java[A.SHAPE] = None  # digests of other texts
        if sql[A.ROUTE] != "jvm":  # images are kept for rows alone
            sql["__env"]["after"] = sql["__env"]["before"] = java["__env"]["after"] = java["__env"]["before"] = None
        assert sql == java, (index, sql, java)


def test_the_java_reader_reads_every_envelope_as_spark_sql_does(kafka_frame: Any) -> None:
    by_sql = _prepared(kafka_frame, _ALIKE, java=False)
    by_java = _prepared(kafka_frame, _ALIKE, java=True)
    routes = [row[A.ROUTE] for row in by_sql]
    assert (
        routes
        == [*["jvm"] * 4, "python", "jvm", "python", "python", "watermark", *["python"] * 5, "skip"] + ["python"] * 3
    ), routes
    _assert_alike(by_sql, by_java)
    texts = by_java[5]["__env"]["after"]
    assert texts["f"] == "1.5" and texts["e"] == "100.0" and texts["z"] == "0" and texts["s"] == "\u00e9\n"
    assert texts["o"] == '{"wkb":"AQ==","srid":null}' and texts["a"] == '[1,"x"]' and texts["n"] is None


def test_both_readers_take_the_schema_that_holds_the_table_as_the_codec_does(kafka_frame: Any) -> None:
    from cdc_core.registry import get_codec

    postgres = {"version": "2.7", "connector": "postgresql", "db": "postgres", "table": "t"}
    sources = [{**postgres, "schema": "inventory"}, {**postgres, "schema": "public"}, {**postgres, "schema": ""}]
    pairs: list[tuple[bytes | None, bytes | None]] = [
        (_KEY, _enveloped(_payload(source=source))) for source in [*sources, postgres]
    ]
    expected = ["inventory", "public", "postgres", "postgres"]
    for java in (False, True):
        rows = _prepared(kafka_frame, pairs, java=java)
        assert [(row[A.ROUTE], row[A.DATABASE]) for row in rows] == [("jvm", name) for name in expected], java
    codec = get_codec("debezium").decoder()
    assert [codec.decode(Message(key=k, value=v))[0].database for k, v in pairs] == expected


def _compact(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


def test_a_schema_met_again_is_read_from_its_bytes_in_either_layout_as_when_first_met(kafka_frame: Any) -> None:
    """TiCDC writes the schema last, Kafka Connect first; a schema the Java reader has digested is not parsed again,
    and what follows it is checked as the parser would."""
    ticdc = [_compact({"payload": _payload(after={"id": n, "n": "x"}), "schema": _SCHEMA}) for n in range(4)]
    connect = [_compact({"schema": _SCHEMA, "payload": _payload(after={"id": n, "n": "y"})}) for n in range(4)]
    pairs: list[tuple[bytes | None, bytes | None]] = [
        *[(_KEY, value) for value in ticdc],
        *[(_KEY, value) for value in connect],
        (_KEY, ticdc[0][:-1] + b',"extra":1}'),  # a member after the known schema
        (_KEY, ticdc[0] + b" x"),  # text after the document
        (_KEY, ticdc[0][:-1] + b" \n}\n"),  # blanks around the close
        (_KEY, connect[0][:-1] + b"} x"),
        (_KEY, b'{ "schema" :' + connect[0][len(b'{"schema":') :]),  # blanks before the known schema
    ]
    by_sql = _prepared(kafka_frame, pairs, java=False)
    by_java = _prepared(kafka_frame, pairs, java=True)
    _assert_alike(by_sql, by_java)
    assert [row[A.ROUTE] for row in by_java] == ["jvm"] * 9 + ["python", "jvm", "python", "jvm"]
    # not UTF-8 after a known schema: the codec's (the parser stops at the byte, where Spark SQL reads on)
    not_utf8 = [(_KEY, connect[0]), (_KEY, connect[1].replace(b'"n":"y"', b'"n":"\xff"'))]
    assert [row[A.ROUTE] for row in _prepared(kafka_frame, not_utf8, java=True)] == ["jvm", "python"]
    shapes = {row[A.SHAPE] for row in by_java if row[A.ROUTE] == "jvm"}
    assert len(shapes) == 1, shapes  # one schema, one key: one shape, whether parsed or known


@pytest.mark.parametrize("reader", ["sql", "java"])
def test_a_shape_changes_with_the_schema_or_the_key_and_not_with_the_values(kafka_frame: Any, reader: str) -> None:
    other_schema = {**_SCHEMA, "name": "shop.t.Envelope2"}
    other_key = json.dumps({"schema": {"type": "struct"}, "payload": {"id": 1, "k": 2}}).encode()
    pairs: list[tuple[bytes | None, bytes | None]] = [
        (_KEY, _enveloped(_payload())),
        (_KEY, _enveloped(_payload(after={"id": 2, "n": "y"}))),  # other values: the same shape
        (_KEY, _enveloped(_payload(), schema=other_schema)),
        (other_key, _enveloped(_payload())),
        (None, _enveloped(_payload())),
    ]
    shapes = [row[A.SHAPE] for row in _prepared(kafka_frame, pairs, java=reader == "java")]
    assert shapes[0] is not None and shapes[0] == shapes[1]
    assert len(set(shapes[1:])) == 4, shapes


def test_the_java_reader_leaves_to_the_codec_what_spark_sql_would_read_loosely(kafka_frame: Any) -> None:
    pairs: list[tuple[bytes | None, bytes | None]] = [
        (_KEY, _enveloped(_payload())),
        (_KEY, _enveloped(_payload()).replace(b'"op": "c"', b'"op": "c", "op": "c"')),  # a member twice
        (_KEY, _enveloped(_payload(after={"id": 1}), schema=_SCHEMA).replace(b'{"id": 1}', b'{"id": 1, "id": 2}')),
        (_KEY, _enveloped(_payload(op=1))),  # an op that is not a string
        (_KEY, _enveloped(_payload(source={"db": "shop", "table": "t", "commit_ts": 7.5}))),
        (b'{"id": 1, "id": 2}', _enveloped(_payload())),  # a key naming a column twice
        (_KEY, _enveloped(_payload(), schema="a text")),
        (_KEY, _compact({"schema": _SCHEMA, "payload": _payload()})[:-1] + b',"schema":{}}'),  # a schema twice
        (_KEY, _compact({"payload": _payload(), "schema": _SCHEMA})[:-1] + b',"schema":{}}'),
    ]
    routes = [row[A.ROUTE] for row in _prepared(kafka_frame, pairs, java=True)]
    assert routes == ["jvm"] + ["python"] * 8, routes


def test_the_java_key_reader_names_a_key_s_columns_as_spark_sql_does(kafka_frame: Any) -> None:
    from pyspark.sql import functions as F

    keys: list[bytes | None] = [
        _KEY,  # a payload object: its names
        b'{"id": 1, "k": "x"}',  # a schemaless key: its own names, in order
        b'{"schema": {"type": "struct"}, "payload": null}',  # a payload of null: the key's own names
        b'{"schema": {}, "payload": {}}',  # no columns
        b'"abc"',
        b"[1, 2]",
        b'{"schema": {}, "payload": "abc"}',
        None,
    ]
    frame = kafka_frame([Message(key=k, value=b"{}") for k in keys])
    java = java_function(frame.sparkSession, "cdc_debezium_key", KEY_CLASS, "string")
    rows = frame.orderBy("offset").select(_key_names().alias("sql"), F.call_udf(java, F.col("key")).alias("java"))
    read = [(row["sql"], row["java"]) for row in rows.collect()]
    assert [sql for sql, _java in read] == ["id", "id\u0000k", "schema\u0000payload", "", None, None, None, None]
    assert [java for _sql, java in read] == [sql for sql, _java in read]
