"""The JVM decode path reuses a batch's typing projections for the next batch with the same shapes, and only then.

A streaming job decodes batch after batch of the same tables: the projections that type their columns are built
once (a :class:`~cdc_spark.decoding.Decoder`'s ``jvm.typings`` counts builds and hits), and Canal's shapes are
described once (its ``jvm.shapes``). Each test makes its own decoder. Whatever they capture is in the key: a
batch under another session time zone, another ``time-zone`` option or another column type gets projections of
its own, and the values show it (each expected instant is worked out here, not taken from a decode).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_spark.decoding import Decoder, decode, java_rows
from cdc_spark.decoding.jvm import java_typing
from cdc_spark.decoding.jvm.wide import SPLIT_METHODS
from cdc_spark.decoding.reuse import Reuse
from cdc_spark.runtime.jit import executors_compile_huge_methods
from cdc_spark.session_conf import session_conf
from cdc_spark.source.columns import KAFKA_COLUMNS
from cdc_testing.spark_plans import kept_plans

EVENTS = ("shop", "events")
LOCAL_TEXT = "2024-01-01 10:00:00"  # a TIMESTAMP value as TiDB prints it: wall time in the changefeed's zone
UTC_MICROS = 1_704_103_200_000_000  # LOCAL_TEXT read in UTC
SHANGHAI_MICROS = UTC_MICROS - 8 * 3_600_000_000  # LOCAL_TEXT read in Asia/Shanghai (UTC+8)

# batches of a few messages: interpreted, as cdc apply runs them; what is kept and reused is the same either way
pytestmark = pytest.mark.usefixtures("batch_expressions")


def _message(number: int, value: str, value_type: tuple[str, int] = ("int(11)", 4), table: str = EVENTS[1]) -> Message:
    document = {
        "id": number, "database": EVENTS[0], "table": table, "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "at": "timestamp", "v": value_type[0]},
        "sqlType": {"id": 4, "at": 93, "v": value_type[1]},
        "data": [{"id": str(number), "at": LOCAL_TEXT, "v": value}], "_tidb": {"commitTs": 100 + number},
    }  # fmt: skip
    return Message(value=json.dumps(document).encode(), partition=0)


def _decoded(
    spark: Any, decoder: Decoder, messages: list[Message], zone_option: str = "UTC", table: str = EVENTS[1]
) -> list[tuple[int, int, Any]]:
    """``(id, at as microseconds since the epoch, v)`` of every change (all of ``table``), all typed in the JVM."""
    from pyspark.sql import functions as F

    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    rows = [(m.key, m.value, "shop", 0, i, stamp, 0, None) for i, m in enumerate(messages)]
    decoded = decoder.decode(spark.createDataFrame(rows, KAFKA_COLUMNS), "canal-json", {"time-zone": zone_option})
    try:
        assert decoded.paths == {"jvm": len(messages), "codec": 0}
        assert list(decoded.steps) == ["shapes", "schemas", "typing"], decoded.steps  # no residue: no codec step
        frame = decoded.table(EVENTS[0], table).select("id", F.unix_micros("at").alias("at"), "v")
        return sorted((r["id"], r["at"], r["v"]) for r in frame.collect())
    finally:
        decoded.release()


@pytest.fixture
def decoder() -> Decoder:
    """A decoder of its own: nothing kept from other tests."""
    return Decoder()


@pytest.fixture
def typings(decoder: Decoder, monkeypatch: pytest.MonkeyPatch) -> Iterator[Reuse[Any]]:
    """The decoder's kept projections; the batches typed by Spark SQL, whose projections these are (the Java row
    typer's reuse is tested below)."""
    monkeypatch.setenv(java_rows.SWITCH_ENV, "off")
    yield decoder.jvm.typings


