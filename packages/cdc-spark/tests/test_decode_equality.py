"""The JVM decode path gives exactly what the protocols' own codecs give, value for value.

``plan="jvm"`` (Spark's ``from_json`` and expressions, the codec only for the residue) against ``plan="python"``
(every message through the codec in the executors) on: the project's changefeed generator in each JSON protocol
and its variants (with broken messages and a DDL), rows of every column type drawn by the hypothesis strategies,
the shared corpus of TiCDC's golden messages, and what real Debezium connectors and a real Canal server wrote.
Every comparison also checks that the JVM typed the rows it should (``paths``), so a regression that silently sends
everything to the codec fails here too.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.canonical import schema_to_json
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.messagelines import read_lines
from cdc_core.registry import get_codec, installed_codecs
from cdc_core.schema import TableSchema
from cdc_core.types import LogicalType
from cdc_spark.decoding import DecodedChanges, Decoder, decode, python_path
from cdc_spark.decoding.adapter import ParsedReader
from cdc_spark.decoding.java_rows import SWITCH_ENV as ROWS_SWITCH_ENV
from cdc_spark.decoding.java_text import SWITCH_ENV
from cdc_spark.decoding.jvm import clock, shapes
from cdc_spark.decoding.jvm.shapes import ShapeReuse
from cdc_spark.decoding.reuse import Reuse
from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_testing.changefeed import encode, generate, schema_versions
from cdc_testing.corpus import corpus_files
from cdc_testing.spark_plans import consumer_methods, created_maps, generated_stages

# small batches: interpreted, as cdc apply runs them; the tests marked ``compiled`` (every column type of each
# protocol, the corpora, what real Debezium wrote) run Spark's generated code, as a batch of 20,000 messages would:
# both ways of evaluating the decode's expressions are compared with the codec on every column type
pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("batch_expressions")]

HERE = Path(__file__).resolve()
CAPTURES = HERE.parents[2]  # packages/
BROKEN = Message(value=b'{"not": "a change"', partition=0)


def _frame(spark: Any, messages: list[Message]) -> Any:
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [
        (m.key, m.value, m.topic or "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)
    ]
    return spark.createDataFrame(rows, KAFKA_COLUMNS)


def _nan_free(value: Any) -> Any:
    """NaN as a marker: NaN != NaN would make equal rows differ."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    return value


def _comparable(row: Any, json_columns: set[str]) -> dict[str, Any]:
    values: dict[str, Any] = _nan_free(row.asDict(recursive=True))
    for name in json_columns:
        if values.get(name) is not None:
            values[name] = json.loads(values[name])
        before = values.get("_cdc_before")
        if before is not None and before.get(name) is not None:
            before[name] = json.loads(before[name])
    return values


