"""Executor-side decode gives exactly what the driver-side decoder gives, for every installed JSON protocol,
on a realistic changefeed (several tables, many column types, updates, deletes, a DDL) plus broken messages."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_core.message import Message
from cdc_core.registry import installed_codecs
from cdc_spark import decode as executor
from cdc_spark import driver_decode as driver
from cdc_testing.changefeed import encode, generate

pytestmark = pytest.mark.spark

PROTOCOLS = [p for p in ("debezium", "canal-json", "simple") if p in installed_codecs()]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_executor_decode_equals_driver_decode(kafka_frame: Any, change_rows: Any, protocol: str) -> None:
    changefeed = generate(seed=7, transactions=25)
    messages = list(encode(changefeed, protocol))
    messages.insert(5, Message(value=b'{"not": "a change"', partition=0))
    frame = kafka_frame(messages)

    expected = driver.decode(frame, protocol)
    actual = executor.decode_in_executors(frame, protocol)

    assert actual.tables() == expected.tables()
    assert len(actual.tables()) >= 2
    for database, table in expected.tables():
        assert actual.schemas()[(database, table)] == expected.schemas()[(database, table)]
        want, got = change_rows(expected.table(database, table)), change_rows(actual.table(database, table))
        assert got == want
        # Same names and types; the executor frame does not promise non-null metadata columns.
        assert (
            actual.table(database, table).schema.simpleString() == expected.table(database, table).schema.simpleString()
        )
    key = ("kind", "partition", "offset")
    assert sorted(actual.control().collect(), key=lambda r: [r[k] for k in key]) == sorted(
        expected.control().collect(), key=lambda r: [r[k] for k in key]
    )
    dead = actual.dead_letters().collect()
    assert [r["offset"] for r in dead] == [r["offset"] for r in expected.dead_letters().collect()] == [5]
    assert dead[0]["error_type"] == "DecodeError"
    actual.release()


@pytest.mark.skipif("canal-json" not in installed_codecs(), reason="needs cdc-canal")
@pytest.mark.parametrize("plan", ["executor", "driver", "native"])
def test_a_value_beyond_its_spark_type_is_a_dead_letter_not_a_failed_batch(
    kafka_frame: Any, change_rows: Any, plan: str
) -> None:
    # Canal writes DECIMAL's type without precision: the contract reads it as decimal(38,10), 28 integer digits.
    messages = list(encode(generate(seed=7, transactions=6), "canal-json"))
    order = next(i for i, m in enumerate(messages) if b'"amount":"' in (m.value or b""))
    value = messages[order].value or b""
    start = value.index(b'"amount":"', value.index(b'"data":')) + len(b'"amount":"')
    messages[order] = Message(value=value[:start] + b"1" + b"0" * 28 + value[value.index(b'"', start) :], partition=0)
    frame = kafka_frame(messages)

    decoded = executor.decode(frame, "canal-json", plan=plan)

    (dead,) = decoded.dead_letters().collect()
    assert (dead["offset"], dead["error_type"]) == (order, "ValueRangeError"), dead["error"]
    assert "shop.orders column amount" in dead["error"] and "decimal(38,10)" in dead["error"]
    offsets = {r["_cdc_offset"] for name in decoded.tables() for r in change_rows(decoded.table(*name))}
    assert order not in offsets
    assert offsets | {order} >= set(range(len(messages))) - {
        i for i, m in enumerate(messages) if b'"isDdl":true' in (m.value or b"")
    }
    if hasattr(decoded, "release"):
        decoded.release()


@pytest.mark.skipif("simple" not in installed_codecs(), reason="needs cdc-simple")
@pytest.mark.parametrize("plan", ["executor", "driver"])
def test_rows_whose_schema_never_comes_are_dead_letters_not_lost(kafka_frame: Any, plan: str) -> None:
    # Simple holds a row until its schema arrives; without BOOTSTRAP messages most never do within the batch.
    messages = [m for m in encode(generate(seed=3, transactions=4), "simple") if b'"BOOTSTRAP"' not in (m.value or b"")]
    rows = [i for i, m in enumerate(messages) if b'"schemaVersion"' in (m.value or b"")]
    frame = kafka_frame(messages)

    decoded = executor.decode(frame, "simple", plan=plan)

    dead = decoded.dead_letters().collect()
    assert dead and {r["offset"] for r in dead} <= set(rows)
    changes = sum(decoded.table(*name).count() for name in decoded.tables())  # a DDL teaches its table's schema
    assert changes + len(dead) == len(rows)
    assert {r["error_type"] for r in dead} == {"SchemaError"}
    for letter in dead:  # each names the table of its own message
        table = letter["error"].split("no schema for shop.")[1].split()[0]
        assert f'"table":"{table}"'.encode() in letter["value"]

    # Primed with the schemas an earlier batch taught, the same messages decode.
    learned = executor.decode(kafka_frame(list(encode(generate(seed=3, transactions=4), "simple"))), "simple")
    primed = executor.decode(frame, "simple", schemas=learned.schemas(), plan=plan)
    assert primed.dead_letters().count() == 0
    assert sum(primed.table(*name).count() for name in primed.tables()) == len(rows)
    for result in (decoded, learned, primed):
        if hasattr(result, "release"):
            result.release()


@pytest.mark.skipif("simple" not in installed_codecs(), reason="needs cdc-simple")
@pytest.mark.parametrize("plan", ["executor", "driver"])
def test_rows_of_an_older_schema_version_decode_in_a_later_batch(kafka_frame: Any, plan: str) -> None:
    import json

    from cdc_core.canonical import schema_from_json

    messages = list(encode(generate(seed=3, transactions=8), "simple"))
    alter = next(i for i, m in enumerate(messages) if b'"type":"ALTER"' in (m.value or b""))
    # An earlier batch brought the BOOTSTRAPs and the ALTER: the newest customers schema is the altered one.
    learned = executor.decode(kafka_frame(messages), "simple", plan="driver")
    versions = [
        schema_from_json(json.loads(r["schema_json"]))
        for r in learned.control().collect()
        if r["schema_json"] is not None
    ]
    # This batch: a lagging partition's customers rows written before the ALTER (the older version).
    rows = [m for m in messages[:alter] if b'"schemaVersion"' in (m.value or b"")]
    lagging = [m for m in rows if b'"table":"customers"' in (m.value or b"")]
    assert lagging
    frame = kafka_frame(lagging)

    newest_only = executor.decode(frame, "simple", schemas=learned.schemas(), plan=plan)
    assert newest_only.dead_letters().count() == len(lagging)  # reported, not lost

    every_version = executor.decode(frame, "simple", schemas=learned.schemas(), plan=plan, known_versions=versions)
    assert every_version.dead_letters().count() == 0
    assert every_version.table("shop", "customers").count() == len(lagging)
    for result in (newest_only, every_version):
        if hasattr(result, "release"):
            result.release()
