"""Real Debezium (PostgreSQL connector, pgoutput) against a real PostgreSQL: every column type, every variant.

One PostgreSQL, one Connect worker and one connector (own slot and publication) per variant run for the module.
The workload covers PostgreSQL's column types (integers, numeric with and without scale, real/double, boolean,
text types, bytea, date/time/timetz/timestamp/timestamptz, interval, uuid, json/jsonb, xml, arrays, hstore,
ltree, money, inet/cidr/macaddr, bit strings, an enum, the geometric point), then streams inserts, updates, a
primary-key update, deletes (``types`` has REPLICA IDENTITY FULL, ``plain`` the default, whose update events
have ``before: null`` and whose deletes carry only the key), ADD COLUMN and ALTER COLUMN TYPE, a TRUNCATE
and a logical-decoding message (``pg_logical_emit_message``). After each step the test SELECTs the tables; the
decoded events of every variant, replayed, must go through those states value for value (see
``expected_value`` for what each variant is documented to lose); the Avro variants (Apicurio's converter,
Confluent framing, the session's Apicurio registry) must also decode to the same events as the JSON variant with
their connector settings. ``cdc apply`` then builds tables equal to the final SELECT.

``CDC_WRITE_CAPTURES=DIR`` also writes every variant's messages as message lines into DIR (and the Avro
variants' writer schemas, see ``cdc_testing.variant_runs``).
"""

from __future__ import annotations

import base64
import datetime as dt
import struct
from collections.abc import Iterator, Mapping
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core.events import DDLEvent, Event, Op, RowChange
from cdc_core.registry import get_codec
from cdc_core.values import Geometry
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.connect import ConnectWorker
from cdc_testing.databases import PostgreSQL
from cdc_testing.expectations import assert_same_changes
from cdc_testing.producers import (
    AVRO_PROTOCOL,
    Expected,
    TableState,
    Variant,
    compare_with,
    converters,
    decode_failures,
    decode_messages,
    postgres_connector,
    states_in_order,
)
from cdc_testing.targets import run_cdc_apply, target_differences
from cdc_testing.variant_runs import WorkloadRun, stream_variants

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

UTC = dt.UTC
TABLES = ("types", "plain", "orders")
MONTH_US = 2_629_800_000_000  # Debezium's MicroDuration month: 365.25 / 12 days

PRECISE = {"decimal.handling.mode": "precise", "binary.handling.mode": "bytes"}
NUMERIC = {
    "decimal.handling.mode": "precise",
    "time.precision.mode": "connect",
    "binary.handling.mode": "hex",
    "hstore.handling.mode": "map",
    "column.propagate.source.type": ".*",
}
HEX = {"binary.handling.mode": "hex"}  # bytea and logical message content are hex text

VARIANTS = (
    Variant("pg-precise", {**converters(), **PRECISE}),
    Variant("pg-numeric", {**converters(decimal_format="NUMERIC"), **NUMERIC}, HEX),
    Variant(
        "pg-string",
        {
            **converters(),
            "decimal.handling.mode": "string",
            "time.precision.mode": "adaptive_time_microseconds",
            "binary.handling.mode": "base64",
            "interval.handling.mode": "string",
            "column.propagate.source.type": ".*",
        },
    ),
    Variant("pg-double", {**converters(), "decimal.handling.mode": "double", "binary.handling.mode": "base64"}),
    Variant(
        "pg-schemaless",
        {**converters(schemas=False), "decimal.handling.mode": "string", "binary.handling.mode": "base64"},
        {"decimal.handling.mode": "string", "binary.handling.mode": "base64"},
    ),
    # Apicurio's Avro converter with the settings of a JSON variant: VariableScaleDecimal and Decimal as bytes,
    # arrays, Point; then Connect's Date/Time/Timestamp (Avro logical types) and hstore as an Avro map
    Variant("pg-avro", PRECISE, protocol=AVRO_PROTOCOL, mirrors="pg-precise"),
    Variant("pg-avro-connect", NUMERIC, HEX, protocol=AVRO_PROTOCOL, mirrors="pg-numeric"),
)
BY_NAME = {v.name: v for v in VARIANTS}