def _rows(decoded: DecodedChanges, name: tuple[str, str]) -> list[dict[str, Any]]:
    schema = decoded.schemas()[name]
    json_columns = {c.name for c in schema.stored_columns if c.data_type.logical is LogicalType.JSON}
    rows = [_comparable(r, json_columns) for r in decoded.table(*name).collect()]
    return sorted(rows, key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"]))


@pytest.fixture(params=["java", "java-readers", "sql"])
def text_readers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Canal-JSON's and Simple's rows typed by the project's Java row typer (the default where a JDK compiles it),
    by the SQL typing with the Java readers (``CDC_JAVA_ROWS=off``), or by Spark SQL alone (``CDC_JAVA_READERS=off``):
    each must decode as the codec does."""
    monkeypatch.setenv(SWITCH_ENV, "off" if request.param == "sql" else "on")
    monkeypatch.setenv(ROWS_SWITCH_ENV, "off" if request.param == "java-readers" else "on")
    return str(request.param)


CONTROL_FIELDS = ("kind", "partition", "offset", "commit_ts", "ddl_type", "database", "table")
LETTER_FIELDS = ("topic", "partition", "offset", "key", "value", "error_type", "error")


@attrs.frozen
class CodecDecode:
    """What the python plan (every message through the codec) gave, as plain data: the comparisons' expected side."""

    schemas: dict[tuple[str, str], dict[str, Any]]  # by table, the schema's canonical JSON
    spark_schemas: dict[tuple[str, str], str]
    rows: dict[tuple[str, str], list[dict[str, Any]]]
    control: list[tuple[Any, ...]]
    dead_letters: list[tuple[Any, ...]]
    clocks: dict[Any, int]
    steps: list[str]


# The python plan's result by input: the tests parametrized only by the JVM's readers (``text_readers``) decode the
# same messages three times, and the codec's answer does not depend on the JVM's switches.
_CODEC_DECODES: dict[tuple[Any, ...], CodecDecode] = {}


def _codec_decode(
    frame: Any, protocol: str, options: dict[str, object] | None, known: list[TableSchema]
) -> CodecDecode:
    """The python plan's answer, which the driver plan (the codec on the driver, local relations) must give too."""
    found = _plain(decode(frame, protocol, options, plan="python", known_versions=known))
    on_driver = _plain(decode(frame, protocol, options, plan="driver", known_versions=known))
    assert on_driver == found
    return found


def _plain(decoded: DecodedChanges) -> CodecDecode:
    try:
        letters = decoded.dead_letters().collect()
        assert decoded.dead_letter_count() == len(letters)  # known on the driver without a job, or counted
        return CodecDecode(
            schemas={name: schema_to_json(schema) for name, schema in decoded.schemas().items()},
            spark_schemas={name: decoded.table(*name).schema.simpleString() for name in decoded.tables()},
            rows={name: _rows(decoded, name) for name in decoded.tables()},
            control=sorted(tuple(r[k] for k in CONTROL_FIELDS) for r in decoded.control().collect()),
            dead_letters=sorted(tuple(r[k] for k in LETTER_FIELDS) for r in letters),
            clocks=decoded.partition_commit_ts(),
            steps=list(decoded.steps),
        )
    finally:
        decoded.release()


def assert_same_decode(spark: Any, messages: list[Message], protocol: str, options: dict[str, object] | None = None,
                       *, jvm_share: float = 0.5, dead_offsets: set[int] | None = None,
                       known_versions: list[TableSchema] | None = None,
                       arrange: Callable[[Any], Any] | None = None,
                       decoder: Decoder | None = None) -> DecodedChanges:  # fmt: skip
    """Both plans on ``messages``: equal tables, schemas, rows, control rows, dead letters and clocks; the JVM typed
    at least ``jvm_share`` of the changes; the dead letters are the messages at ``dead_offsets`` when given. Both
    plans are given ``known_versions`` (schema versions of earlier batches), if any. ``arrange``: how the frame's rows
    are laid out over Spark's partitions (by default in offset order, two ranges, as Kafka's source reads them).
    ``decoder``: the JVM plan's (default: the application's). The python plan runs once per input: messages,
    protocol, options and known versions, laid out the default way."""
    frame = _frame(spark, messages)
    frame = (frame if arrange is None else arrange(frame)).cache()
    known = known_versions or []
    key = (
        protocol, repr(sorted((options or {}).items())), spark.conf.get("spark.sql.caseSensitive"),
        tuple(json.dumps(schema_to_json(v), sort_keys=True) for v in known),
        tuple((m.key, m.value, m.topic, m.partition) for m in messages),
    )  # fmt: skip
    expected = _CODEC_DECODES.get(key) if arrange is None else None
    if expected is None:
        expected = _codec_decode(frame, protocol, options, known)
        if arrange is None:
            _CODEC_DECODES[key] = expected
    actual = decode(frame, protocol, options, plan="jvm", known_versions=known, decoder=decoder)
    try:
        assert actual.tables() == list(expected.rows)
        changes = 0
        for name, want in expected.rows.items():
            assert schema_to_json(actual.schemas()[name]) == expected.schemas[name], name
            assert actual.table(*name).schema.simpleString() == expected.spark_schemas[name], name
            got = _rows(actual, name)
            assert len(got) == len(want), name
            changes += len(want)
            for one, other in zip(got, want, strict=True):
                assert one == other, (name, one["_cdc_offset"])
            # a constant map(...) in the plan can race when tables are planned side by side
            assert created_maps(actual.table(*name)) == [], name
        control = sorted(tuple(r[k] for k in CONTROL_FIELDS) for r in actual.control().collect())
        assert control == expected.control
        dead = actual.dead_letters().collect()
        assert sorted(tuple(r[k] for k in LETTER_FIELDS) for r in dead) == expected.dead_letters
        if dead_offsets is not None:
            assert {r["offset"] for r in dead} == dead_offsets, [r["error"] for r in dead]
        assert actual.partition_commit_ts() == expected.clocks
        assert actual.paths["jvm"] >= jvm_share * changes, actual.paths
        assert expected.steps == ["codec"], expected.steps  # the python plan is the codec's, all of it
    except BaseException:
        actual.release()
        raise
    finally:
        frame.unpersist()
    return actual  # not released: callers read its frames (their blocks are freed once the frames are collected)


JSON_VARIANTS = [
    ("canal-json", {}, {}),
    ("canal-json", {"enable-tidb-extension": True}, {}),
    ("canal-json", {"flavour": "canal", "content-compatible": True}, {}),
    ("debezium", {}, {}),
    ("debezium", {"enable-tidb-extension": True}, {}),
    ("simple", {}, {}),
]


@pytest.mark.parametrize(("protocol", "encoder", "decoder"), JSON_VARIANTS)
def test_the_changefeed_decodes_alike(spark: Any, protocol: str, encoder: dict[str, object],
                                      decoder: dict[str, object]) -> None:  # fmt: skip
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    messages = list(encode(generate(seed=7, transactions=30), protocol, encoder))
    messages.insert(5, BROKEN)
    assert_same_decode(spark, messages, protocol, decoder)


def test_simple_timestamps_in_any_form_of_their_object_decode_alike(spark: Any, text_readers: str) -> None:
    """TiCDC writes a TIMESTAMP as ``{"location":...,"value":...}``; the same object with blanks, its keys the
    other way round or an escaped character is a TIMESTAMP too. The JVM parses every form: each change is typed in
    the JVM, with the codec's values."""
    if "simple" not in installed_codecs():
        pytest.skip("needs simple")
    escaped_blank = "\\u0020"  # JSON's escape of " "
    forms = [
        '{{"location": "{zone}", "value": "{value}"}}',
        '{{"value":"{value}","location":"{zone}"}}',
        '{{"location":"{zone}","value":"{escaped}"}}',
    ]
    located = re.compile(r'\{"location":"([^"]*)","value":"([^"]*)"\}')
    messages, rewritten = [], 0
    for number, message in enumerate(encode(generate(seed=7, transactions=30), "simple")):
        value = (message.value or b"").decode()
        if number % 2:
            form = forms[number % len(forms)]

            def rewrite(match: re.Match[str], form: str = form) -> str:
                zone, local = match.group(1), match.group(2)
                return form.format(zone=zone, value=local, escaped=local.replace(" ", escaped_blank))

            value, count = located.subn(rewrite, value)
            rewritten += count
        messages.append(Message(value=value.encode(), key=message.key, partition=message.partition))
    assert rewritten >= 10
    assert_same_decode(spark, messages, "simple", jvm_share=1.0)


def test_simple_timestamps_are_parsed_once_per_image_not_where_they_are_read(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the Spark SQL readers, the typing's first stage parses a TIMESTAMP object once per image and its reader
    reads that parse: a ParsedReader is never called on the text itself (each such call would be one more
    ``from_json`` per read). (The Java readers read the object themselves.)"""
    if "simple" not in installed_codecs():
        pytest.skip("needs simple")
    monkeypatch.setenv(SWITCH_ENV, "off")

    def parsed_where_read(self: ParsedReader, text: Any) -> Any:
        raise AssertionError("a TIMESTAMP object parsed where it is read")

    monkeypatch.setattr(ParsedReader, "__call__", parsed_where_read)
    frame = _frame(spark, list(encode(generate(seed=7, transactions=30), "simple")))
    decoded = decode(frame, "simple", {}, plan="jvm", decoder=Decoder())  # its own: every reader is called
    try:
        timestamps = [name for name in decoded.tables() if any(
            c.data_type.logical is LogicalType.TIMESTAMP for c in decoded.schemas()[name].stored_columns)]  # fmt: skip
        assert timestamps and all(decoded.table(*name).count() for name in timestamps)
        assert decoded.paths["jvm"] > 0
    finally:
        decoded.release()


def test_simple_rows_held_for_their_schema_keep_their_own_coordinates(spark: Any) -> None:
    """Simple rows ahead of their BOOTSTRAP in a partition are held by the codec and given out with the BOOTSTRAP.
    Each keeps its own message's offset, place and payload, as the JVM reads them: the changes at offsets 0 and
    3, and the dead letter of the one whose DECIMAL(8,2) Spark cannot hold at offset 1 with its own value (not the
    BOOTSTRAP's offset 2 and value)."""
    if "simple" not in installed_codecs():
        pytest.skip("needs simple")
    from decimal import Decimal

    from cdc_core.events import Bootstrap
    from cdc_testing.changefeed import INITIAL_VERSION, schemas

    items = schemas()["items"]
    codec = get_codec("simple").encoder({})

    def row(order: int, price: str) -> Message:
        after = {"order_id": order, "sku": "A-1", "quantity": 1, "unit_price": Decimal(price)}
        change = RowChange(op="insert", database="shop", table="items", table_id=103, schema=items,
                           schema_version=INITIAL_VERSION, commit_ts=INITIAL_VERSION + order, after=after)  # fmt: skip
        [message] = codec.encode(change)
        return Message(value=message.value, key=message.key, partition=0)

    [bootstrap] = codec.encode(Bootstrap(table_schema=items))
    announced = Message(value=bootstrap.value, key=bootstrap.key, partition=0)
    messages = [row(1, "1.50"), row(2, "123456789.50"), announced, row(3, "2.25")]
    decoded = assert_same_decode(spark, messages, "simple", jvm_share=0, dead_offsets={1})
    try:
        changes = decoded.table("shop", "items").collect()
        assert sorted((r["order_id"], r["_cdc_offset"], r["_cdc_sequence"]["position"]) for r in changes) == [
            (1, 0, 0), (3, 3, 0)]  # fmt: skip
        [letter] = decoded.dead_letters().collect()
        assert letter["value"] == messages[1].value
    finally:
        decoded.release()


def test_simple_rows_whose_schema_came_on_another_partition_decode_alike(spark: Any) -> None:
    """TiCDC with ``send-bootstrap-to-all-partition=false`` sends a table's BOOTSTRAP to partition 0 only: a consumer
    that starts mid-stream learns the schema of partition 1's rows there. Both plans type them (the codec's decoder
    of partition 1 never saw the BOOTSTRAP; the batch did), each at its own coordinates; a row of a version nothing
    in the batch brings is a dead letter of both, as is one whose value its schema refuses (the codec reads it only
    in its second pass: a dead letter there, not a failed batch). Nothing is dropped."""
    if "simple" not in installed_codecs():
        pytest.skip("needs simple")
    from decimal import Decimal

    from cdc_core.events import Bootstrap
    from cdc_testing.changefeed import INITIAL_VERSION, schemas

    items = schemas()["items"]
    codec = get_codec("simple").encoder({})

    def row(order: int, partition: int, version: int = INITIAL_VERSION) -> Message:
        after = {"order_id": order, "sku": "A-1", "quantity": 1, "unit_price": Decimal("1.50")}
        change = RowChange(op="insert", database="shop", table="items", table_id=103, schema=items,
                           schema_version=version, commit_ts=INITIAL_VERSION + order, after=after)  # fmt: skip
        [message] = codec.encode(change)
        return Message(value=message.value, key=message.key, partition=partition)

    [bootstrap] = codec.encode(Bootstrap(table_schema=items))
    announced = Message(value=bootstrap.value, key=bootstrap.key, partition=0)
    broken = row(5, 1)
    document = json.loads(broken.value or b"")
    document["data"]["quantity"] = "lots"  # found only when the row is read with its schema
    broken = attrs.evolve(broken, value=json.dumps(document).encode())
    messages = [row(1, 1), announced, row(2, 0), row(3, 1), broken, row(4, 1, INITIAL_VERSION + 7)]
    decoded = assert_same_decode(spark, messages, "simple", jvm_share=0, dead_offsets={4, 5})
    try:
        changes = decoded.table("shop", "items").collect()
        assert sorted((r["order_id"], r["_cdc_partition"], r["_cdc_offset"]) for r in changes) == [
            (1, 1, 0), (2, 0, 2), (3, 1, 3)]  # fmt: skip
    finally:
        decoded.release()
    # A row behind the one whose schema nothing brought: the codec keeps a table's rows in order and holds it to the
    # end (the JVM, which holds nothing, types it); it is a dead letter, not lost
    behind = decode(_frame(spark, [*messages, row(6, 1)]), "simple", plan="python")
    try:
        letters = {r["offset"]: r["error"] for r in behind.dead_letters().collect()}
        assert sorted(letters) == [4, 5, 6] and "held behind an earlier row of shop.items" in letters[6]
    finally:
        behind.release()


def _kitchen_sink(
    protocol: str, encoder: dict[str, object], count: int, fresh_seed: int | None = None
) -> list[Message]:
    """``count`` row changes of every column type encoded by ``protocol``'s encoder: the draws fixed by the test's
    source, or drawn afresh from ``fresh_seed`` (:func:`test_fresh_draws_of_every_column_type_decode_alike`)."""
    from hypothesis import HealthCheck, given, seed, settings

    from cdc_testing.strategies import kitchen_sink_schema, row_changes

    events: list[RowChange] = []

    @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_changes(kitchen_sink_schema(), zero_dates=protocol != "debezium"))
    def draw(change: RowChange) -> None:
        events.append(change)

    # a seed given takes the place of the derandomized one; draw's source stays as it is, as hypothesis derives
    # the derandomized seed from it
    (draw if fresh_seed is None else seed(fresh_seed)(draw))()
    codec = get_codec(protocol).encoder(encoder)
    messages: list[Message] = []
    if protocol == "simple":  # rows name a schema version: TiCDC sends the BOOTSTRAP to every partition first
        from cdc_core.events import Bootstrap

        for partition in range(3):
            messages += [
                Message(value=m.value, key=m.key, partition=partition)
                for m in codec.encode(Bootstrap(table_schema=kitchen_sink_schema()))
            ]
    for number, event in enumerate(events):
        messages += [Message(value=m.value, key=m.key, partition=number % 3) for m in codec.encode(event)]
    return messages


_EVERY_TYPE = [
    ("canal-json", {"enable-tidb-extension": True, "time-zone": "Asia/Shanghai"}),
    ("canal-json", {"flavour": "canal", "content-compatible": True}),
    ("debezium", {"enable-tidb-extension": True}),
    ("simple", {}),
]


@pytest.mark.compiled
@pytest.mark.parametrize(("protocol", "encoder"), _EVERY_TYPE)
def test_every_column_type_decodes_alike(spark: Any, protocol: str, encoder: dict[str, object]) -> None:
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    decoder = {"time-zone": "Asia/Shanghai"} if encoder.get("time-zone") else {}
    assert_same_decode(spark, _kitchen_sink(protocol, encoder, 60), protocol, decoder)


DRAWS_SEED_ENV = "CDC_DRAWS_SEED"  # set by ``nox -s draws``
DRAWS_ROWS_ENV = "CDC_DRAWS_ROWS"
_FRESH = [  # the set-ups above, then the others that change how values are written
    *_EVERY_TYPE,
    ("canal-json", {}),
    ("debezium", {}),
    ("avro", {"enable-tidb-extension": True}),
    ("avro", {"enable-tidb-extension": True, "avro-decimal-handling-mode": "string",
              "avro-bigint-unsigned-handling-mode": "string"}),
    ("avro", {}),
]  # fmt: skip


@pytest.mark.skipif(not os.environ.get(DRAWS_SEED_ENV), reason=f"rows drawn afresh where {DRAWS_SEED_ENV} is set")
@pytest.mark.parametrize("expressions", ["interpreted", pytest.param("compiled", marks=pytest.mark.compiled)])
@pytest.mark.parametrize(("protocol", "encoder"), _FRESH, ids=[f"{p}-{n}" for n, (p, _) in enumerate(_FRESH)])
def test_fresh_draws_of_every_column_type_decode_alike(
    spark: Any, request: pytest.FixtureRequest, protocol: str, encoder: dict[str, object], expressions: str
) -> None:
    """The check of :func:`test_every_column_type_decodes_alike` over rows drawn from a seed of the run's (``nox -s
    draws``), for each encoder set-up that changes how values are written. CI's draws are fixed by the source; a
    value they never hold (a BIT(64) past 2^63 was one) shows up here."""
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    options: dict[str, object] = {"time-zone": "Asia/Shanghai"} if encoder.get("time-zone") else {}
    if protocol == "avro":
        options = {"schema-registry": request.getfixturevalue("schema_registry").url}
        encoder = {**encoder, **options}
    rows = int(os.environ.get(DRAWS_ROWS_ENV, "300"))
    messages = _kitchen_sink(protocol, encoder, rows, fresh_seed=int(os.environ[DRAWS_SEED_ENV]))
    assert_same_decode(spark, messages, protocol, options, decoder=Decoder())


_FRESH_FEEDS = [
    *((protocol, encoder) for protocol, encoder, _ in JSON_VARIANTS),
    ("avro", {"enable-tidb-extension": True}),
    ("avro", {}),
]


def _fresh_feed(protocol: str, encoder: dict[str, object], seed: int, transactions: int) -> list[Message]:
    """A changefeed drawn from ``seed`` (three tables, an ADD COLUMN half way, updates and deletes) as one batch
    over three partitions of one topic or of a topic per table (the seed's choice), as TiCDC dispatches them: each
    row change on a partition of the seed's choosing; each DDL and (Simple) BOOTSTRAP on every partition of its
    table's topic, each watermark (where the protocol writes one) on every partition of every topic; now and then
    a partition's last messages sent again, as after a restart of TiCDC; and a message no codec reads."""
    import random

    from cdc_core.events import Bootstrap, Watermark

    rng = random.Random(seed)
    codec = get_codec(protocol).encoder(encoder)
    tables = ["customers", "orders", "items"] if rng.random() < 0.5 else []
    topics = [f"shop.{t}" for t in tables] or ["shop"]
    sent: list[Message] = []

    def send(message: Message, topic: str, partitions: Iterable[int]) -> None:
        sent.extend(Message(value=message.value, key=message.key, topic=topic, partition=p) for p in partitions)

    def broadcast(message: Message) -> bool:
        if protocol != "simple":
            return False
        return any(isinstance(e, Bootstrap) for e in get_codec(protocol).decoder({}).decode(message))

    for event in generate(seed=seed, transactions=transactions).events:
        table = getattr(event, "table", None)
        topic = f"shop.{table}" if tables and table else topics[0]
        chosen = [rng.randrange(3)]
        for message in codec.encode(event):
            send(message, topic, range(3) if not isinstance(event, RowChange) or broadcast(message) else chosen)
        if isinstance(event, RowChange) and event.commit_ts is not None and rng.random() < 0.1:
            for message in codec.encode(Watermark(ts=event.commit_ts)):
                for every in topics:
                    send(message, every, range(3))
        if rng.random() < 0.03:
            where = (rng.choice(topics), rng.randrange(3))
            sent += [m for m in sent if (m.topic, m.partition) == where][-rng.randrange(1, 6) :]
    sent.insert(rng.randrange(len(sent) + 1), attrs.evolve(BROKEN, topic=topics[0]))
    return sent


@pytest.mark.skipif(not os.environ.get(DRAWS_SEED_ENV), reason=f"changefeeds drawn where {DRAWS_SEED_ENV} is set")
@pytest.mark.parametrize(
    ("protocol", "encoder"), _FRESH_FEEDS, ids=[f"{p}-{n}" for n, (p, _) in enumerate(_FRESH_FEEDS)]
)
def test_fresh_changefeeds_decode_alike(
    spark: Any, request: pytest.FixtureRequest, protocol: str, encoder: dict[str, object]
) -> None:
    """The changefeed check of :func:`test_the_changefeed_decodes_alike` over feeds drawn from the run's seed
    (``nox -s draws``): more tables' changes, the DDL, watermarks and a broken message at places CI's one fixed
    feed never puts them, over three partitions."""
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    options: dict[str, object] = {}
    if protocol == "avro":
        options = {"schema-registry": request.getfixturevalue("schema_registry").url}
        encoder = {**encoder, **options}
    transactions = max(4, int(os.environ.get(DRAWS_ROWS_ENV, "300")) // 3)
    messages = _fresh_feed(protocol, encoder, int(os.environ[DRAWS_SEED_ENV]), transactions)
    assert_same_decode(spark, messages, protocol, options, jvm_share=0.3, decoder=Decoder())


def _corpus(pattern: str, keys: bool) -> list[Message]:
    """Golden values (and, for Debezium, the key written beside each: ``<name>.NN.key`` before ``.NN+1.value``)."""
    messages: list[Message] = []
    files = sorted(corpus_files(pattern))
    for path in files:
        if ".key." in path.name or path.name.endswith(".key.json"):
            continue
        key = None
        if keys:
            if path.name.endswith(".dbz.json"):
                sibling = path.with_name(path.name.replace(".dbz.json", ".dbz.key.json"))
            else:
                number = int(path.name.split(".")[1])
                prefix = path.name.split(".")[0]
                candidates = [p for p in files if p.name.startswith(f"{prefix}.{number - 1:02d}.key.")]
                sibling = candidates[0] if candidates else path
            key = sibling.read_bytes() if sibling != path and sibling.exists() else None
        messages.append(Message(value=path.read_bytes(), key=key, topic=path.parts[-5], partition=0))
    return messages


@pytest.mark.compiled
def test_the_debezium_corpus_decodes_alike(spark: Any) -> None:
    if "debezium" not in installed_codecs():
        pytest.skip("needs cdc-debezium")
    messages = _corpus("*/pkg/sink/codec/debezium/**/*.json", keys=True)
    assert any(m.value and b'"c"' in m.value.replace(b" ", b"") for m in messages)
    # A real stream carries its schemas or does not: the corpus's schemaless messages (every column text, read by
    # the codec) are decoded apart from the typed ones, which share their tables but not their column types.
    typed = [m for m in messages if m.value and json.loads(m.value).get("schema") is not None]
    schemaless = [m for m in messages if m not in typed]
    assert typed and schemaless
    assert_same_decode(spark, typed, "debezium", jvm_share=0.3)
    assert_same_decode(spark, schemaless, "debezium", jvm_share=0)  # without a table-schema: the codec reads them


@pytest.mark.compiled
def test_the_canal_corpus_decodes_alike(spark: Any, text_readers: str) -> None:
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    messages = _corpus("*/pkg/sink/codec/canal/**/*.json", keys=False)
    assert messages
    assert_same_decode(spark, messages, "canal-json")


def _captured(path: Path) -> list[Message]:
    with path.open("rb") as stream:
        return [message for _, message in read_lines(stream, source=str(path))]


DEBEZIUM_CAPTURES = sorted((CAPTURES / "cdc-debezium" / "tests" / "captures").glob("*.jsonl"))


@pytest.mark.parametrize("path", DEBEZIUM_CAPTURES, ids=lambda p: p.stem)
def test_what_real_debezium_wrote_decodes_alike(spark: Any, path: Path) -> None:
    if "debezium" not in installed_codecs():
        pytest.skip("needs cdc-debezium")
    # The captures' topics are one per table; the decode reads them all as one batch, as a job subscribed to all.
    messages = _captured(path)
    schemaless = "schemaless" in path.stem
    assert_same_decode(spark, messages, "debezium", jvm_share=0.0 if schemaless else 0.2)


def test_what_a_real_canal_server_wrote_decodes_alike(spark: Any, text_readers: str) -> None:
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    (path,) = (CAPTURES / "cdc-canal" / "tests" / "captures").glob("*.jsonl")
    # Its `types` table has spatial columns, which the codec reads (the JVM path leaves spatial values to it).
    assert_same_decode(spark, _captured(path), "canal-json", jvm_share=0.1)


def test_the_codec_decides_what_the_jvm_cannot_read(spark: Any) -> None:
    """A value the JVM cannot convert sends its whole message to the codec: a multi-row Canal message with one
    bad value is one dead letter, none of its rows is applied."""
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    messages = list(encode(generate(seed=7, transactions=6), "canal-json"))
    index = next(
        i for i, m in enumerate(messages) if b'"INSERT"' in (m.value or b"") and b'"orders"' in (m.value or b"")
    )
    document = json.loads(messages[index].value or b"")
    good = dict(document["data"][0])
    bad = dict(good, order_id=str(int(good["order_id"]) + 1000), amount="not a number")
    document["data"] = [good, bad]
    messages[index] = Message(value=json.dumps(document).encode(), partition=0)
    decoded = assert_same_decode(spark, messages, "canal-json")
    assert decoded.paths["codec"] >= 1


@pytest.mark.parametrize("rejected", [False, True], ids=["codec-messages-only", "with-a-rejected-value"])
def test_the_codec_reads_the_source_again_only_for_messages_the_jvm_gave_up(
    spark: Any, monkeypatch: pytest.MonkeyPatch, rejected: bool
) -> None:
    """The messages routed to the codec (a DDL, a broken message) come to the driver with the shapes' samples, so
    without a JVM message the codec needs after all, the codec types them there and the source is not read again
    (from Kafka, that would be the whole batch again). A value the JVM rejects sends its message to the codec with
    its payload, which neither the driver nor the cache holds: then the source is read again, for those messages
    only."""
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    messages = list(encode(generate(seed=7, transactions=6), "canal-json"))
    messages.insert(3, BROKEN)
    if rejected:
        index = next(i for i, m in enumerate(messages) if b'"INSERT"' in (m.value or b""))
        document = json.loads(messages[index].value or b"")
        document["data"][0] = dict.fromkeys(document["data"][0], "not a value")
        messages[index] = Message(value=json.dumps(document).encode(), partition=0)
    plans: list[str] = []
    from cdc_spark.decoding.jvm import batch

    whole = batch.whole

    def spy(residue: Any, source: Any) -> Any:
        frame = whole(residue, source)
        plans.append(frame._jdf.queryExecution().optimizedPlan().toString())
        return frame

    monkeypatch.setattr(batch, "whole", spy)
    decoded = assert_same_decode(spark, messages, "canal-json")
    assert decoded.paths["codec"] >= 2, decoded.paths  # the DDL and the broken message at least
    if not rejected:
        assert plans == [], "the source was read again for a residue the driver holds"
        return
    assert plans, "no residue went to the codec"
    assert all("LeftSemi" in plan for plan in plans), plans


@pytest.mark.parametrize("codec_rows", [True, False], ids=["codec-rows", "no-codec-rows"])
def test_a_released_batch_leaves_nothing_cached(spark: Any, codec_rows: bool) -> None:
    """A batch with every kind of cache (the parse, the typed rows, the codec's typed rows) holds them until its
    release, and none after it: a streaming job releases every batch. The codec types rows only where its messages
    have changes: a residue of a DDL and dead letters makes no typed rows of its own."""
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    messages = list(encode(generate(seed=7, transactions=6), "canal-json"))
    messages.insert(3, BROKEN)
    index = next(i for i, m in enumerate(messages) if b'"UPDATE"' in (m.value or b""))
    document = json.loads(messages[index].value or b"")
    document["data"][0] = dict.fromkeys(document["data"][0], "not a value")
    messages[index] = Message(value=json.dumps(document).encode(), partition=0)
    if codec_rows:  # a spatial column: the codec types its rows
        messages.append(_spatial_message())

    def persisted() -> set[int]:  # by id: an earlier test's cache cleaned meanwhile must not count
        return set(spark.sparkContext._jsc.getPersistentRDDs().keySet())

    before = persisted()
    # a decoder of its own, without a speculation: typed apart from its parse, not in it, a cache of its own
    decoded = decode(_frame(spark, messages), "canal-json", {}, plan="jvm", decoder=Decoder())
    try:
        for name in decoded.tables():
            decoded.table(*name).count()
        assert decoded.dead_letters().count() == 2
        assert decoded.paths["codec"] >= 2, decoded.paths
        assert (("shop", "places") in decoded.tables()) is codec_rows
        # the parse, the typed rows, and the codec's typed rows where it has any
        assert len(persisted() - before) == (3 if codec_rows else 2)
    finally:
        decoded.release()
    assert persisted() - before == set()


def _counted_first_passes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The codec's first passes run as Spark jobs from now on (one entry each), the python plan's included (its
    decodes kept for other tests are not reused)."""
    monkeypatch.setattr(sys.modules[__name__], "_CODEC_DECODES", {})
    executor_passes: list[object] = []
    first_pass = python_path._first_pass

    def counted(*args: Any) -> Any:
        executor_passes.append(args)
        return first_pass(*args)

    monkeypatch.setattr(python_path, "_first_pass", counted)
    return executor_passes


@pytest.mark.parametrize("residue", ["samples", "small", "over-the-bound"])
def test_a_residue_of_schema_messages_is_decoded_on_the_driver(
    spark: Any, monkeypatch: pytest.MonkeyPatch, residue: str
) -> None:
    """Simple's schema messages are the samples of their shapes, so the driver holds every one of them: where the
    residue is those alone, the codec's first pass runs there, with no job, and decodes as the executors do (a
    BOOTSTRAP the codec rejects among them, a dead letter with its payload). One message that is nobody's sample
    (malformed text) comes with the samples too while the residue is small; over the bound (here: one message) the
    residue goes to the executors."""
    if "simple" not in installed_codecs():
        pytest.skip("needs cdc-simple")
    messages = list(encode(generate(seed=5, transactions=20), "simple"))
    bootstrap = json.loads(next(m.value for m in messages if b'"BOOTSTRAP"' in (m.value or b"")) or b"")
    bootstrap["tableSchema"]["columns"] = "not columns"
    rejected = json.dumps(bootstrap).encode()
    messages.append(Message(value=rejected, partition=0))
    unsampled = residue != "samples"
    if unsampled:
        messages.append(BROKEN)
    if residue == "over-the-bound":
        monkeypatch.setattr(shapes, "HELD_MESSAGES", 1)
    executor_passes = _counted_first_passes(monkeypatch)
    dead = {len(messages) - 2, len(messages) - 1} if unsampled else {len(messages) - 1}
    assert_same_decode(spark, messages, "simple", dead_offsets=dead)
    # the python plan's; the JVM plan's where the driver does not hold the residue
    assert len(executor_passes) == (2 if residue == "over-the-bound" else 1)
    decoded = decode(_frame(spark, messages), "simple", plan="jvm")
    try:
        letters = {r["offset"]: bytes(r["value"]) for r in decoded.dead_letters().collect()}
    finally:
        decoded.release()
    assert letters[len(messages) - (2 if unsampled else 1)] == rejected


@pytest.mark.parametrize(
    ("bound", "on_driver"),
    [({}, True), ({"HELD_MESSAGES": 4}, False), ({"HELD_BYTES": 400}, False)],
    ids=["small", "too-many", "too-large"],
)
def test_a_small_residue_is_fetched_with_the_samples(
    spark: Any, monkeypatch: pytest.MonkeyPatch, bound: dict[str, int], on_driver: bool
) -> None:
    """Canal-JSON's DDL messages of one table share a shape, so its samples are two of them; a residue within both
    bounds (messages, bytes) comes whole with the samples and the codec's first pass runs on the driver, beyond either
    in the executors, and both decode as the python plan does."""
    if "canal-json" not in installed_codecs():
        pytest.skip("needs cdc-canal")
    ddl = [_canal_ddl(i, f"ALTER TABLE shop.orders COMMENT = 'note {i:02d}'") for i in range(6)]
    messages = [*list(encode(generate(seed=3, transactions=6), "canal-json"))[:12], *ddl]
    assert sum(len(m.value or b"") for m in ddl) > 400
    for name, value in bound.items():
        monkeypatch.setattr(shapes, name, value)
    executor_passes = _counted_first_passes(monkeypatch)
    assert_same_decode(spark, messages, "canal-json")
    assert len(executor_passes) == (1 if on_driver else 2)  # the python plan's, then the JVM plan's if not held
    decoded = decode(_frame(spark, messages), "canal-json", plan="jvm")
    try:
        added = decoded.control().where("kind = 'ddl' AND offset >= 12").orderBy("offset")
        assert [r["sql"] for r in added.collect()] == [json.loads(m.value or b"")["sql"] for m in ddl]
    finally:
        decoded.release()


def _canal_ddl(index: int, sql: str) -> Message:
    document = {"id": 0, "database": "shop", "table": "orders", "pkNames": None, "isDdl": True, "type": "ALTER",
                "es": 1_700_000_000_000 + index, "ts": 1_700_000_000_100 + index, "sql": sql, "sqlType": None,
                "mysqlType": None, "data": None, "old": None}  # fmt: skip
    return Message(value=json.dumps(document).encode(), partition=0)


_POINT = struct.pack("<I", 4326) + b"\x01" + struct.pack("<Idd", 1, 1.5, -2.0)  # a POINT's WKB after its SRID


def _spatial_message() -> Message:
    """A Canal-JSON insert into ``shop.places``, with a spatial column: a point (:data:`_POINT`) and a null."""
    point = _POINT
    document = {
        "id": 3, "database": "shop", "table": "places", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "g": "point"}, "sqlType": {"id": 4, "g": 2004},
        "data": [{"id": "1", "g": point.decode("latin-1")}, {"id": "2", "g": None}],
    }  # fmt: skip
    return Message(value=json.dumps(document).encode(), partition=0)


def test_spatial_values_and_nulls_go_through_the_codec_alike(spark: Any) -> None:
    """Spatial columns are the codec's (the residue): a null geometry beside a real one must not fail the Arrow
    conversion of the Python path (a non-nullable ``wkb`` child did)."""
    point = _POINT
    message = _spatial_message()
    decoded = decode(_frame(spark, [message]), "canal-json", plan="python")
    try:
        rows = {r["id"]: r["g"] for r in decoded.table("shop", "places").collect()}
    finally:
        decoded.release()
    assert rows == {1: (point[4:], 4326), 2: None}
    assert_same_decode(spark, [message], "canal-json", jvm_share=0)


def test_a_value_beyond_its_spark_type_is_a_dead_letter_counted_alike_on_every_plan(spark: Any) -> None:
    """A DECIMAL(5,2) column given 123456.78 (MySQL would refuse it; the message says so): the codec keeps it and
    Spark's type cannot hold it, so the change is a dead letter of the second pass, which the driver plan counts
    without a job (:meth:`DecodedChanges.dead_letter_count`, checked against the rows in ``_plain``)."""
    document = {
        "id": 3, "database": "shop", "table": "prices", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "p": "decimal(5,2)"}, "sqlType": {"id": 4, "p": 3},
        "data": [{"id": "1", "p": "1.50"}, {"id": "2", "p": "123456.78"}],
    }  # fmt: skip
    message = Message(value=json.dumps(document).encode(), partition=0)
    decoded = decode(_frame(spark, [message]), "canal-json", plan="driver")
    try:
        assert decoded.dead_letter_count() == 1
        assert [r["id"] for r in decoded.table("shop", "prices").collect()] == [1]
    finally:
        decoded.release()
    assert_same_decode(spark, [message], "canal-json", jvm_share=0, dead_offsets={0})


# --------------------------------------------------------------------------------------------- TiCDC Avro

AVRO_VARIANTS = [
    {},
    # TiCDC's testing switch besides: DDL and watermark messages, deletes as 0x03 + their TSO
    {"enable-tidb-extension": True, "avro-enable-watermark": True},
]


def _broken_avro(messages: list[Message]) -> list[Message]:
    """The changefeed with records the codec rejects: a value cut short, one with a byte too many after its datum,
    one naming a schema id the registry never gave, and a plain tombstone (no commit ts) after timed messages."""
    rows = [i for i, m in enumerate(messages) if m.key and m.value and m.value[0] == 0 and len(m.value) > 8]
    cut, extra, unknown, deleted = rows[3], rows[7], rows[11], rows[15]
    broken = list(messages)
    broken[cut] = attrs.evolve(messages[cut], value=(messages[cut].value or b"")[:-2])
    broken[extra] = attrs.evolve(messages[extra], value=(messages[extra].value or b"") + b"\x00")
    value = messages[unknown].value or b""
    broken[unknown] = attrs.evolve(messages[unknown], value=b"\x00\x7f\xff\xff\xf0" + value[5:])
    broken.insert(deleted, attrs.evolve(messages[deleted], value=None))
    return broken


@pytest.mark.parametrize("encoder", AVRO_VARIANTS, ids=["plain", "extension"])
def test_the_avro_changefeed_decodes_alike(spark: Any, schema_registry: Any, encoder: dict[str, object]) -> None:
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    options = {"schema-registry": schema_registry.url}
    messages = _broken_avro(list(encode(generate(seed=7, transactions=24), "avro", {**options, **encoder})))
    decoded = assert_same_decode(spark, messages, "avro", options)
    assert decoded.paths["codec"] >= 3  # the broken records went to the codec, and are its dead letters


def test_a_later_avro_batch_of_the_same_schema_ids_builds_and_describes_nothing_again(
    spark: Any, schema_registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The columns ``prepare`` adds are built once per set of schema ids, and a shape (its pair of ids) is described
    once: a second batch of the same ids builds neither and does not call describe (which would make the codec's
    decoder), and takes the first's ids without a job over its headers. A batch with an id that guess lacks (and
    broken records) sends those records to the codec in its first pass; its ids are then found, it is prepared again
    for them and decodes as the codec does. The batch after a miss finds its ids by the job again."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    from cdc_spark.decoding import avro as avro_path
    from cdc_spark.decoding import confluent

    options = {"schema-registry": schema_registry.url}
    encoder = {**options, "enable-tidb-extension": True}
    messages = list(encode(generate(seed=7, transactions=24), "avro", encoder))
    half = messages[: len(messages) // 2]

    def ids(batch: list[Message]) -> set[bytes]:
        return {m.value[1:5] for m in batch if m.value and m.value[0] == 0 and len(m.value) > 9}

    assert ids(half) < ids(messages)
    described: list[int] = []  # the samples handed to describe, per call
    describe = avro_path.AvroAdapter.describe

    def counted(self: Any, samples: Any, known: Any = ()) -> Any:
        described.append(len(samples))
        return describe(self, samples, known)

    found: list[int] = []  # the jobs that found a batch's schema ids
    batch_ids = confluent.batch_ids

    def counted_ids(frame: Any) -> tuple[set[int], set[int]]:
        found.append(1)
        return batch_ids(frame)

    monkeypatch.setattr(avro_path.AvroAdapter, "describe", counted)
    monkeypatch.setattr(confluent, "batch_ids", counted_ids)
    decoder = Decoder()
    assert_same_decode(spark, half, "avro", options, decoder=decoder)
    shapes, columns = decoder.jvm.shapes.builds, avro_path.prepared_columns(decoder)
    assert columns.builds == 1 and shapes >= 3 and sum(described) == shapes and len(found) == 1
    described.clear()
    assert_same_decode(spark, half, "avro", options, decoder=decoder)
    assert (columns.builds, columns.hits, len(found)) == (1, 1, 1)  # guessed: no job
    assert decoder.jvm.shapes.builds == shapes and described == []  # nothing to describe: not called
    decoded = assert_same_decode(spark, _broken_avro(messages), "avro", options, decoder=decoder)
    assert decoded.paths["codec"] >= 3  # the broken records, the codec's dead letters
    assert (columns.builds, len(found)) == (2, 2)  # the guess missed: its ids found, prepared again
    guesses = avro_path.guessed_schema_ids(decoder)
    assert guesses.hits == 2 and guesses.builds == 2

    first_table = [m for m in messages if m.value and m.value[:5] == messages[0].value[:5]]
    assert ids(first_table) < ids(messages)
    assert_same_decode(spark, first_table, "avro", options, decoder=decoder)
    assert (columns.builds, len(found)) == (3, 3)  # after a miss: found by the job, prepared for its own ids


@pytest.mark.parametrize("encoder", AVRO_VARIANTS, ids=["plain", "extension"])
def test_a_later_avro_batch_is_typed_in_its_shapes_pass_and_decodes_alike(
    spark: Any, schema_registry: Any, encoder: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQL typing of a batch's tables types the next batch as its records are read, where its tables, schemas
    and shapes are the last batch's: its one cache then holds typed changes, not records. Half the changefeed (before
    ``customers`` gains a column) is typed after its shapes are found; the whole of it has a new schema id, misses
    and is typed again; the whole again, and a batch of ``customers`` alone (the speculation's other tables left
    out: their records are not read in that batch), are typed in the shapes' pass.
    Each decodes as the codec does, broken records, the tombstone's running clock and all."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    from cdc_spark.decoding import avro as avro_path

    options = {"schema-registry": schema_registry.url}
    messages = _broken_avro(list(encode(generate(seed=7, transactions=24), "avro", {**options, **encoder})))

    def ids(batch: list[Message]) -> set[bytes]:
        return {m.value[1:5] for m in batch if m.value and m.value[0] == 0 and len(m.value) > 9}

    half = messages[: len(messages) // 2]
    assert ids(half) < ids(messages)
    decoder = get_codec("avro").decoder(options)
    rows = [m for m in messages if m.key and m.value and m.value[0] == 0 and len(m.value) > 9]
    newest = next(m for m in reversed(rows) if any(getattr(e, "table", "") == "customers" for e in decoder.decode(m)))
    customers = [m for m in messages if m.key and m.key[:5] == (newest.key or b"")[:5]]  # its rows and tombstones
    assert ids(customers) < ids(messages) and ids(customers) - ids(half)
    stored: list[list[str]] = []  # the columns of each batch's cache
    from cdc_spark.decoding.jvm import batch as jvm_batch

    without_payloads = jvm_batch.without_payloads

    def spied(prepared: Any, keep_value: bool = False) -> Any:
        frame = without_payloads(prepared, keep_value)
        stored.append(frame.columns)
        return frame

    monkeypatch.setattr(jvm_batch, "without_payloads", spied)
    jvm = Decoder()
    ways = []
    for batch in (half, messages, messages, customers):
        before = dict(jvm.jvm.speculated)
        decoded = assert_same_decode(spark, batch, "avro", options, decoder=jvm)
        assert decoded.paths["codec"] >= (3 if batch is messages else 0)
        ways += [k for k, v in jvm.jvm.speculated.items() if v != before.get(k, 0)]
    assert ways == ["unspeculated", "retyped", "typed", "typed"]
    # with the extension (changes with a commit ts before a tombstone), the batches typed in their pass read the
    # tombstones' running clock there; without it no change has a ts, and none needs a clock
    assert jvm.jvm.running_clocks["pass"] == (2 if encoder else 0), jvm.jvm.running_clocks
    # the first batch's cache holds its records, the others' (the one that missed too) the typed changes alone
    records = (avro_path._record("k", ""), avro_path._record("v", ""))
    held = [any(c.startswith(records) for c in columns) for columns in stored]
    assert (held, ["__change_bad" in columns for columns in stored]) == ([True] + [False] * 3, [False] + [True] * 3)


def _hostile_ddl(messages: list[Message]) -> tuple[list[Message], set[int]]:
    """The changefeed with DDL messages of the testing switch after its first: five the codec refuses (a string type,
    no table, a number for the schema, a string commit ts, no JSON) and one it reads (its fields in another order,
    spaced), each a commit ts past every change's (the one read, a lower one), then a plain tombstone (no commit ts:
    it takes its partition's running clock). A refused DDL read as good would move the partition's clocks ahead of
    the codec's. Also returns the offsets of the refused."""
    at = next(i for i, m in enumerate(messages) if m.value and m.value[:1] == b"\x01")
    document = json.loads((messages[at].value or b"")[1:])
    late = (1 << 62) + 10  # past every commit ts of the changefeed (TSOs of 2026)
    refused = [
        {**document, "type": str(document["type"]), "commitTs": late},
        {k: v for k, v in document.items() if k != "table"} | {"commitTs": late},
        {**document, "schema": 5, "commitTs": late},
        {**document, "commitTs": str(late)},
    ]
    bodies = [json.dumps(d).encode() for d in refused] + [b"{not json, " + str(late).encode() + b"}"]
    read = json.dumps(dict(reversed({**document, "commitTs": late - 5}.items())), indent=1).encode()
    added = [attrs.evolve(messages[at], value=b"\x01" + body) for body in [*bodies, read]]
    ddl = messages[at]  # the running clock is its topic's and partition's
    row = next(m for m in messages[:at] if m.key and m.value and m.value[:1] == b"\x00" and m.topic == ddl.topic)
    added.append(attrs.evolve(row, value=None, partition=ddl.partition))
    return [*messages[: at + 1], *added, *messages[at + 1 :]], set(range(at + 1, at + 1 + len(bodies)))


@pytest.mark.compiled  # the pass's whole-stage code
def test_an_avro_pass_of_one_whole_stage_stage_decodes_alike(
    spark: Any, schema_registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the executors compile huge methods (a local session of ``build_session``; the tests' JVM does not), a
    batch typed in its shapes' pass is one whole-stage stage, each typing stage in a generated method of its own
    (``decoding.jvm.own_methods``), and the DDL's commit ts read from a variant. Such a batch, broken records and
    DDL messages the codec refuses among its messages, decodes as the codec does, the partitions' clocks too."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    from cdc_spark.decoding.jvm import batch as jvm_batch
    from cdc_spark.decoding.jvm.own_methods import in_whole_stage
    from cdc_spark.decoding.kept_passes import KeptPasses

    options = {"schema-registry": schema_registry.url}
    encoder = {**options, "enable-tidb-extension": True, "avro-enable-watermark": True}
    messages, refused = _hostile_ddl(_broken_avro(list(encode(generate(seed=7, transactions=24), "avro", encoder))))
    monkeypatch.setattr(jvm_batch, "executors_compile_huge_methods", lambda _spark: True)
    persisted: list[Any] = []
    persist = KeptPasses.persist

    def spied(self: Any, frame: Any, *args: Any) -> Any:
        persisted.append(frame)
        return persist(self, frame, *args)

    monkeypatch.setattr(KeptPasses, "persist", spied)
    decoder = Decoder()
    for _ in range(2):
        decoded = assert_same_decode(spark, messages, "avro", options, decoder=decoder)
        assert refused <= {r["offset"] for r in decoded.dead_letters().collect()}
        decoded.release()
    assert decoder.jvm.speculated["typed"] == 1, decoder.jvm.speculated
    assert in_whole_stage(persisted[-1])
    stages = generated_stages(persisted[-1])
    assert len(stages) == 1  # the pass's one stage, and each of its four typing stages in a method of its own
    assert consumer_methods(stages[0]) >= 4


def _topics_of_one_hash(spark: Any) -> tuple[str, str]:
    """Two topic names Spark hashes alike (``hash``, 32 bits). Found once among 300,000 names ``cdc-<n>`` (a search
    of seconds); checked here, as Spark hashes them now."""
    from pyspark.sql import functions as F

    pair = ("cdc-111190", "cdc-6206")
    hashes = spark.createDataFrame([(t,) for t in pair], "t string").select(F.hash("t").alias("h")).collect()
    assert hashes[0]["h"] == hashes[1]["h"], f"{pair} no longer hash alike in Spark: search for another pair"
    return pair


@pytest.mark.parametrize("same_hash", [False, True], ids=["topics-apart", "topics-of-one-hash"])
def test_avro_tombstones_of_two_topics_take_the_running_clock_read_in_the_pass_unless_the_topics_share_a_hash(
    spark: Any, schema_registry: Any, same_hash: bool
) -> None:
    """The shapes' pass of a batch typed in it reads each message's running clock as it reads the messages, the
    topic numbered by its hash; the frames after it read that clock as data. Two topics of one hash would share a
    clock there: that batch's clock is read again after the pass, each topic numbered apart. Either way the
    tombstones of both topics are ordered as the codec orders them."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    options = {"schema-registry": schema_registry.url}
    messages = list(encode(generate(seed=5, transactions=20), "avro", {**options, "enable-tidb-extension": True}))
    first, second = _topics_of_one_hash(spark) if same_hash else ("cdc-a", "cdc-b")
    # the topics' messages interleaved in each partition, each topic's offsets rising
    batch = [attrs.evolve(m, topic=first if n % 2 else second) for n, m in enumerate(messages)]
    decoder = Decoder()
    for _ in range(2):  # the second batch is typed in its shapes' pass
        decoded = assert_same_decode(spark, batch, "avro", options, decoder=decoder)
    tombstones = [r for n in decoded.tables() for r in decoded.table(*n).collect() if r["_cdc_commit_ts"] is None]
    assert tombstones
    assert {r["_cdc_topic"] for r in tombstones} == {first, second}
    clocks = decoder.jvm.running_clocks
    assert (clocks["pass"], clocks["task"]) == ((0, 2) if same_hash else (1, 1)), clocks
    # a clock read as data lets each table's frame read its own rows of the checkpoint; one read as the tasks read
    # (not deterministic) reads every row of the batch
    for name in decoded.tables():
        frame = decoded.table(*name)
        plan = frame._jdf.queryExecution().analyzed()
        while plan.children().size():
            plan = plan.children().apply(0)
        read = int(plan.rdd().count())
        assert read > frame.count() if same_hash else read == frame.count(), (name, read)
    decoded.release()


def test_later_avro_batches_of_the_same_schema_ids_are_built_from_the_plans_analyzed_before(
    spark: Any, schema_registry: Any
) -> None:
    """A batch of the schema ids of an earlier one is not analyzed again: ``prepare``'s frame and the first stage's
    (typed in the shapes' pass by the same typings) are the plans analyzed before, put over the batch's messages;
    from the third batch on, the first stage is not planned again either (its physical plan is kept over a leaf of
    the messages' rows). The fourth batch is another changefeed of the same ids: it decodes as the codec does, with
    its own rows, through the physical plan the third kept."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    from cdc_spark.decoding import avro as avro_path

    options = {"schema-registry": schema_registry.url}
    extension = {**options, "enable-tidb-extension": True}
    first = _broken_avro(list(encode(generate(seed=7, transactions=24), "avro", extension)))
    other = _broken_avro(list(encode(generate(seed=8, transactions=24), "avro", extension)))

    def ids(batch: list[Message]) -> set[bytes]:
        return {m.value[1:5] for m in batch if m.value and m.value[0] == 0 and len(m.value) > 9}

    assert ids(first) == ids(other) and [m.value for m in first] != [m.value for m in other]
    jvm = Decoder()
    for batch in (first, first, first, other):
        assert_same_decode(spark, batch, "avro", options, decoder=jvm)
    prepared = avro_path.prepared_plans(jvm)
    assert (prepared.built, prepared.reused) == (1, 3)
    # the first batch has no typing to speculate with; the second builds its typed first stage, the others reuse it
    assert (jvm.jvm.stage_plans.built, jvm.jvm.stage_plans.reused) == (1, 2)
    # the third plans the stage made of kept plans and keeps its physical plan; the fourth fills its cache with it
    assert (jvm.jvm.passes.planned, jvm.jvm.passes.reused) == (1, 1)


def test_a_later_simple_batch_of_the_same_schema_versions_fetches_no_row_sample(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Simple shape (a table's schema version) is described once: the next batch with the same versions hands the
    codec only its schema messages (which teach the versions), no row message, and decodes as the codec does."""
    from cdc_spark.decoding import simple as simple_path

    messages = list(encode(generate(seed=7, transactions=40), "simple"))
    rows: list[int] = []  # the row samples (with a message) handed to describe, per call
    describe = simple_path.SimpleAdapter.describe

    def counted(self: Any, samples: Any, known: Any = ()) -> Any:
        rows.append(sum(1 for s in samples if s.jvm and s.message is not None))
        return describe(self, samples, known)

    monkeypatch.setattr(simple_path.SimpleAdapter, "describe", counted)
    decoder = Decoder()
    assert_same_decode(spark, messages, "simple", decoder=decoder)
    shapes = sum(rows)
    assert shapes >= 3 and decoder.jvm.shapes.builds == shapes
    rows.clear()
    assert_same_decode(spark, messages, "simple", decoder=decoder)  # no known schemas: no kept reader is confirmed
    assert sum(rows) == shapes
    # the versions a stream's earlier batches brought (what `cdc_spark.job` passes): every kept reader serves
    known = schema_versions(messages, "simple")
    rows.clear()
    assert_same_decode(spark, messages, "simple", known_versions=known, decoder=decoder)
    assert sum(rows) == 0 and decoder.jvm.shapes.hits >= 3


def test_simple_readers_are_kept_only_where_the_sample_located_every_timestamp() -> None:
    """A TIMESTAMP column null in the sample has no location to read by: its readers serve this batch (a value of
    another location goes to the codec) but are not kept for the next, whose sample may show one."""
    from cdc_core.schema import Column
    from cdc_core.types import parse_type_text
    from cdc_spark.decoding.adapter import Sample
    from cdc_spark.decoding.simple import SimpleAdapter

    columns = [
        Column(name="id", data_type=parse_type_text("int(11)")),
        Column(name="at", data_type=parse_type_text("timestamp")),
    ]
    schema = TableSchema(database="shop", table="t", columns=columns)
    adapter = SimpleAdapter(options={}, session_zone="UTC")

    def sample(at: object) -> Sample:
        data = {"id": "1", "at": at}
        message = Message(value=json.dumps({"type": "INSERT", "data": data}).encode(), topic="t", partition=0, offset=1)
        return Sample(database="shop", table="t", shape="1", message=message, rank=(1, 0, 1, 0), jvm=True)

    located = adapter._readers(schema, sample({"location": "Asia/Shanghai", "value": "2024-01-01 10:00:00"}))
    assert located is not None and located.reusable and located.signatures["at"][1] == "Asia/Shanghai"
    unlocated = adapter._readers(schema, sample(None))
    assert unlocated is not None and not unlocated.reusable

    @attrs.define
    class Described:
        """The Simple adapter but for describe, which gives ``readers`` (the codec needs no schema message)."""

        readers: Any
        readers_by_shape: bool = True

        def expressions_key(self) -> Any:
            return adapter.expressions_key()

        def describe(self, samples: Any, known: Any = ()) -> Any:
            return {("shop", "t", "1"): self.readers}

    for readers, kept in ((located, True), (unlocated, False)):
        reuse = ShapeReuse(None, Described(readers), Reuse(capacity=8), [schema])
        assert reuse.described([sample(None)], ()) == {("shop", "t", "1"): readers}
        assert reuse.kept("shop", "t", "1") is kept
    # the kept readers serve a later batch only where its known schemas hold their very schema: a version number
    # alone may name another schema of the table (one column more, here)
    wider = TableSchema(
        database="shop", table="t", columns=[*columns, Column(name="x", data_type=columns[0].data_type)]
    )
    held: Reuse[Any] = Reuse(capacity=8)
    ShapeReuse(None, Described(located), held, [schema]).described([sample(None)], ())
    for known, kept in (([schema], True), ([], False), ([wider], False)):
        assert ShapeReuse(None, Described(located), held, known).kept("shop", "t", "1") is kept


def _java_descriptors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The descriptors of the Java readers built from now on (``JavaText.reader`` spied), in order."""
    from cdc_spark.decoding.java_text import JavaText

    descriptors: list[str] = []
    reader = JavaText.reader

    def spied(self: JavaText, data_type: Any, descriptor: str) -> Any:
        descriptors.append(descriptor)
        return reader(self, data_type, descriptor)

    monkeypatch.setattr(JavaText, "reader", spied)
    return descriptors


@pytest.fixture(params=["java-readers", "sql"])
def avro_readers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """TiCDC Avro's text values (temporal, JSON) read by the project's Java readers (the default where a JDK compiles
    them) or by Spark SQL alone (``CDC_JAVA_READERS=off``): the descriptors of the Java readers built, to assert on."""
    monkeypatch.setenv(SWITCH_ENV, "off" if request.param == "sql" else "on")
    return _java_descriptors(monkeypatch)


@pytest.mark.compiled
def test_every_column_type_decodes_alike_in_avro(spark: Any, schema_registry: Any, avro_readers: list[str]) -> None:
    """Decimals as bytes and BIGINT UNSIGNED as longs here; as text in the test of values the JVM cannot read."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    options = {"schema-registry": schema_registry.url, "time-zone": "Asia/Shanghai"}
    messages = _kitchen_sink("avro", {**options, "enable-tidb-extension": True}, 60)
    # a decoder of its own: shapes described by an earlier test would not build their readers again
    assert_same_decode(spark, messages, "avro", options, decoder=Decoder())
    if os.environ[SWITCH_ENV] == "on":
        assert {"date", "datetime", "timestamp:Asia/Shanghai", "time", "json"} <= set(avro_readers), avro_readers
    else:
        assert not avro_readers


def test_avro_json_documents_read_by_java_are_the_sql_readers_text(
    spark: Any, schema_registry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TiCDC Avro writes JSON as TiDB prints it (``": "``, ``", "``); the Java reader re-prints each document to the
    same text as the SQL reader, byte for byte (the equality tests compare JSON parsed)."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    options = {"schema-registry": schema_registry.url}
    messages = encode(generate(seed=7, transactions=60), "avro", {**options, "enable-tidb-extension": True})
    frame = _frame(spark, list(messages)).cache()
    descriptors = _java_descriptors(monkeypatch)

    def documents(readers: str) -> tuple[dict[tuple[str, int, int], str | None], bool]:
        """The documents by table and coordinates, and whether a Java reader read them."""
        monkeypatch.setenv(SWITCH_ENV, readers)
        descriptors.clear()
        decoded = decode(frame, "avro", options, plan="jvm")
        try:
            found = {}
            for name in decoded.tables():
                table = decoded.table(*name)
                if "profile" in table.columns:
                    for row in table.select("_cdc_partition", "_cdc_offset", "profile").collect():
                        found[(name[1], row["_cdc_partition"], row["_cdc_offset"])] = row["profile"]
            return found, "json" in descriptors
        finally:
            decoded.release()

    try:
        (java, by_java), (sql, by_sql) = documents("on"), documents("off")
    finally:
        frame.unpersist()
    assert (by_java, by_sql) == (True, False)
    assert java == sql
    compact = [text for text in java.values() if text and text.startswith("{") and '":' in text]
    assert len(compact) > 10 and not any(", " in t or ": " in t for t in compact), java


def test_avro_wide_decimals_and_unreadable_keys_go_to_the_codec(spark: Any, schema_registry: Any) -> None:
    """A shape with a DECIMAL(65,30) (bytes, beyond Spark's 38 digits) is the codec's, and so is a row whose key
    record has a value the codec rejects (it reads the key too) though its value record is fine; the rows beside
    them stay on the JVM."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    import datetime as dt
    import io
    from decimal import Decimal

    import fastavro

    from cdc_avro.registry import Registry, RegistrySettings
    from cdc_core.events import Op
    from cdc_core.schema import Column, Index, TableSchema
    from cdc_core.types import DataType, MySQLType

    def table(name: str, key: DataType, amount: DataType) -> TableSchema:
        columns = [Column(name="id", data_type=key, nullable=False), Column(name="amount", data_type=amount)]
        primary = [Index(name="PRIMARY", columns=["id"], unique=True, primary=True)]
        return TableSchema(database="shop", table=name, columns=columns, indexes=primary, version=1)

    integer, date = DataType(mysql_type=MySQLType.INT), DataType(mysql_type=MySQLType.DATE)
    wide = table("ledger", integer, DataType(mysql_type=MySQLType.DECIMAL, length=65, decimal=30))
    narrow = table("orders", integer, DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=2))
    days = table("days", date, integer)
    options = {"schema-registry": schema_registry.url}
    encoder = get_codec("avro").encoder({**options, "enable-tidb-extension": True})
    messages: list[Message] = []
    for number in range(8):
        rows = [
            (wide, {"id": number, "amount": Decimal(f"{number}1234567890123456789012345678901234.5{number}")}),
            (narrow, {"id": number, "amount": Decimal(f"{number}.25")}),
            (days, {"id": dt.date(2024, 1, number + 1), "amount": number}),
        ]
        for schema, row in rows:
            change = RowChange(op=Op.INSERT, database="shop", table=schema.table, schema=schema, after=row,
                               commit_ts=(number + 1) << 18)  # fmt: skip
            messages += [attrs.evolve(m, partition=number % 3) for m in encoder.encode(change)]
    broken = next(i for i, m in enumerate(messages) if (m.topic or "").endswith("days") and i > 10)
    key = messages[broken].key or b""
    writer = Registry(RegistrySettings(url=schema_registry.url)).schema(int.from_bytes(key[1:5], "big"))
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(json.loads(writer)), {"id": "2024-02-30"})
    messages[broken] = attrs.evolve(messages[broken], key=key[:5] + out.getvalue())
    decoded = assert_same_decode(spark, messages, "avro", options, jvm_share=0.6)
    assert decoded.paths["codec"] == 8 + 1, decoded.paths


# In order: the fourth goes to the newest row, the sample of its shape, so it must be a value the codec reads (a
# sample the codec refuses sends the whole shape to the codec).
AVRO_BAD_VALUES: list[tuple[str, object]] = [
    ("c_date", "2024-02-30"),
    ("c_datetime", "2024-01-01 25:00:00"),
    ("c_time", "12:61:00"),
    ("c_timestamp", "2024-01-01T00:00:00"),
    ("c_json", "{not json"),
    ("c_set", "x,w"),
    ("c_enum", "purple"),
    ("c_decimal", "12x.5"),
    ("c_bigint_u", "18446744073709551616"),
    ("c_tinyint", 300),
    ("c_bit_12", b"\x01\x02\x03"),
    ("c_year", 99999),
    ("c_varchar", "\ufffdBAD-UTF8\ufffd"),  # its bytes are replaced by invalid UTF-8 after writing
]


def test_avro_values_the_jvm_cannot_read_go_to_the_codec(
    spark: Any, schema_registry: Any, avro_readers: list[str]
) -> None:
    """Records written by the project's encoder, one value each rewritten to something TiCDC never writes: a value
    the JVM cannot convert sends its message to the codec, which decodes it or makes it a dead letter."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    import io

    import fastavro

    from cdc_avro.registry import Registry, RegistrySettings

    options = {"schema-registry": schema_registry.url}
    encoder = {**options, "enable-tidb-extension": True, "avro-decimal-handling-mode": "string",
               "avro-bigint-unsigned-handling-mode": "string"}  # fmt: skip
    messages = _kitchen_sink("avro", encoder, 60)
    registry = Registry(RegistrySettings(url=schema_registry.url))
    rows = [i for i, m in enumerate(messages) if m.key and m.value and m.value[0] == 0]
    assert len(rows) > len(AVRO_BAD_VALUES)
    for index, (field, bad) in zip(rows[1::2], AVRO_BAD_VALUES, strict=False):
        value = messages[index].value or b""
        schema = fastavro.parse_schema(json.loads(registry.schema(int.from_bytes(value[1:5], "big"))))
        record = fastavro.schemaless_reader(io.BytesIO(value[5:]), schema, None)
        assert isinstance(record, dict)
        record[field] = bad
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, record)
        datum = out.getvalue().replace("\ufffdBAD-UTF8\ufffd".encode(), b"\xff\xfe\xfdBAD-UTF8\xff\xfe\xfd")
        messages[index] = attrs.evolve(messages[index], value=value[:5] + datum)
    decoded = assert_same_decode(spark, messages, "avro", options, jvm_share=0.3)
    # the codec rejects seven (date, datetime, TIME past 59 minutes, JSON, SET, DECIMAL text, UTF-8) and reads the
    # others as the JVM does
    assert decoded.paths["codec"] >= 7, decoded.paths


def test_a_schema_id_the_registry_does_not_know_is_said_and_its_message_is_the_codecs(
    spark: Any, schema_registry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The JVM plan cannot read a record whose writer schema the registry does not give: it says so once per id
    (a warning naming the id and the registry's answer) and the codec makes the message a dead letter."""
    if "avro" not in installed_codecs():
        pytest.skip("needs cdc-avro")
    unknown = b"\x00" + (987_654).to_bytes(4, "big")
    messages = [Message(key=unknown + b"\x02", value=unknown + b"\x02\x04", partition=0)]
    with caplog.at_level("WARNING", logger="cdc_spark.decoding.avro"):
        decoded = decode(_frame(spark, messages), "avro", {"schema-registry": schema_registry.url}, plan="jvm")
        dead = decoded.dead_letters().collect()
    said = [r.getMessage() for r in caplog.records if "987654" in r.getMessage()]
    assert len(said) == 1 and "go to the codec" in said[0] and "unknown to the registry" in said[0], said
    assert [r["offset"] for r in dead] == [0], dead


def test_json_scalar_documents_decode_alike(spark: Any) -> None:
    """A JSON column holding a string, number or null document: Spark's JSON path would drop a string's quotes,
    so scalars go to the codec; objects and arrays are typed in the JVM."""
    values = ['"caf\\u00e9 \\"x\\""', "12.50", "null", '{"b": [1, {"a": "\\u2028"}], "a": null}', "[true]"]
    messages = []
    for number, value in enumerate(values):
        document = {
            "id": number, "database": "shop", "table": "docs", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "j": "json"}, "sqlType": {"id": 4, "j": 2005},
            "data": [{"id": str(number), "j": value}],
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=0))
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.2)
    assert decoded.paths["codec"] >= 3  # the three scalar documents


def test_numbers_with_an_exponent_in_either_case_go_to_the_codec(spark: Any, text_readers: str) -> None:
    """A DECIMAL or unsigned BIGINT text with an exponent (``e`` or ``E``): Spark's decimal cast would accept it,
    so the codec judges it; plain numbers are typed in the JVM (the plain message is the newest: the shape's sample
    the codec decodes)."""
    values = [("1.5E1", "7"), ("1.5e1", "8"), ("3.25", "1E2"), ("4.75", "1e2"), ("12.50", "100")]
    messages = []
    for number, (amount, count) in enumerate(values):
        document = {
            "id": number, "database": "shop", "table": "numbers", "pkNames": ["id"], "isDdl": False,
            "type": "INSERT", "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "amount": "decimal(10,2)", "count": "bigint(20) unsigned"},
            "sqlType": {"id": 4, "amount": 3, "count": -5},
            "data": [{"id": str(number), "amount": amount, "count": count}],
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=0))
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.2)
    assert decoded.paths == {"jvm": 1, "codec": 4}
    # every step ran, the residue's too, each timed in the order it ran
    assert list(decoded.steps) == ["shapes", "schemas", "typing", "codec"], decoded.steps
    assert all(seconds > 0 for seconds in decoded.steps.values()), decoded.steps


def test_a_dead_letter_does_not_move_the_partition_clock(spark: Any, text_readers: str) -> None:
    """The newest message of partition 0 has a value neither path can read: it becomes a dead letter, and that
    partition's clock stays at the newest change that decoded (the codec's clock never sees a dead letter). The
    table's newest message is in partition 1, so its sample decodes and the JVM types the rest."""
    messages = []
    changes = [(0, 100, "2024-02-28"), (0, 300, "2024-02-30"), (0, 200, "2024-02-29"), (1, 400, "2024-03-01")]
    for number, (partition, commit_ts, day) in enumerate(changes):
        document = {
            "id": number, "database": "shop", "table": "days", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "d": "date"}, "sqlType": {"id": 4, "d": 91},
            "data": [{"id": str(number), "d": day}], "_tidb": {"commitTs": commit_ts},
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=partition))
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.7)
    assert decoded.partition_commit_ts() == {("shop", 0): 200, ("shop", 1): 400}


