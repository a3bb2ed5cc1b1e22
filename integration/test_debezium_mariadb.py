"""Real Debezium (MariaDB connector on Kafka Connect) against a real MariaDB: every column type, every variant.

One MariaDB, one Connect worker and one connector per variant run for the module. The workload covers every
MariaDB column type (every integer width signed and unsigned, DECIMAL up to 65 digits, FLOAT/DOUBLE, BIT(1..64),
temporal types at several fractional precisions, zero dates, strings, binaries, ENUM, SET, JSON, every spatial
type), then streams inserts, updates, a primary-key update, a delete, ADD COLUMN and MODIFY COLUMN mid-stream,
and a TRUNCATE. After each step the test SELECTs the tables; the decoded events of every variant, replayed,
must go through those states value for value (see ``expected_value`` for what each variant is documented to
lose); the Avro variants (Apicurio's converter, Confluent framing, the session's Apicurio registry) must also
decode to the same events as the JSON variant with their connector settings. ``cdc apply`` then builds tables
equal to the final SELECT.

``CDC_WRITE_CAPTURES=DIR`` also writes every variant's messages as message lines into DIR (how the captures in
packages/cdc-debezium/tests/captures/ were made).
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cdc_core.events import DDLEvent, Event, RowChange
from cdc_core.registry import get_codec
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.connect import ConnectWorker
from cdc_testing.databases import MariaDB
from cdc_testing.expectations import assert_same_changes
from cdc_testing.producers import (
    AVRO_PROTOCOL,
    SPATIAL_TYPES,
    Expected,
    TableState,
    Variant,
    compare_with,
    converters,
    decode_failures,
    decode_messages,
    mariadb_connector,
    states_in_order,
    stored_geometry,
)
from cdc_testing.targets import run_cdc_apply, target_differences
from cdc_testing.variant_runs import WorkloadRun, stream_variants

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

UTC = dt.UTC
TABLES = ("types", "orders", "zero_dates")
ADDED_COLUMNS = {"t_added"}

# ------------------------------------------------------------------------------------------------ variants

PRECISE = {"decimal.handling.mode": "precise", "binary.handling.mode": "bytes"}
NUMERIC = {
    "decimal.handling.mode": "precise",
    "time.precision.mode": "connect",
    "binary.handling.mode": "hex",
    "column.propagate.source.type": ".*",
}
HEX = {"binary.handling.mode": "hex"}  # hex text is often valid base64 too: the decoder must be told

VARIANTS = (
    Variant("mdb-precise", {**converters(), **PRECISE}),
    Variant("mdb-numeric", {**converters(decimal_format="NUMERIC"), **NUMERIC}, HEX),
    Variant(
        "mdb-string",
        {
            **converters(),
            "decimal.handling.mode": "string",
            "binary.handling.mode": "base64",
            "column.propagate.source.type": ".*",
        },
    ),
    Variant("mdb-double", {**converters(), "decimal.handling.mode": "double", "binary.handling.mode": "base64"}),
    Variant(
        "mdb-schemaless",
        {**converters(schemas=False), "decimal.handling.mode": "string", "binary.handling.mode": "base64"},
        {"decimal.handling.mode": "string", "binary.handling.mode": "base64"},
    ),
    Variant(
        "mdb-schemaless-numeric",
        {**converters(schemas=False, decimal_format="NUMERIC"), "decimal.handling.mode": "precise"},
        {"decimal.handling.mode": "precise", "binary.handling.mode": "bytes"},
    ),
    # Apicurio's Avro converter with the settings of a JSON variant: Connect Decimal as Avro decimal bytes, the
    # io.debezium.time types; then Connect's Date/Time/Timestamp (Avro's date, time-millis, timestamp-millis)
    Variant("mdb-avro", PRECISE, protocol=AVRO_PROTOCOL, mirrors="mdb-precise"),
    Variant("mdb-avro-connect", NUMERIC, HEX, protocol=AVRO_PROTOCOL, mirrors="mdb-numeric"),
)
BY_NAME = {v.name: v for v in VARIANTS}

# ------------------------------------------------------------------------------------------------ workload

CREATE = [
    """CREATE TABLE types (
        id INT NOT NULL PRIMARY KEY,
        t_tinyint TINYINT, t_tinyint_u TINYINT UNSIGNED, t_smallint SMALLINT, t_smallint_u SMALLINT UNSIGNED,
        t_mediumint MEDIUMINT, t_mediumint_u MEDIUMINT UNSIGNED, t_int INT, t_int_u INT UNSIGNED,
        t_bigint BIGINT, t_bigint_u BIGINT UNSIGNED, t_bool BOOLEAN,
        t_dec_5_2 DECIMAL(5,2), t_dec_10_0 DECIMAL(10,0), t_dec_20_10 DECIMAL(20,10), t_dec_38_4 DECIMAL(38,4),
        t_dec_65_30 DECIMAL(65,30), t_float FLOAT, t_double DOUBLE,
        t_bit1 BIT(1), t_bit8 BIT(8), t_bit64 BIT(64),
        t_date DATE, t_datetime DATETIME, t_datetime3 DATETIME(3), t_datetime4 DATETIME(4), t_datetime6 DATETIME(6),
        t_timestamp TIMESTAMP NULL, t_timestamp3 TIMESTAMP(3) NULL, t_timestamp6 TIMESTAMP(6) NULL,
        t_time TIME, t_time3 TIME(3), t_time6 TIME(6), t_year YEAR,
        t_char CHAR(10), t_varchar VARCHAR(100), t_tinytext TINYTEXT, t_text TEXT, t_mediumtext MEDIUMTEXT,
        t_longtext LONGTEXT, t_binary BINARY(4), t_varbinary VARBINARY(16), t_tinyblob TINYBLOB, t_blob BLOB,
        t_mediumblob MEDIUMBLOB, t_longblob LONGBLOB,
        t_enum ENUM('small','medium','large'), t_set SET('red','green','blue'), t_json JSON,
        t_point POINT, t_geometry GEOMETRY, t_linestring LINESTRING, t_polygon POLYGON, t_multipoint MULTIPOINT,
        t_multilinestring MULTILINESTRING, t_multipolygon MULTIPOLYGON, t_geomcollection GEOMETRYCOLLECTION
    )""",
    "CREATE TABLE orders (id SERIAL PRIMARY KEY, item VARCHAR(20) NOT NULL, qty INT NOT NULL)",
    """CREATE TABLE zero_dates (
        id INT PRIMARY KEY, d DATE, dtm DATETIME(3), d_nn DATE NOT NULL, dtm_nn DATETIME NOT NULL
    )""",
    "CREATE TABLE marks (id INT PRIMARY KEY, mark VARCHAR(40))",
]

COLUMNS = (
    "id, t_tinyint, t_tinyint_u, t_smallint, t_smallint_u, t_mediumint, t_mediumint_u, t_int, t_int_u, t_bigint,"
    " t_bigint_u, t_bool, t_dec_5_2, t_dec_10_0, t_dec_20_10, t_dec_38_4, t_dec_65_30, t_float, t_double, t_bit1,"
    " t_bit8, t_bit64, t_date, t_datetime, t_datetime3, t_datetime4, t_datetime6, t_timestamp, t_timestamp3,"
    " t_timestamp6, t_time, t_time3, t_time6, t_year, t_char, t_varchar, t_tinytext, t_text, t_mediumtext,"
    " t_longtext, t_binary, t_varbinary, t_tinyblob, t_blob, t_mediumblob, t_longblob, t_enum, t_set, t_json,"
    " t_point, t_geometry, t_linestring, t_polygon, t_multipoint, t_multilinestring, t_multipolygon,"
    " t_geomcollection"
)
SPATIAL = (
    "ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 0))'),"
    " ST_GeomFromText('LINESTRING(0 0,1 1,2 3)'), ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 1))'),"
    " ST_GeomFromText('MULTIPOINT(0 0,1 1)'), ST_GeomFromText('MULTILINESTRING((0 0,1 1),(2 2,3 3))'),"
    " ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))'),"
    " ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))')"
)
ROW_TYPICAL = (
    "{id}, -5, 200, -300, 60000, -8000000, 16000000, -2000000000, 4000000000, -9000000000000000000,"
    " 18000000000000000000, 1, 123.45, 1234567890, 1234567890.0123456789, 1234567890123456789012345678901234.5678,"
    " 12345678901234567890123456789012345.123456789012345678901234567890, 3.25, 2.718281828459045,"
    " b'1', b'10100101', b'1000000000000000000000000000000000000000000000000000000000000001',"
    " '2024-02-29', '2024-02-29 23:59:59', '2024-02-29 23:59:59.123', '2024-02-29 23:59:59.1234',"
    " '2024-02-29 23:59:59.123456', '2024-02-29 12:00:00', '2024-02-29 12:00:00.5', '2024-02-29 12:00:00.654321',"
    " '12:34:56', '-01:02:03.456', '100:00:00.000001', 2024, 'abc', 'héllo wörld 😀', 'tiny', 'text <&>',"
    " 'medium\\ntext', 'long\\ttext', x'00FF0102', x'DEADBEEF00', x'01', x'0203', x'', x'FF', 'medium', 'red,blue',"
    ' \'{{"a": [1, 2.5, "x"], "b": null, "c": {{"d": true}}}}\', ' + SPATIAL
)
ROW_EXTREME = (
    "{id}, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,"
    " 18446744073709551615, 0, -999.99, -9999999999, -9999999999.9999999999, -9999999999999999999999999999999999.9999,"
    " -99999999999999999999999999999999999.999999999999999999999999999999, 9.9, -1.7976931348623157e308,"
    " b'0', b'11111111', b'1111111111111111111111111111111111111111111111111111111111111111',"
    " '1000-01-01', '9999-12-31 23:59:59', '1000-01-01 00:00:00.001', '9999-12-31 23:59:59.9999',"
    " '9999-12-31 23:59:59.999999', '1970-01-01 00:00:01', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999',"
    " '-838:59:59', '838:59:59.000', '-838:59:59.000000', 1901, '', '', '', '', '', '', x'00000000', x'', x'', x'',"
    " x'', x'', 'small', '', '[]', " + SPATIAL
)
NULLS = "{id}" + ", NULL" * 56


def _insert(*rows: str) -> str:
    return f"INSERT INTO types ({COLUMNS}) VALUES " + ", ".join(f"({r})" for r in rows)


SNAPSHOT_ROWS = [
    _insert(NULLS.format(id=1), ROW_TYPICAL.format(id=2), ROW_EXTREME.format(id=3), ROW_TYPICAL.format(id=4)),
    "INSERT INTO orders (item, qty) VALUES ('pen', 1), ('ink', 2)",
    "SET SESSION sql_mode = ''",  # zero dates are legal data under a permissive sql_mode
    "INSERT INTO zero_dates VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00', '0000-00-00 00:00:00'),"
    " (2, '2024-00-15', '2024-01-00 10:00:00', '2024-00-00', '2024-01-00 00:00:00'),"
    " (3, '2024-05-06', '2024-05-06 07:08:09.010', '2024-05-06', '2024-05-06 07:08:09')",
    "SET SESSION sql_mode = DEFAULT",
]
STEPS = [
    [_insert(ROW_EXTREME.format(id=5), ROW_TYPICAL.format(id=6))],
    [
        "UPDATE types SET t_tinyint = 7, t_dec_5_2 = 0.5, t_dec_65_30 = 0.000000000000000000000000000001,"
        " t_float = 0.125, t_varchar = 'updated', t_set = 'red,green,blue', t_json = '{\"n\": 12345678901234567890}',"
        " t_time6 = '-00:00:00.000001', t_point = ST_GeomFromText('POINT(-1.5 2.25)'), t_bit64 = NULL WHERE id = 2"
    ],
    ["UPDATE types SET id = 30 WHERE id = 3"],
    ["DELETE FROM types WHERE id = 4"],
    ["ALTER TABLE types ADD COLUMN t_added VARCHAR(20) DEFAULT 'fresh'"],
    ["ALTER TABLE types MODIFY COLUMN t_int BIGINT"],
    [_insert(ROW_TYPICAL.format(id=7)), "UPDATE types SET t_int = 9000000000, t_added = 'new' WHERE id = 7"],
    ["UPDATE types SET t_added = 'touched', t_varchar = 'after ddl' WHERE id IN (2, 5)"],
    ["INSERT INTO orders (item, qty) VALUES ('cap', 3)"],
    ["TRUNCATE TABLE orders"],
    ["INSERT INTO orders (item, qty) VALUES ('nib', 4)", "DELETE FROM zero_dates WHERE id = 2"],
]


def _select(cursor: Any, table: str) -> TableState:
    cursor.execute(f"SELECT * FROM {table} ORDER BY id")
    names = [d[0] for d in cursor.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def _columns(cursor: Any) -> dict[tuple[str, str], dict[str, Any]]:
    cursor.execute(
        "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, NUMERIC_SCALE, DATETIME_PRECISION, IS_NULLABLE"
        " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'inventory'"
    )
    names = [d[0].lower() for d in cursor.description]
    return {(r[0], r[1]): dict(zip(names, r, strict=True)) for r in cursor.fetchall()}


@pytest.fixture(scope="module")
def run(
    mariadb: MariaDB, connect_worker: ConnectWorker, kafka_bootstrap: str, apicurio_registry: ApicurioRegistry
) -> Iterator[WorkloadRun]:
    result = WorkloadRun(TABLES, kafka_bootstrap, apicurio_registry)
    connectors = {
        v.name: mariadb_connector(mariadb, connect_worker, v.with_registry(apicurio_registry), 5400 + i)
        for i, v in enumerate(VARIANTS)
    }
    with mariadb.connect() as connection, connection.cursor() as cursor:
        for statement in CREATE + SNAPSHOT_ROWS:
            cursor.execute(statement)
        stream_variants(
            result,
            connect_worker,
            connectors,
            STEPS,
            execute=cursor.execute,
            record=lambda: result.record(lambda table: _select(cursor, table)),
            schema="inventory",
        )
        result.columns = _columns(cursor)
    yield result


# --------------------------------------------------------------------------------------- decoding and values


def _table_schema_file(run: WorkloadRun, folder: Path) -> str:
    """The canonical table schemas a schemaless stream is decoded with (the tables as they are at the end)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for (table, column), info in run.columns.items():
        if table in TABLES:
            tables.setdefault(table, []).append(
                {"name": column, "data_type": _type_document(info), "nullable": info["is_nullable"] == "YES"}
            )
    documents = [
        {
            "database": "inventory",
            "table": table,
            "columns": columns,
            "indexes": [{"name": "PRIMARY", "columns": ["id"], "unique": True, "primary": True}],
        }
        for table, columns in tables.items()
    ]
    path = folder / "schemas.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return str(path)


