"""Row-level checksums (enable-row-checksum): written as TiCDC computes them, verified on decode."""

from __future__ import annotations

import struct
import zlib
from decimal import Decimal

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from cdc_avro import CODEC
from cdc_core.errors import ChecksumError
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.strategies import kitchen_sink_schema, row_changes

OPTIONS = {
    "enable-tidb-extension": "true",
    "enable-row-checksum": "true",
    "avro-decimal-handling-mode": "string",
    "avro-bigint-unsigned-handling-mode": "string",
}
TABLE = TableSchema(
    database="d",
    table="t",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False),
        Column(name="name", data_type=DataType(mysql_type=MySQLType.VARCHAR, length=8)),
        Column(name="price", data_type=DataType(mysql_type=MySQLType.DECIMAL, length=6, decimal=2)),
        Column(name="kind", data_type=DataType(mysql_type=MySQLType.ENUM, elements=("a", "b"))),
        Column(name="ratio", data_type=DataType(mysql_type=MySQLType.DOUBLE)),
        Column(name="big", data_type=DataType(mysql_type=MySQLType.BIGINT, unsigned=True)),
        Column(name="gone", data_type=DataType(mysql_type=MySQLType.INT)),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
ROW = {"id": -1, "name": "ab", "price": Decimal("1.50"), "kind": "b", "ratio": 1.5, "big": 2**64 - 1, "gone": None}


def _expected_checksum() -> int:
    """Built by hand from the documented per-column bytes (not through the codec's own function)."""
    parts = [
        struct.pack("<Q", 2**64 - 1),  # INT -1 as uint64
        struct.pack("<I", 2) + b"ab",
        struct.pack("<I", 4) + b"1.50",
        struct.pack("<Q", 2),  # ENUM index of b
        struct.pack("<d", 1.5),
        struct.pack("<Q", 2**64 - 1),  # BIGINT UNSIGNED text parsed back to uint64
    ]  # NULL contributes nothing
    checksum = 0
    for part in parts:
        checksum = zlib.crc32(part, checksum)
    return checksum


def _encode(registry: ApicurioRegistry, event: RowChange) -> Message:
    (message,) = CODEC.encoder({"schema-registry": registry.url, **OPTIONS}).encode(event)
    return message


def test_checksum_written_and_verified(schema_registry: ApicurioRegistry) -> None:
    message = _encode(schema_registry, RowChange(op=Op.INSERT, database="d", table="t", after=ROW, schema=TABLE))
    assert message.value is not None
    expected = str(_expected_checksum()).encode()
    assert bytes([len(expected) * 2]) + expected in message.value  # the string field as Avro writes it
    (event,) = CODEC.decoder({"schema-registry": schema_registry.url}).decode(message)
    assert isinstance(event, RowChange) and event.after == ROW
    assert event.meta["_tidb_row_level_checksum"] == expected.decode()
    assert event.meta["_tidb_corrupted"] is False


def test_corrupted_value_fails_verification(schema_registry: ApicurioRegistry) -> None:
    message = _encode(schema_registry, RowChange(op=Op.INSERT, database="d", table="t", after=ROW, schema=TABLE))
    assert message.value is not None and message.value.count(b"\x04ab") == 1
    corrupted = attrs.evolve(message, value=message.value.replace(b"\x04ab", b"\x04ac"), offset=3)
    with pytest.raises(ChecksumError) as caught:
        CODEC.decoder({"schema-registry": schema_registry.url}).decode(corrupted)
    assert caught.value.offset == 3 and caught.value.field == "value._tidb_row_level_checksum"


def test_checksum_from_tidb_is_written_verbatim(schema_registry: ApicurioRegistry) -> None:
    event = RowChange(
        op=Op.UPDATE, database="d", table="t", after=ROW, schema=TABLE, meta={"checksum": 12, "checksum_version": 1}
    )
    message = _encode(schema_registry, event)
    with pytest.raises(ChecksumError, match="does not match 12"):
        CODEC.decoder({"schema-registry": schema_registry.url}).decode(message)


def test_kitchen_sink_checksums_verify(schema_registry: ApicurioRegistry) -> None:
    schema = kitchen_sink_schema()
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, **OPTIONS})
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_changes(schema, ops=(Op.INSERT, Op.UPDATE)))
    def check(event: RowChange) -> None:
        (message,) = encoder.encode(event)
        (decoded,) = decoder.decode(message)
        assert isinstance(decoded, RowChange) and decoded.after == event.after

    check()