def test_a_shape_whose_newest_message_the_codec_rejects_is_still_typed_in_the_jvm(
    spark: Any, text_readers: str
) -> None:
    """The codec learns a shape's schema from its newest message; when that one holds a value the codec refuses,
    the shape's oldest message teaches it instead: the other rows are typed in the JVM and the bad one is a dead
    letter on both paths (the shape would otherwise go to the codec whole)."""
    messages = []
    for number in range(6):
        day = "2024-02-30" if number == 5 else f"2024-02-{number + 1:02d}"
        document = {
            "id": number, "database": "shop", "table": "late_days", "pkNames": ["id"], "isDdl": False,
            "type": "INSERT", "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "d": "date"}, "sqlType": {"id": 4, "d": 91},
            "data": [{"id": str(number), "d": day}], "_tidb": {"commitTs": 100 + number},
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=0))
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=1.0, dead_offsets={5})
    assert decoded.paths["jvm"] == 5, decoded.paths


# One value each that TiDB never prints and the codec refuses, but Spark's casts (which trim blanks and newlines,
# take one-digit fields and Java's float forms) or a looser form check would read.
MALFORMED_TEXT: list[tuple[str, str]] = [
    ("t", "10:60:00"),
    ("t", "10:00:75"),
    ("t", "-839:00:00"),
    ("dt", "2024-01-01 10:00:00\n"),
    ("dt", " 2024-01-01 10:00:00"),
    ("dt", "2024-01-01 10:00:00.5\n"),
    ("dt", "2024-1-1 1:2:3"),
    ("dt", "0000-00-00 00:00:00\n"),
    ("ts", "2024-01-01 10:00:00\n"),
    ("ts", "2024-01-01 10:00:00 "),
    ("d", "2024-01-1\n"),
    ("d", " 2024-01-1"),
    ("d", "0000-00-00\n"),
    ("f", "1.5d"),  # Java's Double.parseDouble reads a type suffix and hexadecimal; Python's float() does not
    ("f", "2F\n"),
    ("g", "0x1p3"),
    ("g", "1_000.5"),
]


