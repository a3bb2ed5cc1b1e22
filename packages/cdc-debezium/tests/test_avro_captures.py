"""What real Debezium 3.5 connectors wrote through Kafka Connect's Avro converter (Apicurio's, Confluent framing;
tests/captures/avro/, see tests/captures/README.md) decodes exactly.

Each capture comes with the registry's writer schemas by id, and was written in the same run as the JsonConverter
capture with the same connector settings (``mirrors``): both decode to the same events, and the values of a row
the workload inserted are the ones its SQL wrote.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_core.codec import Options
from cdc_core.events import DDLEvent, Event, LogicalMessage, Op, RowChange
from cdc_core.messagelines import read_lines
from cdc_core.registry import get_codec
from cdc_core.schema_registry import SchemaNotFoundError
from cdc_core.values import Geometry
from cdc_debezium.avro.codec import OPTIONS
from cdc_debezium.avro.decoder import DebeziumAvroDecoder
from cdc_testing.expectations import assert_same_changes

CAPTURES = Path(__file__).parent / "captures"
HEX = {"binary.handling.mode": "hex"}
# capture -> (the JSON capture of the same connector settings and run, decoder options)
MIRRORS: dict[str, tuple[str, dict[str, str]]] = {
    "mdb-avro": ("mdb-precise", {}),
    "mdb-avro-connect": ("mdb-numeric", HEX),
    "pg-avro": ("pg-precise", {}),
    "pg-avro-connect": ("pg-numeric", HEX),
}
UTC = dt.UTC


class CapturedSchemas:
    """The writer schemas the registry held when the capture was made, by id."""

    def __init__(self, name: str) -> None:
        text = (CAPTURES / "avro" / f"{name}.schemas.json").read_text(encoding="utf-8")
        self.by_id = {int(k): v for k, v in json.loads(text).items()}

    def schema(self, schema_id: int) -> str:
        found = self.by_id.get(schema_id)
        if found is None:
            raise SchemaNotFoundError(f"schema id {schema_id} is not in the capture")
        return found


def _decode(decoder: Any, path: Path) -> list[Event]:
    events: list[Event] = []
    with path.open("rb") as stream:
        for _, message in read_lines(stream, source=path.name):
            events.extend(decoder.decode(message))
    return events


def decode_avro(name: str) -> list[Event]:
    raw = {"schema-registry": "http://unused.invalid", **MIRRORS[name][1]}
    options = Options([s for s in OPTIONS if s.for_decoder], raw, protocol="debezium-avro")
    return _decode(DebeziumAvroDecoder(options, schemas=CapturedSchemas(name)), CAPTURES / "avro" / f"{name}.jsonl")


def inserted(events: list[Event], table: str, key: int) -> dict[str, Any]:
    (row,) = [
        e
        for e in events
        if isinstance(e, RowChange) and e.table == table and e.op is Op.INSERT and e.image["id"] == key
    ]
    assert row.after is not None
    return dict(row.after)


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_the_avro_form_decodes_to_the_json_forms_events(name: str) -> None:
    mirror, options = MIRRORS[name]
    avro = decode_avro(name)
    json_form = _decode(get_codec("debezium").decoder(options), CAPTURES / f"{mirror}.jsonl")
    assert len(avro) > 20
    # -connect: with propagated source types, whose spatial columns after the first read as GEOMETRY
    assert_same_changes(avro, json_form, propagated_types=name.endswith("-connect"))


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_every_message_is_confluent_framed(name: str) -> None:
    """Magic byte 0 and a 4-byte id the registry's Confluent API resolves, on every key and value."""
    known = CapturedSchemas(name).by_id
    with (CAPTURES / "avro" / f"{name}.jsonl").open("rb") as stream:
        parts = [data for _, m in read_lines(stream, source=name) for data in (m.key, m.value) if data]
    assert parts and all(data[0] == 0 and struct.unpack(">I", data[1:5])[0] in known for data in parts)