@pytest.mark.spark
def test_a_batch_with_the_shapes_of_the_last_reuses_its_typing(
    spark: Any, decoder: Decoder, typings: Reuse[Any]
) -> None:
    """The second batch (other rows, same table and shape) is typed by the first one's projections, correctly, and
    its shape's readers are the first batch's (Canal's shape digest fixes them: no sample fetched or decoded)."""
    assert _decoded(spark, decoder, [_message(0, "7"), _message(1, "8")]) == [(0, UTC_MICROS, 7), (1, UTC_MICROS, 8)]
    assert (typings.builds, typings.hits) == (1, 0)
    assert (decoder.jvm.shapes.builds, decoder.jvm.shapes.hits) == (1, 0)
    assert _decoded(spark, decoder, [_message(5, "-3"), _message(6, "12"), _message(7, "0")]) == [
        (5, UTC_MICROS, -3), (6, UTC_MICROS, 12), (7, UTC_MICROS, 0),
    ]  # fmt: skip
    assert (typings.builds, typings.hits) == (1, 1)
    assert (decoder.jvm.shapes.builds, decoder.jvm.shapes.hits) == (1, 1)


@pytest.mark.spark
def test_another_session_time_zone_builds_the_typing_again(spark: Any, decoder: Decoder, typings: Reuse[Any]) -> None:
    """The projections capture the session zone (the TIMESTAMP reader converts into it): under another one, the
    same shapes are typed by projections of their own and the instant stays the one the text names."""
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    messages = [_message(0, "7")]
    try:
        spark.conf.set(key, "UTC")
        assert _decoded(spark, decoder, messages) == [(0, UTC_MICROS, 7)]
        spark.conf.set(key, "America/New_York")
        assert _decoded(spark, decoder, messages) == [(0, UTC_MICROS, 7)]
    finally:
        spark.conf.set(key, before)
    assert (typings.builds, typings.hits) == (2, 0)


@pytest.mark.spark
def test_another_time_zone_option_builds_the_typing_again(spark: Any, decoder: Decoder, typings: Reuse[Any]) -> None:
    """The changefeed's ``time-zone`` option names the zone of TIMESTAMP text: each zone types its own instant, and
    going back to the first zone reuses the first projections."""
    messages = [_message(0, "7")]
    assert _decoded(spark, decoder, messages, "UTC") == [(0, UTC_MICROS, 7)]
    assert _decoded(spark, decoder, messages, "Asia/Shanghai") == [(0, SHANGHAI_MICROS, 7)]
    assert (typings.builds, typings.hits) == (2, 0)
    assert _decoded(spark, decoder, messages, "UTC") == [(0, UTC_MICROS, 7)]
    assert (typings.builds, typings.hits) == (2, 1)
    assert (decoder.jvm.shapes.builds, decoder.jvm.shapes.hits) == (2, 1)  # the zone is in the shapes' key too


@pytest.mark.spark
def test_another_column_type_builds_the_typing_again(spark: Any, decoder: Decoder, typings: Reuse[Any]) -> None:
    """The same table and column names with ``v`` now a VARCHAR: a new shape and schema, so new projections (the
    integer reader would find ``0x1F`` bad and send the message to the codec; the string reader keeps the text)."""
    assert _decoded(spark, decoder, [_message(0, "31")]) == [(0, UTC_MICROS, 31)]
    assert _decoded(spark, decoder, [_message(1, "0x1F", ("varchar(20)", 12))]) == [(1, UTC_MICROS, "0x1F")]
    assert (typings.builds, typings.hits) == (2, 0)
    assert (decoder.jvm.shapes.builds, decoder.jvm.shapes.hits) == (2, 0)