def test_malformed_text_is_a_dead_letter_on_both_paths(spark: Any, text_readers: str) -> None:
    """A TIME past 59 minutes or seconds (or 838 hours); a DATE, DATETIME or TIMESTAMP with a blank or newline
    around it or one-digit fields; a FLOAT or DOUBLE in a form only Java reads: the codec refuses it, so the JVM must
    not type it (its message goes to the codec and becomes a dead letter there). The well-formed messages around
    them are typed in the JVM."""
    good = {"d": "2024-02-29", "dt": "2024-02-29 01:02:03.5", "ts": "2024-02-29 01:02:03", "t": "-838:59:59",
            "f": "1.5", "g": "-2.5e-3"}  # fmt: skip
    rows = [dict(good, **{name: value}) for name, value in MALFORMED_TEXT]
    rows += [dict(good, t="12:34:56.5", f=" 2.5e3\n"), dict(good, d="0000-00-00", dt="2024-00-00 00:00:00"), good]
    # year 0 with a real month and day: a zero date to MySQL, a date to Spark's cast
    rows.append(dict(good, d="0000-01-01", dt="0000-02-29 10:00:00", ts="0000-12-31 23:59:59"))
    messages = []
    for number, data in enumerate(rows):
        document = {
            "id": number, "database": "shop", "table": "moments", "pkNames": ["id"], "isDdl": False,
            "type": "INSERT", "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "d": "date", "dt": "datetime(1)", "ts": "timestamp", "t": "time",
                          "f": "float", "g": "double"},
            "sqlType": {"id": 4, "d": 91, "dt": 93, "ts": 93, "t": 92, "f": 7, "g": 8},
            "data": [{"id": str(number), **data}], "_tidb": {"commitTs": 100 + number},
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=number % 2))
    assert_same_decode(spark, messages, "canal-json", jvm_share=1.0, dead_offsets=set(range(len(MALFORMED_TEXT))))


