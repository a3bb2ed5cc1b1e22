"""Byte-level pins of encoded messages: header, decimal and BIT bytes, tombstones, extension values."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from cdc_avro import CODEC
from cdc_avro.datum import bit_bytes, decimal_bytes, unscaled_decimal
from cdc_avro.names import PROTOCOL
from cdc_avro.wire import FramingError, glue, unframe
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.textual import TextFormError
from cdc_core.types import DataType, MySQLType
from cdc_testing.apicurio import ApicurioRegistry

TABLE = TableSchema(
    database="shop",
    table="orders",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.BIGINT), nullable=False),
        Column(name="amount", data_type=DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=2), nullable=False),
        Column(name="flags", data_type=DataType(mysql_type=MySQLType.BIT, length=12), nullable=False),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)


@pytest.mark.parametrize(
    ("unscaled", "expected"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x00\x80"),
        (255, b"\x00\xff"),
        (-1, b"\xff"),
        (-128, b"\x80"),
        (-129, b"\xff\x7f"),
        (-256, b"\xff\x00"),
        (32768, b"\x00\x80\x00"),
    ],
)
def test_decimal_bytes_minimal_twos_complement(unscaled: int, expected: bytes) -> None:
    assert decimal_bytes(unscaled) == expected
    assert int.from_bytes(expected, "big", signed=True) == unscaled


def test_unscaled_decimal_refuses_extra_fraction_digits() -> None:
    assert unscaled_decimal(Decimal("-1.50"), 2) == -150
    assert unscaled_decimal(Decimal("7"), 3) == 7000
    with pytest.raises(TextFormError):
        unscaled_decimal(Decimal("1.234"), 2)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, b"\x00"), (5, b"\x05"), (0x1234, b"\x12\x34"), (0x100, b"\x01\x00"), (2**64 - 1, b"\xff" * 8)],
)
def test_bit_bytes_big_endian_trimmed(value: int, expected: bytes) -> None:
    assert bit_bytes(value) == expected


def test_message_bytes(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    row = {"id": 3, "amount": Decimal("-1.28"), "flags": 0x123}
    (message,) = encoder.encode(RowChange(op=Op.INSERT, database="shop", table="orders", after=row, schema=TABLE))
    assert message.topic == "tidb_shop_orders"
    client = SchemaRegistryClient({"url": schema_registry.url})
    key_id, value_id = (
        client.get_latest_version(f"tidb_shop_orders-{part}").schema_id or 0 for part in ("key", "value")
    )
    # key: magic 0, 4-byte big-endian id, then the long 3 zig-zag encoded (0x06)
    assert message.key == b"\x00" + key_id.to_bytes(4, "big") + b"\x06"
    # value: id 3; amount -128 cents as bytes of length 1 (zig-zag 0x02) = 0x80; flags 0x0123 as 2 bytes
    assert message.value == b"\x00" + value_id.to_bytes(4, "big") + b"\x06" + b"\x02\x80" + b"\x04\x01\x23"


def test_delete_is_a_tombstone_with_key(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": "true"})
    before = {"id": 9, "amount": Decimal("0.00"), "flags": 0}
    (message,) = encoder.encode(RowChange(op=Op.DELETE, database="shop", table="orders", before=before, schema=TABLE))
    assert message.value is None
    assert message.key is not None and message.key[5:] == b"\x12"
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    for tombstone in (None, b""):  # empty and null values both mean delete
        (event,) = decoder.decode(Message(value=tombstone, key=message.key, topic="tidb_shop_orders"))
        assert isinstance(event, RowChange)
        assert (event.op, event.before, event.commit_ts) == (Op.DELETE, {"id": 9}, None)
        assert event.schema is not None and event.schema.handle_key == ("id",)


def test_extension_fields_and_commit_ts(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": "true"})
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    commit_ts = (1_700_000_000_000 << 18) + 5
    row = {"id": 1, "amount": Decimal("0.00"), "flags": 0}
    event = RowChange(op=Op.UPDATE, database="shop", table="orders", after=row, commit_ts=commit_ts, schema=TABLE)
    (message,) = encoder.encode(event)
    assert message.value is not None
    # the record ends with "u" (len 1 -> 0x02 'u'), then the two longs
    assert message.value.find(b"\x02u") > 0
    (decoded,) = decoder.decode(message)
    assert isinstance(decoded, RowChange)
    assert (decoded.op, decoded.commit_ts, decoded.meta) == (
        Op.UPDATE,
        commit_ts,
        {"_tidb_commit_physical_time": 1_700_000_000_000},
    )
    assert decoded.after == row


def test_glue_header_is_read(tmp_path: object, schema_registry: ApicurioRegistry) -> None:
    from pathlib import Path

    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    client = SchemaRegistryClient({"url": schema_registry.url})
    row = {"id": 3, "amount": Decimal("12.50"), "flags": 1}
    (message,) = encoder.encode(RowChange(op=Op.INSERT, database="shop", table="orders", after=row, schema=TABLE))
    assert message.value is not None and message.key is not None
    directory = Path(str(tmp_path))
    frames = []
    for data in (message.key, message.value):
        framed = unframe(data)
        assert framed.schema_id is not None
        version = uuid.uuid4()
        (directory / f"{version}.avsc").write_text(client.get_schema(framed.schema_id).schema_str or "")
        frames.append(glue(version, bytes(framed.datum)))
    assert frames[0][:2] == b"\x03\x00" and len(frames[0]) == 18 + len(unframe(message.key).datum)
    decoder = CODEC.decoder({"glue-schema-dir": str(directory)})
    (event,) = decoder.decode(Message(value=frames[1], key=frames[0]))
    assert isinstance(event, RowChange) and event.after == row and event.table == "orders"


def test_unframe_rejects_unknown_headers() -> None:
    with pytest.raises(FramingError, match="magic byte 0x07"):
        unframe(b"\x07abc")
    with pytest.raises(FramingError, match="5 bytes"):
        unframe(b"\x00\x00\x01")
    with pytest.raises(FramingError, match="compression"):
        unframe(b"\x03\x05" + b"\x00" * 16)
    assert PROTOCOL == "avro"


def test_new_ticdc_delete_marker_carries_the_commit_ts(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    before = {"id": 4, "amount": Decimal("0.00"), "flags": 0}
    (message,) = encoder.encode(RowChange(op=Op.DELETE, database="shop", table="orders", before=before, schema=TABLE))
    marker = b"\x03" + (1 << 40).to_bytes(8, "big")
    (event,) = CODEC.decoder({"schema-registry": schema_registry.url}).decode(Message(value=marker, key=message.key))
    assert isinstance(event, RowChange)
    assert (event.op, event.before, event.commit_ts) == (Op.DELETE, {"id": 4}, 1 << 40)


def test_rows_over_max_message_bytes_are_refused(schema_registry: ApicurioRegistry) -> None:
    from cdc_core.errors import LimitExceededError

    row = {"id": 3, "amount": Decimal("1.00"), "flags": 1}
    event = RowChange(op=Op.INSERT, database="shop", table="orders", after=row, schema=TABLE)
    (message,) = CODEC.encoder({"schema-registry": schema_registry.url}).encode(event)
    assert message.key is not None and message.value is not None
    size = len(message.key) + len(message.value) + 36
    fits = CODEC.encoder({"schema-registry": schema_registry.url, "max-message-bytes": str(size)})
    assert fits.encode(event) == [message]
    tight = CODEC.encoder({"schema-registry": schema_registry.url, "max-message-bytes": str(size - 1)})
    with pytest.raises(LimitExceededError, match=r"shop\.orders"):
        tight.encode(event)


def test_with_the_watermark_switch_a_delete_is_sent_as_its_commit_ts(schema_registry: ApicurioRegistry) -> None:
    options = {"schema-registry": schema_registry.url, "enable-tidb-extension": "true", "avro-enable-watermark": "true"}
    before = {"id": 4, "amount": Decimal("0.00"), "flags": 0}
    delete = RowChange(op=Op.DELETE, database="shop", table="orders", before=before, schema=TABLE, commit_ts=1 << 41)
    (message,) = CODEC.encoder(options).encode(delete)
    assert message.value == b"\x03" + (1 << 41).to_bytes(8, "big")
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    (event,) = decoder.decode(Message(value=message.value, key=message.key, topic="tidb_shop_orders"))
    assert isinstance(event, RowChange)
    assert (event.op, event.before, event.commit_ts) == (Op.DELETE, {"id": 4}, 1 << 41)
    plain = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": "true"})
    assert plain.encode(delete)[0].value is None  # without the switch: the tombstone TiCDC sends