def _type_document(info: Mapping[str, Any]) -> dict[str, Any]:
    from cdc_core.canonical import schema_converter
    from cdc_core.types import parse_type_text

    document: dict[str, Any] = schema_converter.unstructure(parse_type_text(info["column_type"]))
    return document


def decoder_for(variant: Variant, run: WorkloadRun, folder: Path) -> Any:
    assert run.registry is not None
    options = dict(variant.with_registry(run.registry).decoder_options)
    if not variant.schemas:
        options["table-schema"] = _table_schema_file(run, folder)
    return get_codec(variant.protocol).decoder(options)


def decode_all(variant: Variant, run: WorkloadRun) -> tuple[list[Event], list[str]]:
    """Every message of the variant decoded: (events, errors)."""
    with tempfile.TemporaryDirectory() as folder:
        return decode_messages(decoder_for(variant, run, Path(folder)), run.messages[variant.name])


def expected_value(variant: Variant, info: Mapping[str, Any], value: Any) -> Any:
    """What a correct decoder returns for the database's ``value`` of a column, given what the variant loses.

    Losses Debezium documents, asserted rather than skipped:
    - ``decimal.handling.mode=double``: DECIMAL becomes the nearest float64.
    - ``decimal.handling.mode=string`` without ``column.propagate.source.type``: DECIMAL is text.
    - ``binary.handling.mode`` base64/hex without the source type: binary columns are text in that encoding.
    - ``bigint.unsigned.handling.mode=long`` (the default) without the source type: BIGINT UNSIGNED above 2^63-1
      arrives as its two's complement.
    - ``time.precision.mode=connect``: DATETIME/TIME keep milliseconds only; a TIME outside 00:00-24:00
      (negative, over 24 h) is written as null.
    - zero dates (``0000-00-00``, ``2024-00-15``): the connector writes null in a nullable column and the epoch
      in a NOT NULL one (the binlog reader cannot represent them).
    """
    if value is None:
        return None
    kind = info["data_type"]
    column_type = info["column_type"]
    propagated = bool(variant.settings.get("column.propagate.source.type")) or not variant.schemas
    connect_time = variant.setting("time.precision.mode", "adaptive_time_microseconds") == "connect"
    if kind in ("tinyint", "smallint", "mediumint", "int", "bigint", "year"):
        if kind == "bigint" and "unsigned" in column_type and value >= 2**63 and not propagated:
            return value - 2**64
        return int(value)
    if kind == "decimal":
        mode = variant.setting("decimal.handling.mode", "precise")
        if mode == "double":
            return float(value)
        if mode == "string" and not propagated:
            return format(value, "f")
        return value
    if kind in ("float", "double"):
        return float(value)
    if kind == "bit":
        return int.from_bytes(value, "big")
    if kind in ("date", "datetime"):
        if isinstance(value, str):  # PyMySQL hands back what it cannot parse: MySQL's zero dates
            if info["is_nullable"] == "YES":
                return None
            return dt.date(1970, 1, 1) if kind == "date" else dt.datetime(1970, 1, 1)
        if kind == "datetime" and connect_time:
            return value.replace(microsecond=value.microsecond // 1000 * 1000)
        return value
    if kind == "timestamp":
        return value.replace(tzinfo=UTC)
    if kind == "time":
        if connect_time:
            if not dt.timedelta(0) <= value < dt.timedelta(days=1):
                return None  # Connect's Time is a time of day: the connector writes null for other durations
            return dt.timedelta(milliseconds=value // dt.timedelta(milliseconds=1))
        return value
    if kind == "set":
        members = [m.strip("'") for m in column_type[4:-1].split(",")]
        chosen = set(value) if isinstance(value, set) else set(value.split(",")) - {""}
        return tuple(m for m in members if m in chosen)
    if kind in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"):
        mode = variant.setting("binary.handling.mode", "bytes")
        if mode == "bytes" or propagated:
            return bytes(value)
        if mode == "hex":
            return bytes(value).hex()
        import base64

        return base64.b64encode(bytes(value)).decode()
    if kind in SPATIAL_TYPES:
        return stored_geometry(bytes(value))
    if isinstance(value, bytes):
        return value.decode()
    return value


def expected_for(variant: Variant, run: WorkloadRun) -> Expected:
    return lambda table, column, value: expected_value(variant, run.columns[(table, column)], value)


# ------------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_message_decodes(run: WorkloadRun, variant: Variant) -> None:
    events, errors = decode_all(variant, run)
    assert run.messages[variant.name], "the connector wrote nothing"
    assert not errors, decode_failures(errors, len(run.messages[variant.name]))
    assert any(isinstance(e, DDLEvent) and e.ddl_type.value == "TRUNCATE" for e in events)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_decoded_rows_equal_the_database(run: WorkloadRun, variant: Variant) -> None:
    """Replaying the decoded events goes through every state the database SELECTed, value for value."""
    events, _ = decode_all(variant, run)
    missed = states_in_order(events, run.states, compare_with(expected_for(variant, run)))
    assert not missed, "\n".join(f"{table}: {why}" for table, why in missed.items())


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.mirrors], ids=lambda v: v.name)
def test_avro_events_equal_the_json_variants(run: WorkloadRun, variant: Variant) -> None:
    """The Avro converter's messages decode to the same events as the JsonConverter's with the same settings:
    every row, key, DDL, truncate and tombstone, value for value (canonical JSON, less who wrote them when)."""
    assert variant.mirrors is not None
    avro, _ = decode_all(variant, run)
    json_form, _ = decode_all(BY_NAME[variant.mirrors], run)
    assert [m.value is None for m in run.messages[variant.name]] == [
        m.value is None for m in run.messages[variant.mirrors]
    ]
    assert_same_changes(avro, json_form, propagated_types=bool(variant.settings.get("column.propagate.source.type")))