def test_a_trailing_newline_is_the_codecs_to_judge(spark: Any, text_readers: str) -> None:
    """Java's ``$`` also matches before a final newline: an ENUM index or SET bitmask followed by one (which Spark's
    integer cast would read) is refused by the codec, so it is a dead letter on both paths; a DECIMAL past Spark's
    38 digits with one, which the codec reads, gets the codec's value (the JVM would have kept the newline in the
    text and padded nothing)."""
    good = {"e": "2", "s": "3", "m": "1.5"}
    rows = [dict(good, e="2\n"), dict(good, s="3\n"), dict(good, m="1.5\n"), good, dict(good, m="-7")]
    messages = []
    for number, data in enumerate(rows):
        document = {
            "id": number, "database": "shop", "table": "picks", "pkNames": ["id"], "isDdl": False,
            "type": "INSERT", "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "e": "enum('a','b','c')", "s": "set('a','b','c')", "m": "decimal(50,2)"},
            "sqlType": {"id": 4, "e": 4, "s": -7, "m": 3},
            "data": [{"id": str(number), **data}], "_tidb": {"commitTs": 100 + number},
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=0))
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.3, dead_offsets={0, 1})
    assert decoded.paths["codec"] >= 1  # the decimal with a newline went to the codec


# Integer columns whose contract Spark type is wider than the column (TINYINT UNSIGNED a short, MEDIUMINT an int,
# INT UNSIGNED a long, BIT(4) a long) and text Spark's integer cast reads but the codecs refuse.
# "bw": TiCDC's bare bit, whose width is not on the wire: BIT(64)'s values at least
_INTEGER_TYPES = {"tu": "tinyint(3) unsigned", "mi": "mediumint(9)", "iu": "int(10) unsigned",
                  "bu": "bigint(20) unsigned", "b": "bit(4)", "bw": "bit", "s": "smallint(6)"}  # fmt: skip
