"""Running real CDC producers in tests: connector settings per variant, reading what they wrote, replaying it.

A *variant* is one Debezium connector with its own topic prefix and settings (connector options such as
``decimal.handling.mode`` and per-connector converter options such as ``value.converter.decimal.format``), and
the decoder options that read what it writes. Several variants run side by side on one Connect worker against
one database, so a session starts each server once.

:func:`replay` folds decoded events into table states, and :func:`states_in_order` checks that the states the
database went through (one ``SELECT`` after each workload step) appear in that order while replaying, so every
row image of every message is compared with what the database itself returned.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs

from cdc_core.codec import Decoder
from cdc_core.errors import CdcError
from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.message import Message
from cdc_core.values import Geometry
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.connect import JSON_CONVERTER, ConnectWorker
from cdc_testing.databases import PASSWORD, USER, MariaDB, PostgreSQL

Row = dict[str, Any]
TableState = dict[Any, Row]  # primary key value -> row


@attrs.frozen
class Variant:
    """One connector: a name (also its topic prefix), its settings, and the decoder options for its output.

    ``protocol`` is what reads it: ``debezium`` (JsonConverter) or ``debezium-avro`` (Apicurio's Avro converter,
    whose registry settings :func:`avro_converters` adds when the registry's address is known). ``mirrors`` names
    the JSON variant with the same connector settings, whose events an Avro variant's must equal.
    """

    name: str
    settings: Mapping[str, str] = attrs.field(factory=dict)
    decoder_options: Mapping[str, str] = attrs.field(factory=dict)
    protocol: str = "debezium"
    mirrors: str | None = None

    @property
    def schemas(self) -> bool:
        return self.protocol == AVRO_PROTOCOL or self.settings.get("value.converter.schemas.enable", "true") == "true"

    def with_registry(self, registry: ApicurioRegistry) -> Variant:
        """An Avro variant with its converters pointed at ``registry`` and its decoder reading from it."""
        if self.protocol != AVRO_PROTOCOL:
            return self
        return attrs.evolve(
            self,
            settings={**self.settings, **avro_converters(registry.registry_api_url)},
            decoder_options={**self.decoder_options, "schema-registry": registry.url},
        )

    def setting(self, key: str, default: str) -> str:
        return self.settings.get(key, default)


def converters(*, schemas: bool = True, decimal_format: str | None = None) -> dict[str, str]:
    """JsonConverter settings for one connector (Connect lets each connector override the worker's)."""
    settings = {
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": str(schemas).lower(),
        "value.converter.schemas.enable": str(schemas).lower(),
    }
    if decimal_format is not None:
        settings["key.converter.decimal.format"] = decimal_format
        settings["value.converter.decimal.format"] = decimal_format
    return settings


AVRO_PROTOCOL = "debezium-avro"
AVRO_CONVERTER = "io.apicurio.registry.utils.converter.AvroConverter"


def avro_converters(registry_api_url: str) -> dict[str, str]:
    """Apicurio's Avro converter for key and value, written as Confluent's converter writes: magic byte and 4-byte
    schema id in the record (not in headers), the id a content id, which is what the registry's Confluent API
    (``/apis/ccompat/v7``) calls a schema id; schemas registered as ``<topic>-key``/``<topic>-value``.

    Avro names allow only letters, digits and ``_``: the connector adjusts record and field names to them
    (``schema.name.adjustment.mode=avro``), as Debezium's documentation asks for with Avro.
    """
    settings = {"schema.name.adjustment.mode": "avro", "field.name.adjustment.mode": "avro"}
    for side in ("key.converter", "value.converter"):
        settings |= {
            side: AVRO_CONVERTER,
            f"{side}.apicurio.registry.url": registry_api_url,
            f"{side}.apicurio.registry.auto-register": "true",
            f"{side}.apicurio.registry.find-latest": "true",
            f"{side}.apicurio.registry.as-confluent": "true",
            f"{side}.apicurio.registry.use-id": "contentId",
            f"{side}.apicurio.registry.headers.enabled": "false",
        }
    return settings


def mariadb_connector(server: MariaDB, worker: ConnectWorker, variant: Variant, server_id: int) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "tasks.max": "1",
        "database.hostname": server.host,
        "database.port": str(server.port),
        "database.user": USER,
        "database.password": PASSWORD,
        "database.server.id": str(server_id),
        "database.ssl.mode": "disable",
        "topic.prefix": variant.name,
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(worker.scratch(f"{variant.name}-history.dat")),
        "include.schema.changes": "true",
        "skipped.operations": "none",  # TRUNCATE is skipped unless asked for
        "snapshot.mode": "initial",
        **variant.settings,
    }


def postgres_connector(server: PostgreSQL, variant: Variant) -> dict[str, str]:
    slot = variant.name.replace("-", "_")
    return {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": server.host,
        "database.port": str(server.port),
        "database.user": server.superuser,
        "database.password": "unused",  # trust authentication on loopback
        "database.dbname": "inventory",
        "topic.prefix": variant.name,
        "plugin.name": "pgoutput",
        "slot.name": slot,
        "publication.name": slot,
        "publication.autocreate.mode": "all_tables",
        "slot.drop.on.stop": "true",
        "skipped.operations": "none",
        "snapshot.mode": "initial",
        **variant.settings,
    }


# ------------------------------------------------------------------------------------------- reading topics


def topics_with_prefix(bootstrap: str, prefix: str) -> list[str]:
    from confluent_kafka.admin import AdminClient

    listed = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    return sorted(t for t in listed if t == prefix or t.startswith(prefix + "."))


def read_all(bootstrap: str, topics: Sequence[str], idle_s: float = 1.5, timeout_s: float = 60.0) -> list[Message]:
    """Every message of ``topics`` from the start, until none arrived for ``idle_s`` (in topic/offset order)."""
    from confluent_kafka import Consumer, TopicPartition

    from cdc_testing.kafka import consumer_config

    consumer = Consumer(consumer_config(bootstrap))
    received: list[Message] = []
    try:
        consumer.assign([TopicPartition(t, 0, 0) for t in topics])
        deadline = time.monotonic() + timeout_s
        last = time.monotonic()
        while time.monotonic() - last < idle_s and time.monotonic() < deadline:
            record = consumer.poll(0.2)
            if record is None:
                continue
            error = record.error()
            if error is not None:
                raise RuntimeError(f"reading {record.topic()}: {error}")
            last = time.monotonic()
            received.append(Message.from_kafka(record))
    finally:
        consumer.close()
    received.sort(key=lambda m: (m.topic or "", m.offset or 0))
    return received


def wait_for_value(bootstrap: str, topic: str, needle: bytes, timeout_s: float = 90.0) -> None:
    """Until a message of ``topic`` has ``needle`` in its value (a marker row the producer must have written)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for message in read_all(bootstrap, [topic], idle_s=0.5, timeout_s=10):
            if message.value is not None and needle in message.value:
                return
        time.sleep(0.5)
    raise TimeoutError(f"no message with {needle!r} on {topic} within {timeout_s:.0f} s")


def message_line(message: Message) -> str:
    """One ``cdc decode`` input line (docs/cli.md: the envelope form, base64 for non-UTF-8 bytes)."""
    line: dict[str, Any] = {}
    for name, data in (("value", message.value), ("key", message.key)):
        if data is None:
            line[name] = None
            continue
        try:
            line[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            line[f"{name}_b64"] = base64.b64encode(data).decode()
    line.update(topic=message.topic, partition=message.partition, offset=message.offset, timestamp=message.timestamp)
    return json.dumps(line, ensure_ascii=False)


def write_message_lines(path: Path, messages: Iterable[Message]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [message_line(m) for m in messages]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


# ------------------------------------------------------------------------------------------------ decoding


def decode_messages(decoder: Decoder, messages: Iterable[Message]) -> tuple[list[Event], list[str]]:
    """Every message through ``decoder``: the events, and one line (``topic@offset: error``) per message that
    did not decode (the rest go on, so a test reports every failure at once)."""
    events: list[Event] = []
    errors: list[str] = []
    for message in messages:
        try:
            events.extend(decoder.decode(message))
        except CdcError as exc:
            errors.append(f"{message.topic}@{message.offset}: {exc}")
    return events, errors


def decode_failures(errors: Sequence[str], total: int, limit: int = 10) -> str:
    """The errors of :func:`decode_messages` as an assertion message: how many of ``total``, the first ``limit``."""
    return f"{len(errors)} of {total} messages did not decode:\n" + "\n".join(errors[:limit])


# ------------------------------------------------------------------------------------------------ replay


def replay(events: Iterable[Event], key: str = "id") -> Iterable[tuple[str, Mapping[str, TableState]]]:
    """Fold row changes and truncates into per-table states; yields (table, all states) after each."""
    states: dict[str, TableState] = {}
    for event in events:
        if isinstance(event, RowChange):
            table = states.setdefault(event.table, {})
            if event.op is Op.DELETE:
                assert event.before is not None
                table.pop(event.before[key], None)
            else:
                assert event.after is not None
                if event.op is Op.UPDATE and event.before is not None and event.before.get(key) != event.after[key]:
                    table.pop(event.before[key], None)
                table[event.after[key]] = dict(event.after)
            yield event.table, states
        elif isinstance(event, DDLEvent) and event.ddl_type is DDLType.TRUNCATE and event.table:
            states[event.table] = {}
            yield event.table, states


Compare = Callable[[str, str, Any, Any], str | None]
# What a correct decoder returns for the database's value of a column: (table, column, value) -> decoded value.
Expected = Callable[[str, str, Any], Any]


def compare_with(expected: Expected) -> Compare:
    """The :data:`Compare` of :func:`states_in_order` that checks a decoded value against ``expected`` of the
    database's, with :func:`same`."""

    def compare(table: str, column: str, want: Any, have: Any) -> str | None:
        return same(expected(table, column, want), have)

    return compare


def unchanged_since_added(states: Sequence[TableState], added: Iterable[str]) -> set[Any]:
    """Keys of the final rows no change has touched since an ADD COLUMN (of ``added``) filled them with its
    default: the database backfills the rows, but neither pgoutput nor the binlog sends an event for it."""
    columns = set(added)
    first = next((i for i, s in enumerate(states) if any(columns & set(r) for r in s.values())), None)
    if first is None:
        return set()
    after = states[first]
    return {k for k, row in states[-1].items() if k in after and row == after[k]}


def states_in_order(
    events: Iterable[Event],
    expected: Mapping[str, Sequence[TableState]],
    compare: Compare,
    key: str = "id",
) -> dict[str, str]:
    """Replays ``events``; for each table, every expected state must be reached in order.

    ``compare(table, column, expected, actual)`` returns None when a value matches, else why not. Columns a
    replayed row lacks are not compared (a column added by DDL appears in a row's events only once the row
    changes). Returns, per table whose states were not all reached, the first mismatch against the next
    expected state (empty when every table went through every state).
    """
    reached = dict.fromkeys(expected, 0)
    closest: dict[str, str] = {}
    for table, states in replay(events, key):
        wanted = expected.get(table)
        if wanted is None:
            continue
        while reached[table] < len(wanted):
            want, have = wanted[reached[table]], states.get(table, {})
            why = _state_difference(table, want, have, compare)
            if why is not None:
                # a value mismatch at the right keys says more than the key sets of later events
                if set(want) == set(have) or not closest.get(table, "").startswith(f"state {reached[table]}: row"):
                    closest[table] = f"state {reached[table]}: {why}"
                break
            reached[table] += 1
    for table, wanted in expected.items():
        if reached[table] < len(wanted) and table not in closest:
            closest[table] = f"state {reached[table]}: no events for {table}"
    return {t: why for t, why in closest.items() if reached[t] < len(expected[t])}


def _state_difference(table: str, want: TableState, have: TableState, compare: Compare) -> str | None:
    """Why the replayed state is not the expected one: the key sets, else every differing column (by column)."""
    if set(want) != set(have):
        return f"keys {sorted(map(repr, want))} expected, replay has {sorted(map(repr, have))}"
    by_column: dict[str, str] = {}
    for key, row in want.items():
        for column, value in have[key].items():
            if column not in row:
                by_column.setdefault(column, f"row {key!r}: not in the database's row")
                continue
            why = compare(table, column, row[column], value)
            if why is not None:
                by_column.setdefault(column, f"row {key!r}: {why}")
    if not by_column:
        return None
    return "; ".join(
        f"row {why.split(':', 1)[0][4:]} column {column}:{why.split(':', 1)[1]}" for column, why in by_column.items()
    )


# --------------------------------------------------------------------------------------------- comparing


def same(expected: Any, actual: Any) -> str | None:
    """None when ``actual`` is ``expected`` as a typed value, else why not.

    Decimals must agree in value and scale, datetimes in awareness and instant, floats exactly (NaN equals
    NaN), containers element by element; bool and int are interchangeable only as 0/1 (a boolean column may
    come out as Python bool or as MySQL's tinyint).
    """
    if isinstance(expected, Decimal) and isinstance(actual, Decimal):
        if expected.is_nan() and actual.is_nan():
            return None
        if expected != actual or expected.as_tuple().exponent != actual.as_tuple().exponent:
            return f"{expected!r} != {actual!r}"
        return None
    if isinstance(expected, float) and isinstance(actual, float):
        if expected == actual or (math.isnan(expected) and math.isnan(actual)):
            return None
        return f"{expected!r} != {actual!r}"
    if isinstance(expected, dt.datetime) and isinstance(actual, dt.datetime):
        if (expected.tzinfo is None) != (actual.tzinfo is None):
            return f"{expected!r} != {actual!r} (one is zone-aware)"
        return None if expected == actual else f"{expected!r} != {actual!r}"
    if isinstance(expected, bool) or isinstance(actual, bool):
        if isinstance(actual, int | bool) and isinstance(expected, int | bool) and int(expected) == int(actual):
            return None
        return f"{expected!r} != {actual!r}"
    if type(expected) is not type(actual) and not (
        isinstance(expected, tuple | list) and isinstance(actual, tuple | list)
    ):
        return f"{expected!r} ({type(expected).__name__}) != {actual!r} ({type(actual).__name__})"
    if isinstance(expected, dict):
        if set(expected) != set(actual):
            return f"keys {sorted(expected)} != {sorted(actual)}"
        for k in expected:
            why = same(expected[k], actual[k])
            if why is not None:
                return f"[{k!r}]: {why}"
        return None
    if isinstance(expected, tuple | list):
        if len(expected) != len(actual):
            return f"{expected!r} != {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            why = same(e, a)
            if why is not None:
                return f"[{i}]: {why}"
        return None
    return None if expected == actual else f"{expected!r} != {actual!r}"


def same_stored(expected: Any, stored: Any, *, float32: bool = False) -> str | None:
    """:func:`same` for a value read back from a target table, after the documented type mapping (docs/types.md).

    Spark holds FLOAT as float32, DECIMAL wider than 38 digits and JSON as text, BIGINT UNSIGNED and BIT(64) as
    decimal(20,0), SET as an array, GEOMETRY as a ``{wkb, srid}`` struct, TIME as an interval (microseconds):
    ``expected`` (the decoded value) is brought to that form first.
    """
    from cdc_core.textual import to_float32

    if expected is None or stored is None:
        return None if expected is stored else f"{expected!r} != {stored!r}"
    if float32 and isinstance(expected, float):
        expected = to_float32(expected)
        stored = to_float32(stored) if isinstance(stored, float) else stored
    if isinstance(expected, Decimal) and isinstance(stored, str):
        stored = Decimal(stored)
    if isinstance(expected, int) and not isinstance(expected, bool) and isinstance(stored, Decimal):
        stored = int(stored) if stored == stored.to_integral_value() else stored
    if isinstance(expected, dict | list) and isinstance(stored, str):
        stored = json.loads(stored)
    if isinstance(expected, dict) and isinstance(stored, list):  # a Spark map read back as key/value pairs
        stored = dict(stored)
    if isinstance(expected, dt.timedelta) and isinstance(stored, int) and not isinstance(stored, bool):
        stored = dt.timedelta(microseconds=stored)  # interval day to second: Delta keeps its microseconds
    if isinstance(expected, Geometry) and isinstance(stored, dict):  # struct<wkb:binary,srid:int>
        stored = Geometry(wkb=bytes(stored["wkb"]), srid=stored["srid"])
    return same(expected, stored)


# MySQL/MariaDB spatial column types (information_schema DATA_TYPE).
SPATIAL_TYPES = frozenset(
    {
        "point",
        "geometry",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)


def stored_geometry(stored: bytes) -> Geometry:
    """The Geometry of a MySQL/MariaDB spatial value in its stored form (what SELECT returns): a 4-byte
    little-endian SRID, then the WKB. SRID 0 (none given) is None, as Debezium (BinlogGeometry) and Canal have it."""
    srid = int.from_bytes(stored[:4], "little")
    return Geometry(wkb=bytes(stored[4:]), srid=srid or None)


def dead_letter_lines(rows: Iterable[Mapping[str, Any]], limit: int = 10) -> str:
    """Dead-letter rows of a target (``topic, offset, error``) as one line each, for an assertion message."""
    lines = [f"{r.get('topic')}@{r.get('offset')}: {r.get('error')}" for r in rows]
    return f"{len(lines)} dead letters:\n" + "\n".join(lines[:limit])


__all__ = [
    "AVRO_CONVERTER",
    "AVRO_PROTOCOL",
    "SPATIAL_TYPES",
    "Compare",
    "Expected",
    "Row",
    "TableState",
    "Variant",
    "avro_converters",
    "compare_with",
    "converters",
    "dead_letter_lines",
    "decode_failures",
    "decode_messages",
    "mariadb_connector",
    "message_line",
    "postgres_connector",
    "read_all",
    "replay",
    "same",
    "same_stored",
    "states_in_order",
    "stored_geometry",
    "topics_with_prefix",
    "unchanged_since_added",
    "wait_for_value",
    "write_message_lines",
]