CREATE = [
    "CREATE EXTENSION IF NOT EXISTS hstore",
    "CREATE EXTENSION IF NOT EXISTS ltree",
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    """CREATE TABLE types (
        id integer PRIMARY KEY,
        t_smallint smallint, t_int integer, t_bigint bigint,
        t_numeric_10_2 numeric(10,2), t_numeric_38_0 numeric(38,0), t_numeric_50_20 numeric(50,20), t_numeric numeric,
        t_real real, t_double double precision, t_bool boolean,
        t_text text, t_varchar varchar(50), t_char char(5), t_bytea bytea,
        t_date date, t_time time, t_time3 time(3), t_timetz timetz,
        t_timestamp timestamp, t_timestamp3 timestamp(3), t_timestamptz timestamptz, t_interval interval,
        t_uuid uuid, t_json json, t_jsonb jsonb, t_xml xml,
        t_int_array integer[], t_text_array text[], t_hstore hstore, t_ltree ltree, t_money money,
        t_inet inet, t_cidr cidr, t_macaddr macaddr, t_bit1 bit(1), t_bit12 bit(12), t_mood mood, t_point point
    )""",
    "ALTER TABLE types REPLICA IDENTITY FULL",
    "CREATE TABLE plain (id integer PRIMARY KEY, name text NOT NULL, qty integer)",
    "CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL)",
    "CREATE TABLE marks (id integer PRIMARY KEY, mark text)",
]
ROW_TYPICAL = (
    "{id}, -300, -2000000000, -9000000000000000000, 12345678.91, 12345678901234567890123456789012345678,"
    " 123456789012345678901234567890.12345678901234567890, 3.14159265358979323846264338327950288,"
    " 3.25, 2.718281828459045, true, 'héllo 😀 <&>', 'varchar', 'ab', '\\x00ff0102'::bytea,"
    " '2024-02-29', '23:59:59.123456', '12:00:00.5', '10:15:30.25+02', '2024-02-29 23:59:59.654321',"
    " '2024-02-29 23:59:59.123', '2024-02-29 12:00:00.654321+05:30', '1 year 2 mons 3 days 04:05:06.5',"
    ' \'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\', \'{{"a": [1, 2.5], "b": null}}\', \'{{"k": {{"n": 1}}}}\','
    " '<a><b>x</b></a>', '{{1,2,NULL,4}}', '{{\"x\",\"y z\",\"\"}}', 'a=>1, b=>NULL, \"c d\"=>\"e\"', 'top.mid.leaf',"
    " 1234.56, '192.168.0.1/24', '10.0.0.0/8', '08:00:2b:01:02:03', B'1', B'101010101010', 'happy', '(1.5,-2)'"
)
ROW_EXTREME = (
    "{id}, -32768, 2147483647, -9223372036854775808, -99999999.99, -99999999999999999999999999999999999999,"
    " 0.00000000000000000001, 0.000001, 9.9, -1.7976931348623157e308, false, '', '', '', ''::bytea,"
    " '0001-01-01', '00:00:00', '23:59:59.999', '00:00:00-12', '1583-01-01 00:00:00', '9999-12-31 23:59:59.999',"
    " '1970-01-01 00:00:00+00', '-1000 years -11 mons', '00000000-0000-0000-0000-000000000000', '[]', 'null',"
    " '<e/>', '{{}}', '{{}}', '', '', -99999999999.99, '::1', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff',"
    " B'0', B'000000000001', 'sad', '(0,0)'"
)
NULLS = "{id}" + ", NULL" * 38
COLUMN_COUNT = 39

SNAPSHOT_ROWS = [
    f"INSERT INTO types VALUES ({NULLS.format(id=1)}), ({ROW_TYPICAL.format(id=2)}), ({ROW_EXTREME.format(id=3)}),"
    f" ({ROW_TYPICAL.format(id=4)})",
    "INSERT INTO plain VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)",
    "INSERT INTO orders (item) VALUES ('pen'), ('ink')",
]
STEPS = [
    [f"INSERT INTO types VALUES ({ROW_EXTREME.format(id=5)}), ({ROW_TYPICAL.format(id=6)})"],
    [
        "UPDATE types SET t_smallint = 7, t_numeric_10_2 = 0.5, t_numeric = 'NaN', t_real = 0.125,"
        " t_varchar = 'updated', t_int_array = '{7}', t_hstore = '', t_interval = '-1 day -00:00:00.000001',"
        " t_jsonb = '{\"n\": 12345678901234567890}', t_bit12 = NULL WHERE id = 2"
    ],
    ["UPDATE types SET id = 30 WHERE id = 3"],
    ["DELETE FROM types WHERE id = 4"],
    ["UPDATE plain SET qty = 20 WHERE id = 2", "DELETE FROM plain WHERE id = 3"],
    ["UPDATE plain SET id = 10 WHERE id = 1"],
    ["ALTER TABLE types ADD COLUMN t_added varchar(20) DEFAULT 'fresh'"],
    ["ALTER TABLE types ALTER COLUMN t_int TYPE bigint"],
    [
        f"INSERT INTO types VALUES ({ROW_TYPICAL.format(id=7)}, 'new')",
        "UPDATE types SET t_int = 9000000000 WHERE id = 7",
    ],
    ["UPDATE types SET t_added = 'touched', t_varchar = 'after ddl' WHERE id IN (2, 5)"],
    ["SELECT pg_logical_emit_message(true, 'cdc-test', 'transactional message')"],
    ["SELECT pg_logical_emit_message(false, 'cdc-test', '\\x00ff'::bytea)"],
    ["INSERT INTO orders (item) VALUES ('cap')"],
    ["TRUNCATE TABLE orders"],
    ["INSERT INTO orders (item) VALUES ('nib')"],
]
ADDED = {"t_added"}