_INTEGER_EDGES = {"tu": "255", "mi": "-8388608", "iu": "4294967295", "bu": "18446744073709551615", "b": "15",
                  "bw": "18446744073709551615", "s": "-32768"}  # fmt: skip
_INTEGER_MALFORMED: list[tuple[str, str]] = [
    ("tu", "256"),
    ("tu", "-1"),
    ("mi", "8388608"),
    ("mi", "-8388609"),
    ("iu", "4294967296"),
    ("bu", "18446744073709551616"),
    ("b", "16"),
    ("bw", "100000000000000000000"),  # no bound of its own (a bit may be wider elsewhere): decimal(20,0)'s
    ("s", " 12"),
    ("s", "+12"),
    ("s", "12\n"),
]


def test_integers_beyond_their_column_or_in_a_loose_form_are_dead_letters_on_both_paths(
    spark: Any, text_readers: str
) -> None:
    """Canal's codec refuses an integer its column cannot hold and any text but ``[-]digits``: a JVM reading into
    the wider Spark type, or Spark's cast (which trims blanks and reads a ``+``), must not type them. The column
    types' extreme values are typed in the JVM."""
    rows = [dict(_INTEGER_EDGES, **{name: value}) for name, value in _INTEGER_MALFORMED]
    rows += [dict(_INTEGER_EDGES, tu="0", mi="8388607", iu="0", bu="0", b="0", bw="9223372036854775808", s="32767")]
    rows += [_INTEGER_EDGES]
    sql_types = {"tu": -6, "mi": 4, "iu": 4, "bu": -5, "b": -7, "bw": -7, "s": 5}
    messages = []
    for number, data in enumerate(rows):
        document = {
            "id": number, "database": "shop", "table": "counts", "pkNames": ["id"], "isDdl": False,
            "type": "INSERT", "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", **_INTEGER_TYPES}, "sqlType": {"id": 4, **sql_types},
            "data": [{"id": str(number), **data}], "_tidb": {"commitTs": 100 + number},
        }  # fmt: skip
        messages.append(Message(value=json.dumps(document).encode(), partition=number % 2))
    decoded = assert_same_decode(
        spark, messages, "canal-json", jvm_share=1.0, dead_offsets=set(range(len(_INTEGER_MALFORMED)))
    )
    rows_read = {r["id"]: r for r in decoded.table("shop", "counts").collect()}
    assert rows_read[len(rows) - 1]["bu"] == 2**64 - 1 and rows_read[len(rows) - 1]["mi"] == -8388608
    # a bit of no known width is decimal(20,0) on Spark: as a bigint, BIT(64)'s upper half failed the batch
    assert rows_read[len(rows) - 1]["bw"] == 2**64 - 1 and rows_read[len(rows) - 2]["bw"] == 2**63


def test_debezium_integers_beyond_their_source_column_are_dead_letters_on_both_paths(spark: Any) -> None:
    """With the connector's ``column.propagate.source.type`` the codec knows a MEDIUMINT or an INT UNSIGNED behind
    an int32 or int64 field and refuses a value the column cannot hold; the JVM, reading into the field's wider
    Spark type, must not type it. A number written as a string with a blank or a plus is the codec's to judge."""
    from cdc_core.schema import Column, Index, TableSchema
    from cdc_core.types import parse_type_text

    names = ("tu", "mi", "iu", "s")
    columns = [Column(name="id", data_type=parse_type_text("int(11)"), nullable=False)]
    columns += [Column(name=n, data_type=parse_type_text(_INTEGER_TYPES[n])) for n in names]
    schema = TableSchema(database="shop", table="counts", columns=columns, table_id=1, version=1,
                         indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)])  # fmt: skip
    source_types = {"tu": "TINYINT UNSIGNED", "mi": "MEDIUMINT", "iu": "INT UNSIGNED", "s": "SMALLINT"}
    edges = {"tu": 255, "mi": -8388608, "iu": 4294967295, "s": -32768}
    changed: list[tuple[str, object]] = [("tu", 256), ("mi", 8388608), ("mi", -8388609), ("iu", 4294967296),
                                         ("s", " 12"), ("s", "+12")]  # fmt: skip
    encoder = get_codec("debezium").encoder({})
    messages = []
    for number, (name, value) in enumerate([*changed, (None, None)]):
        after = {"id": number, **edges}
        event = RowChange(op="insert", database="shop", table="counts", after=after, commit_ts=100 + number)
        event = attrs.evolve(event, schema=schema)
        (encoded,) = encoder.encode(event)
        document = json.loads(encoded.value or b"")
        for field in document["schema"]["fields"][1]["fields"]:
            if field["field"] in source_types:
                field["parameters"] = {"__debezium.source.column.type": source_types[field["field"]]}
        if name is not None:
            document["payload"]["after"][name] = value
        messages.append(Message(value=json.dumps(document).encode(), key=encoded.key, partition=number % 2))
    decoded = assert_same_decode(spark, messages, "debezium", jvm_share=1.0, dead_offsets=set(range(len(changed))))
    assert decoded.schemas()[("shop", "counts")].column("mi").data_type.type_text().startswith("mediumint")