@pytest.mark.spark
def test_the_java_row_typer_is_registered_once_per_plan(
    spark: Any, decoder: Decoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch with the shapes of the last is typed by the function registered for the last (none registered
    again); another ``time-zone`` option is another plan, so another function, and each types its own instant."""
    from cdc_spark.runtime.java_code import install

    monkeypatch.setenv(java_rows.SWITCH_ENV, "on")
    assert install(spark)
    counted: Counter[str] = Counter()  # the row typer's functions registered from now on
    register_once = java_rows.register_once

    def counting(session: Any, name: str, register: Callable[[], object]) -> str:
        def registered() -> object:
            counted[name] += 1
            return register()

        return register_once(session, name, registered)

    monkeypatch.setattr(java_rows, "register_once", counting)
    assert _decoded(spark, decoder, [_message(20, "7"), _message(21, "8")], "Europe/Lisbon") == [
        (20, UTC_MICROS, 7), (21, UTC_MICROS, 8),
    ]  # fmt: skip
    first = {name for name in counted if name.startswith("cdc_rows_")}
    assert len(first) == 1 and all(counted[name] == 1 for name in first)
    assert _decoded(spark, decoder, [_message(25, "-3")], "Europe/Lisbon") == [(25, UTC_MICROS, -3)]
    assert {name for name in counted if name.startswith("cdc_rows_")} == first
    assert all(counted[name] == 1 for name in first)  # not registered again
    assert _decoded(spark, decoder, [_message(20, "7")], "Asia/Shanghai") == [(20, SHANGHAI_MICROS, 7)]
    assert len({name for name in counted if name.startswith("cdc_rows_")}) == 2


@pytest.mark.spark
@pytest.mark.compiled  # its kept plans' whole-stage codegen
@pytest.mark.parametrize(("rows", "typing_codegen"), [("off", False), ("on", True)])
def test_the_batch_caches_are_planned_as_their_typing_needs_and_the_session_is_left_as_it_was(
    spark: Any, monkeypatch: pytest.MonkeyPatch, rows: str, typing_codegen: bool
) -> None:
    """Both JVM caches of a batch (the parse, the typed rows) are kept by :func:`~cdc_spark.batch_cache.persist_batch`,
    the typing planned without whole-stage codegen where its one huge method would be interpreted (the Java row
    typer's projection is small: it keeps it), and the session's own settings are untouched: one the user set keeps
    its value, one left unset stays unset, and so does whole-stage codegen."""
    monkeypatch.setenv(java_rows.SWITCH_ENV, rows)
    kept = kept_plans(monkeypatch)  # planned for good under the decode's settings
    size = "spark.sql.inMemoryColumnarStorage.batchSize"
    messages = [_message(0, "7"), _message(1, "8")]
    rows = [(m.key, m.value, "shop", 0, i, dt.datetime(2024, 5, 1, tzinfo=dt.UTC), 0, None)
            for i, m in enumerate(messages)]  # fmt: skip
    with session_conf(spark, {size: "7000"}):  # a setting of the caller's own
        decoded = decode(spark.createDataFrame(rows, KAFKA_COLUMNS), "canal-json", {})
        try:
            assert len(kept) == 2
            # the typing is planned without whole-stage codegen where its one huge method would be interpreted
            assert not executors_compile_huge_methods(spark)  # the tests' driver options do not compile them
            # an operator in a whole-stage code generated stage prints as ``*(<stage>) <operator>`` (in the physical
            # plans only)
            assert [re.search(r"\*\(\d+\) ", plan) is not None for plan in kept] == [True, typing_codegen]
            assert decoded.table(*EVENTS).count() == 2
        finally:
            decoded.release()
        assert spark.conf.get(size) == "7000"
        assert all(spark.conf.get(key, None) is None for key in SPLIT_METHODS)


@pytest.mark.spark
def test_decode_without_a_decoder_uses_the_applications_and_clear_forgets_what_it_kept(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``decode`` without a decoder keeps its projections and checked options in the Spark application's decoder
    (one for every session of it); ``clear`` forgets them, so the next batch builds them again."""
    monkeypatch.setenv(java_rows.SWITCH_ENV, "off")
    shared = Decoder.shared(spark)
    assert Decoder.shared(spark.newSession()) is shared
    shared.clear()
    stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    frame = spark.createDataFrame([(None, _message(0, "7").value, "shop", 0, 0, stamp, 0, None)], KAFKA_COLUMNS)
    decode(frame, "canal-json", {}).release()
    decode(frame, "canal-json", {}).release()
    assert (shared.jvm.typings.builds, shared.jvm.typings.hits, shared.checked_options.builds) == (1, 1, 1)
    shared.clear()
    assert (len(shared.jvm.typings), len(shared.jvm.shapes), len(shared.checked_options)) == (0, 0, 0)
    decode(frame, "canal-json", {}).release()
    assert (shared.jvm.typings.builds, shared.jvm.typings.hits) == (1, 0)
    shared.clear()


def test_the_reuse_keeps_the_most_recently_used_within_its_capacity() -> None:
    built: list[str] = []

    def build(key: str) -> str:
        built.append(key)
        return key.upper()

    reuse: Reuse[str] = Reuse(capacity=2)
    for key in ("a", "b", "a", "c", "a", "b"):
        assert reuse.get(key, functools.partial(build, key)) == key.upper()
    # "b" was the least recently used when "c" came, so it is built again; "a" never left
    assert built == ["a", "b", "c", "b"]
    assert (reuse.builds, reuse.hits, len(reuse)) == (4, 2, 2)
    reuse.put("c", "kept")  # "a" was the least recently used
    assert ("a" in reuse, reuse.peek("c"), reuse.peek("a")) == (False, "kept", None)
    with pytest.raises(ValueError, match="capacity 0"):
        Reuse(capacity=0)


def test_kept_shape_readers_serve_their_batch_whatever_its_new_shapes_drop() -> None:
    """A batch whose shapes' pass counted on kept readers gets them, though the readers of its new shapes outnumber
    what the map keeps: they are taken before the new ones are kept (else those shapes went to the codec)."""
    from cdc_core.schema import TableSchema
    from cdc_spark.decoding.adapter import Sample, ShapeReaders
    from cdc_spark.decoding.jvm.shapes import ShapeReuse

    schema = TableSchema(database="shop", table="t", columns=[])

    class Describes:
        readers_by_shape = True

        def expressions_key(self) -> str:
            return "k"

        def describe(self, samples: Any, known: Any = ()) -> Any:
            return {s.key: ShapeReaders(schema=schema, readers={}, signatures={s.shape: 1}) for s in samples}

    def sample(shape: str, message: bool) -> Sample:
        found = Message(value=b"{}", topic="t", partition=0, offset=1) if message else None
        return Sample(database="shop", table="t", shape=shape, rank=(1, 0, 1, 0), message=found, jvm=True)

    kept: Reuse[ShapeReaders] = Reuse(capacity=2)
    reuse = ShapeReuse(None, Describes(), kept, [schema])  # type: ignore[arg-type]
    first = reuse.described([sample("a", True), sample("b", True)], ())
    assert reuse.kept("shop", "t", "a") and reuse.kept("shop", "t", "b")
    # new shapes first, as the shapes' aggregate may give them
    later = reuse.described([sample("c", True), sample("d", True), sample("a", False), sample("b", False)], ())
    assert later[("shop", "t", "a")] is first[("shop", "t", "a")]
    assert later[("shop", "t", "b")] is first[("shop", "t", "b")]
    assert all(later[("shop", "t", s)] is not None for s in "cd")


@pytest.mark.spark
def test_the_next_batch_is_typed_by_the_last_ones_java_typer_in_its_shapes_pass(
    spark: Any, decoder: Decoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch whose tables, schemas and shapes the last batch's Java typings cover is typed while its shapes are
    found (its cache holds typed rows, not text); one with a new column type misses, is typed again from the
    source, and its typings are the next batch's speculation."""
    from cdc_spark.runtime.java_code import install

    monkeypatch.setenv(java_rows.SWITCH_ENV, "on")
    assert install(spark)
    kept = (decoder.jvm.row_calls, decoder.jvm.change_columns, decoder.jvm.parts)
    assert _decoded(spark, decoder, [_message(0, "7"), _message(1, "8")]) == [(0, UTC_MICROS, 7), (1, UTC_MICROS, 8)]
    assert decoder.jvm.speculated == {"unspeculated": 1}
    assert _decoded(spark, decoder, [_message(5, "-3"), _message(6, "12")]) == [
        (5, UTC_MICROS, -3),
        (6, UTC_MICROS, 12),
    ]
    assert decoder.jvm.speculated == {"unspeculated": 1, "typed": 1}
    # (builds, hits) of the typer calls, change columns and part columns: the typed batch calls the typer's rows
    # from the envelope's (built anew), and its change and part columns are the first batch's
    assert [(r.builds, r.hits) for r in kept] == [(2, 0), (1, 1), (1, 1)]
    assert _decoded(spark, decoder, [_message(9, "0x1F", ("varchar(20)", 12))]) == [(9, UTC_MICROS, "0x1F")]
    assert decoder.jvm.speculated == {"unspeculated": 1, "typed": 1, "retyped": 1}
    assert _decoded(spark, decoder, [_message(10, "0x20", ("varchar(20)", 12))]) == [(10, UTC_MICROS, "0x20")]
    assert decoder.jvm.speculated == {"unspeculated": 1, "typed": 2, "retyped": 1}
    assert [(r.builds, r.hits) for r in kept] == [(4, 1), (1, 4), (2, 2)]  # a new schema: new calls and parts
    assert _decoded(spark, decoder, [_message(11, "0x21", ("varchar(20)", 12))]) == [(11, UTC_MICROS, "0x21")]
    assert [(r.builds, r.hits) for r in kept] == [(4, 2), (1, 5), (2, 3)]  # a stream's steady state builds none


@pytest.mark.spark
def test_a_speculation_keeps_the_tables_of_earlier_batches(
    spark: Any, decoder: Decoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches that each touch some of a stream's tables: a batch of a table the speculation lacks misses, and the
    next speculation keeps the earlier batch's table beside its own, so a batch of that earlier table hits (up to
    ``SPECULATED_TABLES`` tables, as recent first)."""
    from cdc_spark.runtime.java_code import install

    monkeypatch.setenv(java_rows.SWITCH_ENV, "on")
    assert install(spark)
    assert _decoded(spark, decoder, [_message(0, "7")]) == [(0, UTC_MICROS, 7)]
    assert decoder.jvm.speculated == {"unspeculated": 1}
    other = [_message(1, "0x1F", ("varchar(20)", 12), table="other")]
    assert _decoded(spark, decoder, other, table="other") == [(1, UTC_MICROS, "0x1F")]
    assert decoder.jvm.speculated == {"unspeculated": 1, "retyped": 1}
    assert _decoded(spark, decoder, [_message(2, "8")]) == [(2, UTC_MICROS, 8)]
    assert decoder.jvm.speculated == {"unspeculated": 1, "retyped": 1, "typed": 1}
    kept = next(iter(decoder.jvm.speculations._entries.values()))
    assert [(t.index, t.schema.table) for t in kept] == [(0, "other"), (1, "events")]
    monkeypatch.setattr(java_typing, "SPECULATED_TABLES", 1)
    assert _decoded(spark, decoder, [_message(3, "0x20", ("varchar(20)", 12), table="third")], table="third") == [
        (3, UTC_MICROS, "0x20")
    ]
    kept = next(iter(decoder.jvm.speculations._entries.values()))
    assert [(t.index, t.schema.table) for t in kept] == [(0, "third")]


@pytest.mark.spark
def test_the_options_are_checked_once_per_set_and_refused_options_every_time(
    spark: Any, decoder: Decoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``decode`` checks the protocol and options on the driver, before any job, by making the codec's decoder: once
    per set of options (a stream's every batch made one), while options the codec refuses fail every call."""
    from cdc_core.errors import ConfigError
    from cdc_spark.decoding import decoder as decoder_module

    made: list[dict[str, object]] = []  # the options of each decoder decode made
    codec_of = decoder_module.get_codec

    class Counted:
        def __init__(self, protocol: str) -> None:
            self.codec = codec_of(protocol)

        def decoder(self, options: dict[str, object]) -> Any:
            made.append(dict(options))
            return self.codec.decoder(options)

    monkeypatch.setattr(decoder_module, "get_codec", Counted)
    empty = spark.createDataFrame([], KAFKA_COLUMNS)

    def decode_nothing(options: dict[str, object]) -> None:
        decoder.decode(empty, "canal-json", options).release()

    for _ in range(2):
        with pytest.raises(ConfigError, match="unknown option"):
            decode_nothing({"no-such-option": "1"})
    assert made == [{"no-such-option": "1"}] * 2
    made.clear()
    for _ in range(2):
        decode_nothing({"time-zone": "UTC"})
    decode_nothing({"time-zone": "Asia/Shanghai"})
    assert made == [{"time-zone": "UTC"}, {"time-zone": "Asia/Shanghai"}]


def test_a_protocols_own_state_is_made_once_per_decoder_and_forgotten_with_it() -> None:
    """The decoder keeps each protocol adapter's state without knowing the protocol (TiCDC Avro's prepared columns
    are one such): made on first use, the same object after, a new one after ``clear``, none shared between
    decoders."""
    made: list[Reuse[Any]] = []

    def make() -> Reuse[Any]:
        made.append(Reuse(capacity=2))
        return made[-1]

    decoder, other = Decoder(), Decoder()
    first = decoder.kept("avro", make)
    assert decoder.kept("avro", make) is first and len(made) == 1
    assert decoder.kept("simple", make) is not first and len(made) == 2
    assert other.kept("avro", make) is not first
    decoder.clear()
    assert decoder.kept("avro", make) is not first and len(made) == 4
