"""Real Alibaba Canal (server 1.1.4, flat messages to Kafka) against a real MariaDB: decode and compare.

Canal reads MariaDB's binlog and writes Canal-JSON flat messages (``canal.mq.flatMessage=true``) to the real
broker. The workload is DML only (Canal 1.1.4 stops at MariaDB 10.8+'s DDL query events, see
:mod:`cdc_testing.canal`) over a table with every MariaDB column type, including the shapes official Canal is
known for: multi-row messages, SERIAL, spatial values as ISO-8859-1 text, FLOAT as written, DECIMAL at its
scale, partial ``old`` images, and MariaDB's annotate events as ``QUERY`` messages. After each step the test
SELECTs the table; the decoded events, replayed, must pass through those states value for value.

``CDC_WRITE_CAPTURES=DIR`` also writes the messages as message lines into DIR (the captures in
packages/cdc-canal/tests/captures/).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cdc_core.events import Event
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_testing.canal import running_canal
from cdc_testing.databases import PASSWORD, USER, MariaDB
from cdc_testing.producers import (
    SPATIAL_TYPES,
    TableState,
    compare_with,
    decode_failures,
    decode_messages,
    read_all,
    states_in_order,
    stored_geometry,
    wait_for_value,
    write_message_lines,
)

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

TOPIC = "canal-shop"
TABLES = ("types",)
SETUP = [
    "CREATE DATABASE shop",
    """CREATE TABLE shop.types (
        id INT NOT NULL PRIMARY KEY, t_serial SERIAL,
        t_tinyint TINYINT, t_tinyint_u TINYINT UNSIGNED, t_smallint_u SMALLINT UNSIGNED, t_mediumint MEDIUMINT,
        t_int_u INT UNSIGNED, t_bigint BIGINT, t_bigint_u BIGINT UNSIGNED,
        t_dec_10_3 DECIMAL(10,3), t_dec_65_30 DECIMAL(65,30), t_float FLOAT, t_double DOUBLE,
        t_bit1 BIT(1), t_bit64 BIT(64), t_date DATE, t_datetime6 DATETIME(6), t_timestamp3 TIMESTAMP(3) NULL,
        t_time6 TIME(6), t_year YEAR, t_char CHAR(10), t_varchar VARCHAR(100), t_text TEXT,
        t_binary BINARY(4), t_varbinary VARBINARY(16), t_blob BLOB,
        t_enum ENUM('small','medium','large'), t_set SET('red','green','blue'), t_json JSON,
        t_point POINT, t_geometry GEOMETRY, t_linestring LINESTRING, t_polygon POLYGON, t_multipoint MULTIPOINT,
        t_multilinestring MULTILINESTRING, t_multipolygon MULTIPOLYGON, t_geomcollection GEOMETRYCOLLECTION
    )""",
    "CREATE TABLE shop.marks (id INT PRIMARY KEY, mark VARCHAR(40))",
]
COLUMNS = (
    "id, t_tinyint, t_tinyint_u, t_smallint_u, t_mediumint, t_int_u, t_bigint, t_bigint_u, t_dec_10_3, t_dec_65_30,"
    " t_float, t_double, t_bit1, t_bit64, t_date, t_datetime6, t_timestamp3, t_time6, t_year, t_char, t_varchar,"
    " t_text, t_binary, t_varbinary, t_blob, t_enum, t_set, t_json, t_point, t_geometry, t_linestring, t_polygon,"
    " t_multipoint, t_multilinestring, t_multipolygon, t_geomcollection"
)
SPATIAL = (
    "ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 0))'),"
    " ST_GeomFromText('LINESTRING(0 0,1 1,2 3)'), ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0))'),"
    " ST_GeomFromText('MULTIPOINT(0 0,1 1)'), ST_GeomFromText('MULTILINESTRING((0 0,1 1),(2 2,3 3))'),"
    " ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))'),"
    " ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))')"
)
TYPICAL = (
    "{id}, -5, 200, 60000, -8000000, 4000000000, -9000000000000000000, 18446744073709551615, 1.5,"
    " 12345678901234567890123456789012345.123456789012345678901234567890, 9.9, 2.718281828459045, b'1',"
    " b'1000000000000000000000000000000000000000000000000000000000000001', '2024-02-29',"
    " '2024-02-29 23:59:59.123456', '2024-02-29 12:00:00.5', '-838:59:59.000000', 2024, 'abc', 'héllo 😀',"
    " 'text <&>', x'00FF0102', x'DEADBEEF00', x'80FF', 'medium', 'red,blue', '{{\"a\": [1, 2.5], \"b\": null}}', "
    + SPATIAL
)
NULLS = "{id}" + ", NULL" * 35


def _insert(*rows: str) -> str:
    return f"INSERT INTO shop.types ({COLUMNS}) VALUES " + ", ".join(f"({r})" for r in rows)


STEPS = [
    [_insert(TYPICAL.format(id=1), NULLS.format(id=2), TYPICAL.format(id=3))],
    ["UPDATE shop.types SET t_varchar = 'updated', t_dec_10_3 = 7, t_float = 0.1 WHERE id IN (1, 3)"],
    ["UPDATE shop.types SET id = 30 WHERE id = 3"],
    ["DELETE FROM shop.types WHERE id IN (2, 30)"],
    [_insert(TYPICAL.format(id=4))],
]


def _select(cursor: Any) -> TableState:
    cursor.execute("SELECT * FROM shop.types ORDER BY id")
    names = [d[0] for d in cursor.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


class Run:
    def __init__(self) -> None:
        self.states: dict[str, list[TableState]] = {"types": []}
        self.columns: dict[str, dict[str, Any]] = {}
        self.messages: list[Message] = []


@pytest.fixture(scope="module")
def run(mariadb: MariaDB, kafka_bootstrap: str) -> Iterator[Run]:
    result = Run()
    with mariadb.connect(database=None) as connection, connection.cursor() as cursor:
        for statement in SETUP:
            cursor.execute(statement)
        with running_canal(
            kafka_bootstrap,
            master=f"{mariadb.host}:{mariadb.port}",
            user=USER,
            password=PASSWORD,
            tables="shop\\..*",
            topic=TOPIC,
        ) as canal:
            # Canal reads from the master's position when it connects: ping until a mark comes through
            for attempt in range(60):
                cursor.execute("INSERT INTO shop.marks VALUES (%s, 'ping')", (attempt,))
                try:
                    wait_for_value(kafka_bootstrap, TOPIC, b'"ping"', timeout_s=2)
                    break
                except TimeoutError:
                    if not canal.running:
                        pytest.fail(f"Canal exited:\n{canal.log_tail()}")
            else:
                pytest.fail(f"Canal wrote nothing within a minute:\n{canal.log_tail()}")
            # the table is empty until the first step: a replay starts from there without an event to check
            for step in STEPS:
                for statement in step:
                    cursor.execute(statement)
                result.states["types"].append(_select(cursor))
            cursor.execute("INSERT INTO shop.marks VALUES (1000, 'workload-done')")
            wait_for_value(kafka_bootstrap, TOPIC, b"workload-done", timeout_s=60)
            result.messages = read_all(kafka_bootstrap, [TOPIC])
        cursor.execute(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'types'"
        )
        result.columns = {r[0]: {"data_type": r[1], "column_type": r[2]} for r in cursor.fetchall()}
        cursor.execute("DROP DATABASE shop")
    captures = os.environ.get("CDC_WRITE_CAPTURES")
    if captures:
        write_message_lines(Path(captures) / "canal-1.1.4-mariadb.jsonl", result.messages)
    yield result


def decode_all(run: Run) -> tuple[list[Event], list[str]]:
    return decode_messages(get_codec("canal-json").decoder({}), run.messages)


def expected_value(info: Mapping[str, Any], value: Any) -> Any:
    """The database's value as a typed decoded value (Canal carries the binlog's text: nothing is lost)."""
    if value is None:
        return None
    kind = info["data_type"]
    if kind == "bit":
        return int.from_bytes(value, "big")
    if kind == "timestamp":
        return value.replace(tzinfo=dt.UTC)
    if kind == "set":
        members = [m.strip("'") for m in info["column_type"][4:-1].split(",")]
        chosen = set(value.split(",")) - {""} if isinstance(value, str) else set(value)
        return tuple(m for m in members if m in chosen)
    if kind in ("float", "double"):
        return float(value)
    if kind in SPATIAL_TYPES:
        return stored_geometry(value)
    return value


def test_every_canal_message_decodes(run: Run) -> None:
    _, errors = decode_all(run)
    assert run.messages, "Canal wrote nothing"
    assert not errors, decode_failures(errors, len(run.messages))


def test_canal_rows_equal_the_database(run: Run) -> None:
    events, _ = decode_all(run)
    compare = compare_with(lambda _table, column, value: expected_value(run.columns[column], value))
    missed = states_in_order(events, run.states, compare)
    assert not missed, "\n".join(f"{table}: {why}" for table, why in missed.items())