def test_schema_changes_are_ddl_events(run: WorkloadRun) -> None:
    events, _ = decode_all(VARIANTS[0], run)  # undecodable messages fail test_every_message_decodes
    sql = [e.sql or "" for e in events if isinstance(e, DDLEvent)]
    assert any("ADD COLUMN t_added" in s for s in sql), sql
    assert any("MODIFY COLUMN t_int BIGINT" in s for s in sql), sql


def test_primary_key_update_is_delete_then_insert(run: WorkloadRun) -> None:
    events, _ = decode_all(VARIANTS[0], run)
    rows = [e for e in events if isinstance(e, RowChange) and e.table == "types"]
    moved = [
        (e.op.value, e.image.get("id")) for e in rows if e.image.get("id") in (3, 30) and "snapshot_read" not in e.meta
    ]
    assert moved == [("delete", 3), ("insert", 30)]


# ------------------------------------------------------------------------------------------------ cdc apply


@pytest.mark.parametrize("variant", [BY_NAME["mdb-precise"], BY_NAME["mdb-avro"]], ids=lambda v: v.name)
def test_cdc_apply_builds_the_database_tables(run: WorkloadRun, variant: Variant, tmp_path: Path) -> None:
    """``cdc apply`` of the JSON and the Avro converter's topics (``--protocol debezium-avro`` with the registry)."""
    assert run.registry is not None
    target = tmp_path / "tables"
    topics = [f"{variant.name}.inventory.{t}" for t in TABLES]
    options = variant.with_registry(run.registry).decoder_options
    done = run_cdc_apply(variant.protocol, run.bootstrap, topics, target, options=options)
    assert done.returncode == 0, done.stderr[-4000:]
    differences = target_differences(
        target,
        "inventory",
        run.states,
        expected_for(variant, run),
        float32=lambda table, column: run.columns[(table, column)]["data_type"] == "float",
        added=ADDED_COLUMNS,
    )
    assert differences is None, differences
