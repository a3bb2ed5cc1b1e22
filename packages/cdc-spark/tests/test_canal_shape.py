"""Canal-JSON's wire shape on the JVM plan: one digest per column list, type maps and key names, and no other."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.canal import CanalAdapter, _shape_digest
from cdc_spark.decoding.java_text import JavaText
from cdc_spark.decoding.python_path import MESSAGE_COLUMNS

pytestmark = pytest.mark.spark


def test_arrays_that_run_on_into_each_other_or_are_null_hash_apart(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame(
        [(["a", "b"], ["c"]), (["a"], ["b", "c"]), ([], ["a", "b", "c"]), (None, ["a", "b", "c"]), (["a", "b"], ["c"])],
        "x array<string>, y array<string>",
    )
    digests = [r[0] for r in frame.select(_shape_digest(F.col("x"), F.col("y"))).collect()]
    assert len(set(digests[:4])) == 4, digests
    assert digests[4] == digests[0]  # the same arrays, the same digest


def _message(mysql_types: dict[str, str], pk: list[str] | None, value: str) -> bytes:
    document = {
        "id": 0,
        "database": "shop",
        "table": "t",
        "pkNames": pk,
        "isDdl": False,
        "type": "INSERT",
        "es": 1,
        "ts": 2,
        "sql": "",
        "sqlType": dict.fromkeys(mysql_types, 4),
        "mysqlType": mysql_types,
        "old": None,
        "data": [dict.fromkeys(mysql_types, value)],
    }
    return json.dumps(document).encode()


@pytest.mark.parametrize("reader", ["sql", "java"])
def test_a_shape_changes_with_a_type_a_column_or_the_key_and_not_with_the_values(kafka_frame: Any, reader: str) -> None:
    """By the SQL envelope reader and by the Java one (``CanalShape``), which reads the message's bytes."""
    base = {"id": "int", "n": "int"}
    values = [
        _message(base, ["id"], "1"),
        _message(base, ["id"], "2"),  # other values: the same shape
        _message({"id": "int", "n": "bigint"}, ["id"], "1"),  # a wider type
        _message({"id": "int", "n": "int", "m": "int"}, ["id"], "1"),  # a column more
        _message(base, ["id", "n"], "1"),  # another key
        _message(base, None, "1"),  # no key named
    ]
    frame = kafka_frame([Message(value=v) for v in values])
    java = JavaText.of(frame.sparkSession) if reader == "java" else None
    assert java is not None or reader == "sql"
    adapter = CanalAdapter({}, "UTC", java=java)
    assert (adapter.java_rows is not None) == (reader == "java")
    prepared = adapter.prepare(frame.select(*MESSAGE_COLUMNS))
    shapes = [r[A.SHAPE] for r in prepared.orderBy("offset").select(A.SHAPE).collect()]
    assert shapes[0] is not None and shapes[0] == shapes[1]
    assert len(set(shapes[1:])) == 5, shapes