# How the test SELECTs a column type when the driver's own form is not the database's text (psycopg returns
# money as locale text, network types as ipaddress objects, bit strings as text, interval as a timedelta that
# folds months into 30 days): the database's own casts and parts instead.
_SELECT_AS = {
    "money": "{c}::numeric",
    "inet": "CASE WHEN {c} IS NOT NULL THEN format('%s', {c}) END",  # format() makes NULL ''
    "cidr": "CASE WHEN {c} IS NOT NULL THEN format('%s', {c}) END",
    "macaddr": "CASE WHEN {c} IS NOT NULL THEN format('%s', {c}) END",
    "ltree": "{c}::text",
    "xml": "{c}::text",
    "point": "CASE WHEN {c} IS NOT NULL THEN ARRAY[{c}[0], {c}[1]] END",
    "bit": "{c}::text",
    "interval": "CASE WHEN {c} IS NOT NULL THEN ARRAY[extract(year from {c}) * 12 + extract(month from {c}),"
    " extract(day from {c}), (extract(hour from {c}) * 3600 + extract(minute from {c}) * 60) * 1000000"
    " + extract(microseconds from {c})] END",
}


def _columns(connection: Any) -> dict[tuple[str, str], dict[str, Any]]:
    rows = connection.execute(
        "SELECT c.relname, a.attname, t.typname, format_type(a.atttypid, a.atttypmod), a.attnotnull,"
        " information_schema._pg_numeric_scale(a.atttypid, a.atttypmod),"
        " information_schema._pg_datetime_precision(a.atttypid, a.atttypmod)"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_type t ON t.oid = a.atttypid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind = 'r'"
        " ORDER BY c.relname, a.attnum"
    ).fetchall()
    return {
        (r[0], r[1]): {"typname": r[2], "type": r[3], "notnull": r[4], "scale": r[5], "precision": r[6]} for r in rows
    }


def _select(connection: Any, table: str, columns: Mapping[tuple[str, str], Mapping[str, Any]]) -> TableState:
    names = [c for (t, c) in columns if t == table]
    exprs = []
    for name in names:
        typname = columns[(table, name)]["typname"]
        exprs.append(_SELECT_AS.get(typname, "{c}").format(c=f'"{name}"'))
    rows = connection.execute(f"SELECT {', '.join(exprs)} FROM {table} ORDER BY id").fetchall()
    return {row[0]: dict(zip(names, row, strict=True)) for row in rows}


@pytest.fixture(scope="module")
def run(
    postgres: PostgreSQL, connect_worker: ConnectWorker, kafka_bootstrap: str, apicurio_registry: ApicurioRegistry
) -> Iterator[WorkloadRun]:
    from psycopg.types import TypeInfo
    from psycopg.types.hstore import register_hstore

    result = WorkloadRun(TABLES, kafka_bootstrap, apicurio_registry)
    with postgres.connect() as connection:

        def record() -> None:
            result.columns = _columns(connection)
            result.record(lambda table: _select(connection, table, result.columns))

        for statement in CREATE:
            connection.execute(statement)
        register_hstore(TypeInfo.fetch(connection, "hstore"), connection)
        for statement in SNAPSHOT_ROWS:
            connection.execute(statement)
        stream_variants(
            result,
            connect_worker,
            {v.name: postgres_connector(postgres, v.with_registry(apicurio_registry)) for v in VARIANTS},
            STEPS,
            execute=connection.execute,
            record=record,
            schema="public",
        )
    yield result