def _partial_updates(message: Message) -> Message:
    """A Canal-JSON update whose ``old`` rows name only the columns that changed (TiCDC's
    ``only-output-updated-columns``), its rows doubled (one message, several rows), a delete with a null value."""
    document = json.loads(message.value or b"")
    if document.get("type") != "UPDATE":
        return message
    pairs = zip(document["data"], document["old"], strict=True)
    olds = [{k: v for k, v in old.items() if row.get(k) != v} for row, old in pairs]
    document["data"] = document["data"] * 2
    document["old"] = olds * 2
    return attrs.evolve(message, value=json.dumps(document).encode())


def test_canal_updates_naming_only_their_changed_columns_decode_alike(spark: Any, text_readers: str) -> None:
    """An update's old row that names only what changed is completed from its new row, and its changed columns
    are the ones it names, on every way of typing."""
    messages = [_partial_updates(m) for m in encode(generate(seed=5, transactions=60), "canal-json")]
    partial = [m for m in messages if m.value and b'"UPDATE"' in m.value]
    assert partial
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.9)
    changed = [
        row["_cdc_changed_columns"]
        for name in decoded.tables()
        for row in decoded.table(*name).where("_cdc_op = 'update'").collect()
    ]
    assert changed and all(len(columns) > 0 for columns in changed)


def _odd_envelopes(protocol: str) -> list[bytes]:
    """Row messages of ``protocol`` with what the Java envelope readers send to the codec: a member named twice,
    text after the document, a member of another JSON type, a value that is an array or an object, bytes that are
    not UTF-8 (and, beside them, characters of two to four bytes that are)."""
    messages = [m for m in encode(generate(seed=9, transactions=8), protocol) if m.value and b'"INSERT"' in m.value]
    text = messages[0].value or b""
    document = json.loads(text)
    images = "data"
    row = document[images][0] if protocol == "canal-json" else document[images]
    column = next(iter(row))
    odd = [
        text[:-1] + b',"table":"again"}',  # the table named twice
        text + b"\n",  # only blank after the document: the codec's to judge too
        json.dumps({**document, "database": 5}).encode(),
        json.dumps(
            {**document, "isDdl": "false"} if protocol == "canal-json" else {**document, "version": "1"}
        ).encode(),
    ]
    for value in (["a"], {"a": 1}):
        changed = json.loads(text)
        target = changed[images][0] if protocol == "canal-json" else changed[images]
        target[column] = value
        odd.append(json.dumps(changed).encode())
    # a stray byte, a surrogate, an overlong form, a cut character; at each of the eight byte offsets the Java check
    # reads ASCII at, and at the end; then well-formed two, three and four byte characters
    for pad, bad in enumerate(
        [
            b"\xff",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"\xe4\xb8",
            b"\x80",
            b"\xf4\x90\x80\x80",
            b"\xf0\x9f\x98",
            b"\xfe",
            b"\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80",
        ]
    ):
        odd.append(text[:-1] + b',"extra":"' + b"x" * pad + bad + b'"}')
    odd.append(text[:-1] + b',"extra":"\xc3')
    if protocol == "canal-json":
        odd += _odd_canal_rows(document)
    else:
        odd += _odd_simple_images(document)
    return [text, *odd]


def _odd_simple_images(document: dict[str, Any]) -> list[bytes]:
    """Simple messages whose images the typed envelope reader keeps as it reads them, or not: an image naming a
    column twice, and a well-formed message naming its table after its image (read again by the row typer)."""
    image = json.dumps(document["data"])
    column = next(iter(document["data"]))
    twice = json.dumps({**document, "data": "IMAGE"}).replace(
        '"IMAGE"', image[:-1] + ',"' + column + '":' + json.dumps(document["data"][column]) + "}"
    )
    named_last = {
        **{k: v for k, v in document.items() if k not in ("database", "table")},
        "database": document["database"],
        "table": document["table"],
    }
    return [twice.encode(), json.dumps(named_last).encode()]


def _odd_canal_rows(document: dict[str, Any]) -> list[bytes]:
    """Canal-JSON messages of several rows (and updates) that the Java envelope reader checks row by row: a second
    row with its columns in another order, without one, or naming one twice; an old row naming a column its row
    does not; an insert whose old row is null; and, for the JVM, well-formed updates whose old rows come before its
    rows, or whose table is named after them."""
    row = document["data"][0]
    names = list(row)
    reordered = {name: row[name] for name in reversed(names)}
    rows_text = "[" + json.dumps(row) + "," + json.dumps(row)[:-1] + ',"' + names[0] + '":null}]'
    twice = json.dumps({**document, "data": "ROWS"}).replace('"ROWS"', rows_text)
    update = {**document, "type": "UPDATE", "data": [row, row], "old": [{names[0]: None}, {names[-1]: None}]}
    old_first = {"old": update["old"], **{k: v for k, v in update.items() if k != "old"}}
    # the table named after the rows (the typed envelope reader keeps no rows then: they are read again)
    named_last = {
        **{k: v for k, v in update.items() if k not in ("database", "table")},
        "database": document["database"],
        "table": document["table"],
    }
    return [
        json.dumps(named_last).encode(),
        json.dumps({**document, "old": [None]}).encode(),
        json.dumps({**document, "data": [row, reordered]}).encode(),
        json.dumps({**document, "data": [row, {name: row[name] for name in names[1:]}]}).encode(),
        twice.encode(),
        json.dumps({**update, "old": [{names[0]: None}, {"no_such_column": None}]}).encode(),
        json.dumps(update).encode(),
        json.dumps(old_first).encode(),
    ]


@pytest.mark.parametrize("protocol", ["canal-json", "simple"])
def test_envelopes_the_java_does_not_read_go_to_the_codec(spark: Any, text_readers: str, protocol: str) -> None:
    """Each odd envelope decodes as the codec decodes it (or is its dead letter) on every way of typing; the plain
    message before them is typed in the JVM. Text after the document is refused by the codec, by the Java envelope
    readers and by the SQL envelope (:func:`test_text_after_the_document_is_refused_as_the_codec_refuses_it`)."""
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    head = [m for m in encode(generate(seed=9, transactions=8), protocol) if m.value and b'"INSERT"' not in m.value]
    values = _odd_envelopes(protocol)
    values.append(values[0] + b" trailing")
    odd = [Message(value=v, partition=0) for v in values]
    decoded = assert_same_decode(spark, [*head, *odd], protocol, jvm_share=0.0)
    assert decoded.paths["jvm"] >= 1


# What may follow a JSON document in a message: text the codecs refuse (Spark's ``from_json`` alone would read the
# document and ignore it), and white space, which they take
_AFTER_THE_DOCUMENT = [b" x", b"}", b"]", b",{}", b'{"a":1}', b"]]", b" \n\t "]


def _assert_text_after_the_document_refused(spark: Any, protocol: str) -> None:
    """A changefeed's row message with each kind of text after its document: a dead letter on both paths; with white
    space after it, the same change."""
    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    head = [m for m in encode(generate(seed=9, transactions=8), protocol) if m.value]
    row = next(m for m in head if b'"INSERT"' in m.value or b'"op":"c"' in m.value)
    odd = [Message(value=row.value + tail, key=row.key, partition=0) for tail in _AFTER_THE_DOCUMENT]
    refused = {len(head) + k for k, tail in enumerate(_AFTER_THE_DOCUMENT) if tail.strip()}
    decoded = assert_same_decode(spark, [*head, *odd], protocol, jvm_share=0.5, dead_offsets=refused)
    assert decoded.paths["jvm"] >= 1


@pytest.mark.parametrize("protocol", ["canal-json", "simple"])
def test_text_after_the_document_is_refused_as_the_codec_refuses_it(
    spark: Any, text_readers: str, protocol: str
) -> None:
    """Read by the Java envelope reader or by Spark SQL's (:func:`_assert_text_after_the_document_refused`)."""
    _assert_text_after_the_document_refused(spark, protocol)


def test_text_after_a_debezium_document_is_refused_as_the_codec_refuses_it(spark: Any) -> None:
    """Debezium's envelope is read by Spark SQL whatever the switches
    (:func:`_assert_text_after_the_document_refused`)."""
    _assert_text_after_the_document_refused(spark, "debezium")


@pytest.mark.parametrize("protocol", ["canal-json", "simple"])
def test_a_batch_typed_in_its_shapes_pass_decodes_alike(spark: Any, protocol: str) -> None:
    """The changefeed decoded twice with the Java row typer: the second batch is typed by the first's typings in
    its shapes' pass (a speculation that holds), and decodes as the codec does, residue and all."""

    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    messages = list(encode(generate(seed=5, transactions=40), protocol))
    decoder = Decoder()
    assert_same_decode(spark, messages, protocol, decoder=decoder)
    assert_same_decode(spark, messages, protocol, decoder=decoder)
    assert decoder.jvm.speculated["typed"] == 1, decoder.jvm.speculated


@pytest.mark.parametrize("topic", ["named", "null"])
@pytest.mark.parametrize("protocol", ["canal-json", "simple"])
def test_odd_envelopes_typed_in_their_shapes_pass_decode_alike(spark: Any, protocol: str, topic: str) -> None:
    """The odd envelopes decoded twice: the second batch is read by the typed envelope reader, which types the rows
    as it reads them (or reads a message again where its table comes after its rows), and decodes as the codec
    does, each message on the path it took in two passes. With a null topic (a frame that is not Spark's Kafka
    source), the residue, the dead letters and the rows the JVM rejected are found by their coordinates all the
    same, a null topic as the codec keeps it."""
    from pyspark.sql import functions as F

    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    head = [m for m in encode(generate(seed=9, transactions=8), protocol) if m.value]
    messages = [*head, *[Message(value=v, partition=0) for v in _odd_envelopes(protocol)]]
    decoder = Decoder()
    untopic = (lambda f: f.withColumn("topic", F.lit(None).cast("string"))) if topic == "null" else None
    first = assert_same_decode(spark, messages, protocol, jvm_share=0.0, arrange=untopic, decoder=decoder)
    second = assert_same_decode(spark, messages, protocol, jvm_share=0.0, arrange=untopic, decoder=decoder)
    assert second.paths["codec"] > 0, second.paths
    assert decoder.jvm.speculated["typed"] == 1, decoder.jvm.speculated
    assert second.paths == first.paths  # none typed by the row typer alone went to the codec
    assert second.paths["jvm"] >= len(head) // 2, second.paths


@pytest.mark.parametrize("broadcast", [True, False], ids=["clocks-broadcast", "clocks-shuffled"])
@pytest.mark.parametrize("dead_letter", [False, True], ids=["all-valid", "with-a-dead-letter"])
def test_changes_without_a_ts_after_timed_ones_are_ordered_alike_when_typed_in_the_shapes_pass(
    spark: Any, monkeypatch: pytest.MonkeyPatch, dead_letter: bool, broadcast: bool
) -> None:
    """Canal-JSON changes without a commit ts (no ``_tidb``) between timed ones, with or without a dead letter among
    them: each untimed change takes the newest ts before it in its partition. Decoded twice, the second batch typed
    in its shapes' pass (the running clock joined to the cached changes; taken again without the dead letter), both
    as the codec orders them; the clocks broadcast to the rows, or (as for a batch of many untimed changes) not."""

    if not broadcast:
        monkeypatch.setattr(clock, "BROADCAST_CLOCKS", 0)

    messages = []
    days = ["2024-02-28", "2024-02-29", "2024-02-30" if dead_letter else "2024-03-04", "2024-03-01", "2024-03-02"]
    for number, day in enumerate(days):
        document: dict[str, Any] = {
            "id": number, "database": "shop", "table": "days", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)", "d": "date"}, "sqlType": {"id": 4, "d": 91},
            "data": [{"id": str(number), "d": day}],
        }  # fmt: skip
        if number % 2 == 0:
            document["_tidb"] = {"commitTs": 100 * (number + 1)}
        messages.append(Message(value=json.dumps(document).encode(), partition=0))
    decoder = Decoder()
    first = assert_same_decode(spark, messages, "canal-json", jvm_share=0.5, decoder=decoder)
    second = assert_same_decode(spark, messages, "canal-json", jvm_share=0.5, decoder=decoder)
    assert decoder.jvm.speculated["typed"] == 1, decoder.jvm.speculated
    assert second.paths == first.paths


