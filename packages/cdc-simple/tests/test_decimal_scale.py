"""A DECIMAL written with fewer fractional digits than its column's scale reads at the scale (JSON and Avro)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pytest

from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_simple import avro

SCHEMA = TableSchema(
    database="shop",
    table="prices",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False),
        Column(name="price", data_type=DataType(mysql_type=MySQLType.DECIMAL, length=10, decimal=4)),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    table_id=9,
    version=1,
)


@pytest.mark.parametrize(("written", "expected"), [("12.34", "12.3400"), ("7", "7.0000"), ("1.2345", "1.2345")])
def test_simple_json_decimal_text_is_padded(written: str, expected: str) -> None:
    event = RowChange(op=Op.INSERT, database="shop", table="prices", after={"id": 1, "price": Decimal("1.5")},
                      commit_ts=1 << 20, schema=SCHEMA, table_id=9, schema_version=1)  # fmt: skip
    encoder = get_codec("simple").encoder({})
    (message,) = [m for m in encoder.encode(event) if b'"INSERT"' in (m.value or b"")]
    doc = json.loads(message.value or b"")
    assert doc["data"]["price"] == "1.5000"  # TiCDC pads; other writers (or hand edits) may not
    doc["data"]["price"] = written
    decoder = get_codec("simple").decoder({})
    decoder.prime(SCHEMA)  # type: ignore[attr-defined]
    (decoded,) = decoder.decode(Message(value=json.dumps(doc).encode(), topic="t", partition=0, offset=1))
    assert str(decoded.after["price"]) == expected


@pytest.mark.parametrize(("written", "expected"), [("12.34", "12.3400"), ("-7", "-7.0000"), ("1.2345", "1.2345")])
def test_simple_avro_decimal_string_is_padded(written: str, expected: str) -> None:
    event = RowChange(op=Op.INSERT, database="shop", table="prices", after={"id": 1, "price": Decimal("1.5")},
                      commit_ts=1 << 20, schema=SCHEMA, table_id=9, schema_version=1)  # fmt: skip
    messages = get_codec("simple").encoder({"encoding-format": "avro"}).encode(event)
    dml = messages[-1]  # after the table's BOOTSTRAP
    datum: Any = fastavro.schemaless_reader(io.BytesIO(dml.value or b""), avro.SCHEMA, None, return_record_name=True)
    name, message = datum  # (record name, record): the union branch named
    payload_name, payload = message["payload"]
    assert payload["data"]["price"] == "1.5000"  # TiCDC pads; a string field may carry fewer digits
    payload["data"]["price"] = written
    out = io.BytesIO()
    fastavro.schemaless_writer(out, avro.SCHEMA, (name, {**message, "payload": (payload_name, payload)}))
    decoder = get_codec("simple").decoder({"encoding-format": "avro"})
    decoder.prime(SCHEMA)  # type: ignore[attr-defined]
    (decoded,) = decoder.decode(Message(value=out.getvalue(), topic="t", partition=0, offset=1))
    assert isinstance(decoded, RowChange) and decoded.after is not None
    assert str(decoded.after["price"]) == expected