def decode_all(variant: Variant, run: WorkloadRun) -> tuple[list[Event], list[str]]:
    assert run.registry is not None
    decoder = get_codec(variant.protocol).decoder(dict(variant.with_registry(run.registry).decoder_options))
    return decode_messages(decoder, run.messages[variant.name])


def _as_timedelta(value: dt.time) -> dt.timedelta:
    return dt.timedelta(hours=value.hour, minutes=value.minute, seconds=value.second, microseconds=value.microsecond)


def expected_value(variant: Variant, info: Mapping[str, Any], value: Any) -> Any:
    """What a correct decoder returns for the database's ``value``, given what the variant is documented to lose.

    - ``decimal.handling.mode=double``: numeric and money become the nearest float64 (NaN stays NaN).
    - ``decimal.handling.mode=string`` without the source type (``column.propagate.source.type``): text.
    - ``decimal.handling.mode=precise``: numeric NaN has no Connect Decimal form and is written as null; in
      string mode it is the text ``NAN``, in double mode a float NaN.
    - ``binary.handling.mode`` base64/hex without the source type: bytea is text in that encoding.
    - ``time.precision.mode=connect``: time and timestamp keep milliseconds only.
    - interval as ``MicroDuration`` (the default): months count 365.25/12 days; ``interval.handling.mode=string``
      gives ISO 8601 text.
    - timetz: Debezium normalises to UTC (``ZonedTime``), so the offset is lost but the instant kept: the
      decoded value is a TIME (a timedelta, as every TIME value) holding the UTC time of day.
    - money goes through a double in every mode (precise, string, double): beyond 15 significant digits it is
      not the database's value (the workload stays within them).
    """
    if value is None:
        return None
    kind = info["typname"]
    propagated = bool(variant.settings.get("column.propagate.source.type"))
    mode = variant.setting("decimal.handling.mode", "precise")
    connect_time = variant.setting("time.precision.mode", "adaptive") == "connect"
    if kind in ("int2", "int4", "int8"):
        return int(value)
    if kind in ("numeric", "money"):
        if mode == "double":
            return float(value)
        if value.is_nan():
            if mode == "precise":
                return None
            return value if propagated else "NAN"
        if mode == "string" and not propagated:
            return format(value, "f")
        return value
    if kind in ("float4", "float8"):
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "bytea":
        binary = variant.setting("binary.handling.mode", "bytes")
        if binary == "bytes" or propagated:
            return bytes(value)
        if binary == "hex":
            return bytes(value).hex()
        return base64.b64encode(bytes(value)).decode()
    if kind == "time":
        span = _as_timedelta(value)
        if connect_time:
            return dt.timedelta(milliseconds=span // dt.timedelta(milliseconds=1))
        return span
    if kind == "timetz":
        offset = value.utcoffset() or dt.timedelta(0)
        moment = dt.datetime.combine(dt.date(2000, 1, 1), value.replace(tzinfo=None)) - offset
        return _as_timedelta(moment.time())
    if kind == "timestamp":
        if connect_time:
            return value.replace(microsecond=value.microsecond // 1000 * 1000)
        return value
    if kind == "timestamptz":
        return value.astimezone(UTC)
    if kind == "interval":
        months, days, micros = (int(v) for v in value)
        if variant.setting("interval.handling.mode", "numeric") == "string":
            return _iso_interval(months, days, micros)
        return dt.timedelta(microseconds=months * MONTH_US + days * 86_400_000_000 + micros)
    if kind == "uuid":
        return str(value)
    if kind == "point":
        # io.debezium.data.geometry.Point: x, y and their WKB (little-endian POINT); PostgreSQL's point has no SRID
        return Geometry(wkb=struct.pack("<BIdd", 1, 1, float(value[0]), float(value[1])), srid=None)
    if kind == "bit":
        return value == "1" if len(value) == 1 else int(value, 2)
    if kind == "hstore":
        return dict(value)
    return value


def _iso_interval(months: int, days: int, micros: int) -> str:
    """Debezium's ``Interval`` text: every component present, each with its own sign."""
    sign = -1 if months < 0 else 1
    years, months = divmod(abs(months), 12)
    time_sign = -1 if micros < 0 else 1
    hours, rest = divmod(abs(micros), 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds = format((time_sign * Decimal(rest)).scaleb(-6).normalize(), "f")
    return f"P{sign * years}Y{sign * months}M{days}DT{time_sign * hours}H{time_sign * minutes}M{seconds}S"


def expected_for(variant: Variant, run: WorkloadRun) -> Expected:
    return lambda table, column, value: expected_value(variant, run.columns[(table, column)], value)


# ------------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_message_decodes(run: WorkloadRun, variant: Variant) -> None:
    events, errors = decode_all(variant, run)
    assert run.messages[variant.name], "the connector wrote nothing"
    assert not errors, decode_failures(errors, len(run.messages[variant.name]))
    assert any(isinstance(e, DDLEvent) and e.ddl_type.value == "TRUNCATE" for e in events)


# Schemaless PostgreSQL output can only be typed by a user table schema, and the column type system (MySQL's)
# has no uuid, interval, hstore, array... types to write one with: value equality is checked where the field
# schemas type the values.
@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.schemas], ids=lambda v: v.name)
def test_decoded_rows_equal_the_database(run: WorkloadRun, variant: Variant) -> None:
    events, _ = decode_all(variant, run)
    missed = states_in_order(events, run.states, compare_with(expected_for(variant, run)))
    assert not missed, "\n".join(f"{table}: {why}" for table, why in missed.items())


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.mirrors], ids=lambda v: v.name)
def test_avro_events_equal_the_json_variants(run: WorkloadRun, variant: Variant) -> None:
    """The Avro converter's messages decode to the same events as the JsonConverter's with the same settings:
    every row, key, truncate and logical-decoding message, value for value (canonical JSON, less who wrote them
    when)."""
    assert variant.mirrors is not None
    avro, _ = decode_all(variant, run)
    json_form, _ = decode_all(BY_NAME[variant.mirrors], run)
    assert_same_changes(avro, json_form, propagated_types=bool(variant.settings.get("column.propagate.source.type")))