def test_mariadb_row_as_inserted() -> None:
    """Row 2 of ``types`` (ROW_TYPICAL in integration/test_debezium_mariadb.py): Connect Decimal up to 65 digits,
    BIGINT UNSIGNED as two's complement (no source type), Bits, io.debezium.time types, binaries as bytes."""
    row = inserted(decode_avro("mdb-avro"), "types", 2)
    assert row["t_dec_65_30"] == Decimal("12345678901234567890123456789012345.123456789012345678901234567890")
    assert row["t_dec_5_2"].as_tuple().exponent == -2 and row["t_dec_5_2"] == Decimal("123.45")
    assert row["t_bigint_u"] == 18000000000000000000 - 2**64  # the connector's long mode
    assert (row["t_bit1"], row["t_bit8"], row["t_bit64"]) == (1, 0b10100101, 2**63 + 1)
    assert row["t_date"] == dt.date(2024, 2, 29)
    assert row["t_datetime6"] == dt.datetime(2024, 2, 29, 23, 59, 59, 123456)
    assert row["t_timestamp6"] == dt.datetime(2024, 2, 29, 12, 0, 0, 654321, tzinfo=UTC)
    assert row["t_time6"] == dt.timedelta(hours=100, microseconds=1)
    assert row["t_varchar"] == "héllo wörld 😀" and row["t_varbinary"] == bytes.fromhex("DEADBEEF00")
    assert (row["t_enum"], row["t_set"]) == ("medium", ("red", "blue"))
    assert row["t_point"] == Geometry(wkb=bytes.fromhex("0101000000000000000000f03f0000000000000040"), srid=None)


def test_mariadb_connect_time_and_source_types() -> None:
    """Connect's Date/Time/Timestamp (Avro date, time-millis, timestamp-millis): milliseconds, a TIME outside a day
    written as null; the propagated source types give BIGINT UNSIGNED its value and hex binaries their bytes."""
    events = decode_avro("mdb-avro-connect")
    row = inserted(events, "types", 2)
    assert row["t_date"] == dt.date(2024, 2, 29)
    assert row["t_datetime6"] == dt.datetime(2024, 2, 29, 23, 59, 59, 123000)
    assert row["t_time"] == dt.timedelta(hours=12, minutes=34, seconds=56)
    assert row["t_time6"] is None  # '100:00:00.000001' is no time of day
    assert row["t_bigint_u"] == 18000000000000000000
    assert row["t_varbinary"] == bytes.fromhex("DEADBEEF00")
    ddl = [e.sql or "" for e in events if isinstance(e, DDLEvent)]
    assert any("ADD COLUMN t_added" in s for s in ddl) and any("MODIFY COLUMN t_int BIGINT" in s for s in ddl)


def test_postgres_row_as_inserted() -> None:
    """Row 2 of ``types`` (integration/test_debezium_postgres.py): VariableScaleDecimal, arrays, Uuid, Json,
    MicroDuration, ZonedTime (UTC time of day), Point."""
    events = decode_avro("pg-avro")
    row = inserted(events, "types", 2)
    assert row["t_numeric"] == Decimal("3.14159265358979323846264338327950288")
    assert row["t_numeric_50_20"] == Decimal("123456789012345678901234567890.12345678901234567890")
    assert row["t_int_array"] == [1, 2, None, 4] and row["t_text_array"] == ["x", "y z", ""]
    assert row["t_uuid"] == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    assert row["t_jsonb"] == {"k": {"n": 1}}
    assert row["t_timetz"] == dt.timedelta(hours=8, minutes=15, seconds=30, microseconds=250000)
    assert row["t_timestamptz"] == dt.datetime(2024, 2, 29, 6, 30, 0, 654321, tzinfo=UTC)
    assert row["t_interval"] == dt.timedelta(microseconds=14 * 2_629_800_000_000 + 3 * 86_400_000_000 + 14_706_500_000)
    assert row["t_bit12"] == 0b101010101010 and row["t_mood"] == "happy"
    assert row["t_point"] == Geometry(wkb=bytes.fromhex("0101000000000000000000f83f00000000000000c0"), srid=None)
    assert [e.content for e in events if isinstance(e, LogicalMessage)] == [b"transactional message", b"\x00\xff"]


def test_postgres_hstore_as_an_avro_map() -> None:
    row = inserted(decode_avro("pg-avro-connect"), "types", 2)
    assert row["t_hstore"] == {"a": "1", "b": None, "c d": "e"}
    assert row["t_timestamp"] == dt.datetime(2024, 2, 29, 23, 59, 59, 654000)
    assert row["t_bytea"] == b"\x00\xff\x01\x02"