@pytest.mark.parametrize("order", ["offset-order", "shuffled", "backwards"])
def test_the_running_clock_is_read_as_the_tasks_read_unless_the_input_is_out_of_order(
    spark: Any, order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Canal-JSON over three partitions, every fourth change without a commit ts. In offset order (each Spark
    partition a range of offsets, as Kafka's source reads them) each task reads the running clock as it reads, with
    no window; shuffled (tasks' ranges overlap) or backwards (each task's offsets go back), a window sorts. All as
    the codec orders them, and their order ts asserted from the input. Either way the shapes' aggregate finds the
    task ranges: no job of their own."""
    from pyspark.sql import functions as F

    from cdc_spark.decoding.jvm import batch as jvm_batch

    def apart(*_: object) -> None:
        raise AssertionError("the task clock's ranges were found in a job of their own")

    monkeypatch.setattr(jvm_batch, "task_seeds", apart)

    messages, expected = [], {}
    newest: dict[int, int] = {}
    for number in range(60):
        partition, ts = number % 3, 1000 + 7 * (number - number % 6)  # each partition's ts rise, two at a time equal
        document: dict[str, Any] = {
            "id": number, "database": "shop", "table": "lines", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)"}, "sqlType": {"id": 4}, "data": [{"id": str(number)}],
        }  # fmt: skip
        if number % 4 == 3:  # every partition's first message has a ts
            expected[number] = newest[partition]
        else:
            document["_tidb"] = {"commitTs": ts}
            newest[partition] = max(ts, newest.get(partition, ts))
        messages.append(Message(value=json.dumps(document).encode(), partition=partition))
    arrangements = {
        "shuffled": lambda frame: frame.repartition(2, F.rand(seed=5)),
        "backwards": lambda frame: frame.repartitionByRange(2, "topic", "partition", "offset").sortWithinPartitions(
            F.desc("offset")
        ),
    }
    arrange = arrangements.get(order)
    decoder = Decoder()
    decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.5, arrange=arrange, decoder=decoder)
    planned = decoder.jvm.running_clocks
    assert set(planned) == {"task" if order == "offset-order" else "sorted"}, planned
    ordered = {r["_cdc_offset"]: r["_cdc_sequence"]["commit_ts"] for r in decoded.table("shop", "lines").collect()}
    assert {offset: ordered[offset] for offset in expected} == expected


@pytest.mark.parametrize("topic", ["shop", None], ids=["named-topic", "null-topic"])
def test_changes_without_a_ts_before_any_timed_one_take_the_last_batchs_clock(spark: Any, topic: str | None) -> None:
    """The clock a topic-partition ended the last batch on (``partition_ts``) orders this batch's changes without a
    commit ts that come before its first timed one: in both plans, for a named topic and for a frame whose topic is
    null (the codec keys its clock by the message's topic, None included)."""
    from pyspark.sql import functions as F

    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = []
    for number in range(4):
        document: dict[str, Any] = {
            "id": number, "database": "shop", "table": "seeded", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)"}, "sqlType": {"id": 4}, "data": [{"id": str(number)}],
        }  # fmt: skip
        if number == 2:
            document["_tidb"] = {"commitTs": 9000}
        rows.append((None, json.dumps(document).encode(), topic, 0, number, stamp, 0, None))
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS).cache()
    seeds = {(topic, 0): 5000}
    orders = []
    decoder = Decoder()
    for plan in ("python", "jvm", "jvm"):  # the second JVM batch typed in its shapes' pass: its clocks joined
        decoded = decode(frame, "canal-json", plan=plan, partition_ts=seeds, decoder=decoder)
        try:
            table = decoded.table("shop", "seeded").select("_cdc_offset", F.col("_cdc_sequence.commit_ts").alias("ts"))
            orders.append({r["_cdc_offset"]: r["ts"] for r in table.collect()})
            assert decoded.partition_commit_ts() == {(topic, 0): 9000}
        finally:
            decoded.release()
    frame.unpersist()
    assert decoder.jvm.speculated["typed"] == 1, decoder.jvm.speculated
    assert orders == [{0: 5000, 1: 5000, 2: 9000, 3: 9000}] * 3


def _canal_change(number: int, kind: str, commit_ts: int | None, table: str = "resent") -> bytes:
    """A Canal-JSON change of row ``number``, its commit ts in TiCDC's extension (none: a change without one); kind
    ``WATERMARK``: TiCDC's watermark of ``commit_ts``."""
    if kind == "WATERMARK":
        return json.dumps({
            "id": 0, "database": "", "table": "", "pkNames": None, "isDdl": False, "type": "TIDB_WATERMARK",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "sqlType": None, "mysqlType": None, "data": None,
            "old": None, "_tidb": {"watermarkTs": commit_ts},
        }).encode()  # fmt: skip
    document: dict[str, Any] = {
        "id": number, "database": "shop", "table": table, "pkNames": ["id"], "isDdl": False, "type": kind,
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)"}, "sqlType": {"id": 4}, "data": [{"id": str(number)}],
    }  # fmt: skip
    if commit_ts is not None:
        document["_tidb"] = {"commitTs": commit_ts}
    return json.dumps(document).encode()


def test_a_tail_sent_again_orders_changes_without_a_ts_by_the_next_ts_after_them(spark: Any) -> None:
    """TiCDC restarted and sent a partition's tail again from its checkpoint: row 1 deleted (no ts, as TiCDC Avro's
    tombstones) and inserted again inside it. The newest ts before the second delete is the first sending's end
    (150), which would put that delete after the insert that follows it and leave row 1 deleted. Both plans order it
    by the next ts after it (120) instead, so row 1's last change is that insert. The JVM plan sorts: its tasks'
    running maximum cannot know the next ts. A second batch opens with a delete whose next ts is older than where the
    first ended (``partition_ts``): it too takes the next change's ts, not the lagging watermark's between them.
    Decoded twice by the JVM (the second typed in its shapes' pass)."""
    from pyspark.sql import functions as F

    sent = [(1, "INSERT", 100), (2, "INSERT", 110), (1, "DELETE", None), (1, "INSERT", 120), (3, "INSERT", 150)]
    again = [*sent[1:], (3, "DELETE", None)]  # from after offset 0; the batch ends with a delete
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(None, _canal_change(n, kind, ts), "shop", 0, offset, stamp, 0, None)
            for offset, (n, kind, ts) in enumerate(sent + again)]  # fmt: skip
    reopened = [(1, "DELETE", None), (0, "WATERMARK", 100), (1, "INSERT", 120)]
    opening = [(None, _canal_change(n, kind, ts), "shop", 0, 10 + offset, stamp, 0, None)
               for offset, (n, kind, ts) in enumerate(reopened)]  # fmt: skip
    batches = [(spark.createDataFrame(rows, KAFKA_COLUMNS).repartitionByRange(2, "offset").cache(), {}),
               (spark.createDataFrame(opening, KAFKA_COLUMNS).coalesce(1).cache(), {("shop", 0): 150})]  # fmt: skip
    orders: list[list[dict[int, int | None]]] = []
    decoder = Decoder()
    for plan in ("python", "jvm", "jvm"):
        found = []
        for frame, seeds in batches:
            decoded = decode(frame, "canal-json", plan=plan, partition_ts=seeds, decoder=decoder)
            try:
                table = decoded.table("shop", "resent").select("_cdc_offset", F.col("_cdc_sequence.commit_ts"))
                found.append({r["_cdc_offset"]: r["commit_ts"] for r in table.collect()})
                assert decoded.dead_letters().count() == 0
            finally:
                decoded.release()
        orders.append(found)
    for frame, _ in batches:
        frame.unpersist()
    assert set(decoder.jvm.running_clocks) == {"sorted"}, decoder.jvm.running_clocks
    untimed = [{2: 110, 6: 120, 9: 150}, {10: 120}]  # offsets 2 and 9 in commit order: the newest ts before them
    assert [[{o: ts for o, ts in batch.items() if o in want} for batch, want in zip(plan, untimed, strict=True)]
            for plan in orders] == [untimed] * 3  # fmt: skip
    changes = [(o, n, kind) for o, (n, kind, _) in enumerate(sent + again)]
    last = max((orders[0][0][o], o, kind) for o, n, kind in changes if n == 1 and o != 0)
    assert last[2] == "INSERT"


def test_changes_without_a_ts_take_the_clock_of_their_own_topic(spark: Any) -> None:
    """Two topics whose partition 0 interleave their offsets: the running clock's window numbers the topics (it sorts
    by their numbers, not their names), and an untimed change of one takes the newest ts before it in its own topic's
    partition, not the other's (whose ts are all newer). Decoded twice: the second batch typed in its shapes' pass."""
    messages = []
    for number in range(8):
        topic = "late" if number % 2 == 0 else "early"
        document: dict[str, Any] = {
            "id": number, "database": "shop", "table": topic, "pkNames": ["id"], "isDdl": False, "type": "INSERT",
            "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
            "mysqlType": {"id": "int(11)"}, "sqlType": {"id": 4}, "data": [{"id": str(number)}],
        }  # fmt: skip
        if topic == "late" or number < 4:  # the early topic's last changes have no ts
            document["_tidb"] = {"commitTs": (9000 if topic == "late" else 100) + number}
        messages.append(Message(value=json.dumps(document).encode(), topic=topic, partition=0))
    decoder = Decoder()  # the second batch typed in its shapes' pass
    for _ in range(2):
        decoded = assert_same_decode(spark, messages, "canal-json", jvm_share=0.5, decoder=decoder)
    early = {r["_cdc_offset"]: r["_cdc_sequence"]["commit_ts"] for r in decoded.table("shop", "early").collect()}
    assert early == {1: 101, 3: 103, 5: 103, 7: 103}, early


# ------------------------------------------------------------------------------------------- Debezium Avro

DEBEZIUM_AVRO_CAPTURES = ("mdb-avro", "mdb-avro-connect", "pg-avro", "pg-avro-connect")


def _captured_avro(name: str, registry: Any) -> list[Message]:
    """What a real connector wrote through Kafka Connect's Avro converter (cdc-debezium's captured corpus), its
    writer schemas registered in ``registry`` and the messages' schema ids renumbered to the ones it gave."""
    from cdc_testing.apicurio import with_schema_ids

    folder = CAPTURES / "cdc-debezium" / "tests" / "captures" / "avro"
    schemas = {int(k): v for k, v in json.loads((folder / f"{name}.schemas.json").read_text()).items()}
    return with_schema_ids(_captured(folder / f"{name}.jsonl"), registry.register_captured(schemas))


@pytest.mark.compiled
@pytest.mark.parametrize("name", DEBEZIUM_AVRO_CAPTURES)
def test_what_real_debezium_wrote_through_the_avro_converter_decodes_alike(
    spark: Any, schema_registry: Any, name: str
) -> None:
    """``from_avro`` per schema id, each image read by the Debezium JSON rules: the codec's events, the connector's
    schema-change topic, logical messages and variable-scale decimals left to the codec."""
    if "debezium-avro" not in installed_codecs():
        pytest.skip("needs cdc-debezium[avro]")
    messages = _captured_avro(name, schema_registry)
    options = {"schema-registry": schema_registry.url, **({"binary.handling.mode": "hex"} if "connect" in name else {})}
    # the types tables have spatial columns (and PostgreSQL's a variable-scale numeric): their rows are the codec's
    assert_same_decode(spark, messages, "debezium-avro", options, jvm_share=0.1 if name.startswith("pg") else 0.3)


def test_the_debezium_avro_changefeed_decodes_alike(spark: Any, schema_registry: Any) -> None:
    """The changefeed generator through the debezium-avro encoder (the TiDB extension: commit ts and types), with
    records the codec rejects: cut short, a byte too many, a schema id the registry never gave."""
    if "debezium-avro" not in installed_codecs():
        pytest.skip("needs cdc-debezium[avro]")
    options = {"schema-registry": schema_registry.url}
    encoder = {**options, "enable-tidb-extension": True}
    messages = _broken_avro(list(encode(generate(seed=7, transactions=24), "debezium-avro", encoder)))
    decoded = assert_same_decode(spark, messages, "debezium-avro", options)
    assert decoded.paths["codec"] >= 3  # the broken records went to the codec, and are its dead letters


def test_schemaless_debezium_rows_are_typed_as_text_not_dead_letters(spark: Any) -> None:
    """A schemaless stream without ``table-schema`` (MariaDB's connector with ``schemas.enable=false``): every row is
    typed, each column a string, on both plans; ``untyped-columns=reject`` makes the rows dead letters instead."""
    if "debezium" not in installed_codecs():
        pytest.skip("needs cdc-debezium")
    path = CAPTURES / "cdc-debezium" / "tests" / "captures" / "mdb-schemaless.jsonl"
    messages = _captured(path)
    decoded = assert_same_decode(spark, messages, "debezium", jvm_share=0.0, dead_offsets=set())
    types = decoded.table("inventory", "types")
    assert {field.dataType.simpleString() for field in types.schema.fields if not field.name.startswith("_cdc")} == {
        "string"
    }
    assert types.count() > 0
    strict = decode(_frame(spark, messages), "debezium", {"untyped-columns": "reject"})
    try:
        codec = get_codec("debezium").decoder({})
        rows = [m for m in messages if any(isinstance(e, RowChange) for e in codec.decode(m))]
        letters = strict.dead_letters().collect()
        assert len(letters) == len(rows) and all("untyped-columns=reject" in r["error"] for r in letters)
    finally:
        strict.release()


def test_an_adapter_without_the_newer_properties_decodes_as_before(spark: Any) -> None:
    """An adapter another package registers may predate ``keeps_prepared_plans``: read as False, its batches decode
    as the codec does, and no leaf or kept physical plan is made for them."""
    from cdc_spark.decoding import canal as canal_path

    class Older:
        """The Canal-JSON adapter as a package written before the property would give it."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            if name == "keeps_prepared_plans":
                raise AttributeError(name)
            return getattr(self._inner, name)

    def older(options: Any, zone: str, session: Any, state: Any) -> Any:
        made = canal_path.adapter(options, zone, session, state)
        return None if made is None else Older(made)

    decoder = Decoder()
    decoder._factories["canal-json"] = older
    messages = list(encode(generate(seed=5, transactions=20), "canal-json"))
    for _ in range(2):
        assert_same_decode(spark, messages, "canal-json", decoder=decoder)
    assert (decoder.jvm.passes.planned, decoder.jvm.passes.reused) == (0, 0)