def test_default_replica_identity_delete_is_keyed(run: WorkloadRun) -> None:
    """``plain`` keeps PostgreSQL's default replica identity: the delete's row is the key alone."""
    events, _ = decode_all(VARIANTS[0], run)  # undecodable messages fail test_every_message_decodes
    deletes = [e for e in events if isinstance(e, RowChange) and e.table == "plain" and e.op is Op.DELETE]
    assert [d.image.get("id") for d in deletes] == [3, 1]
    updates = [e for e in events if isinstance(e, RowChange) and e.table == "plain" and e.op is Op.UPDATE]
    assert updates and all(u.before is None for u in updates)


def test_logical_messages_do_not_stop_the_stream(run: WorkloadRun) -> None:
    """``pg_logical_emit_message`` writes op "m" to <prefix>.message: decoded without error, and no row change."""
    variant = VARIANTS[0]
    messages = [m for m in run.messages[variant.name] if m.topic == f"{variant.name}.message"]
    assert len(messages) == 2
    decoder = get_codec("debezium").decoder({})
    for message in messages:
        assert not [e for e in decoder.decode(message) if isinstance(e, RowChange)]


# ------------------------------------------------------------------------------------------------ cdc apply


def stored_form(info: Mapping[str, Any], value: Any) -> Any:
    """A NUMERIC without declared scale and MONEY (no precision) are ``decimal(38,10)`` on Spark (docs/types.md)."""
    if isinstance(value, Decimal) and value.is_finite() and (info["typname"] == "money" or info["scale"] is None):
        return value.quantize(Decimal(1).scaleb(-10), rounding=ROUND_HALF_UP)
    return value


@pytest.mark.parametrize("variant", [BY_NAME["pg-precise"], BY_NAME["pg-avro"]], ids=lambda v: v.name)
def test_cdc_apply_builds_the_database_tables(run: WorkloadRun, variant: Variant, tmp_path: Path) -> None:
    """``cdc apply`` of the JSON and the Avro converter's topics (``--protocol debezium-avro`` with the registry)."""
    assert run.registry is not None
    topics = [f"{variant.name}.public.{t}" for t in TABLES] + [f"{variant.name}.message"]
    target = tmp_path / "tables"
    options = variant.with_registry(run.registry).decoder_options
    done = run_cdc_apply(variant.protocol, run.bootstrap, topics, target, options=options)
    assert done.returncode == 0, done.stderr[-4000:]
    expected = expected_for(variant, run)
    differences = target_differences(
        target,
        "public",  # the schema holds a PostgreSQL table, as MySQL's database does (database inventory: the catalog)
        run.states,
        lambda table, column, value: stored_form(run.columns[(table, column)], expected(table, column, value)),
        float32=lambda table, column: run.columns[(table, column)]["typname"] == "float4",
        added=ADDED,
    )
    assert differences is None, differences
