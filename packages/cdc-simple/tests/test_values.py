"""Wire-value variants written by different TiCDC generations, read into the same typed values."""

from __future__ import annotations

import io
from collections.abc import Mapping

import fastavro
import pytest

from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_simple import CODEC, avro, tableschema
from cdc_simple.names import AVRO_MESSAGE, AVRO_UNSIGNED_BIGINT

SCHEMA = TableSchema(
    database="d",
    table="t",
    columns=[
        Column(name="bits", data_type=DataType(mysql_type=MySQLType.BIT, length=64, unsigned=True)),
        Column(name="big", data_type=DataType(mysql_type=MySQLType.BIGINT, length=20, unsigned=True)),
        Column(name="small", data_type=DataType(mysql_type=MySQLType.TINYINT, length=3, unsigned=True)),
    ],
    table_id=1,
    version=5,
)


def _avro_message(data: Mapping[str, object]) -> bytes:
    dml = {
        "version": 1,
        "database": "d",
        "table": "t",
        "tableID": 1,
        "type": "INSERT",
        "commitTs": 9,
        "buildTs": 1,
        "schemaVersion": 5,
        "claimCheckLocation": None,
        "handleKeyOnly": None,
        "checksum": None,
        "data": data,
        "old": None,
    }
    out = io.BytesIO()
    payload = ("com.pingcap.simple.avro.DML", dml)
    fastavro.schemaless_writer(out, avro.SCHEMA, (AVRO_MESSAGE, {"type": "DML", "payload": payload}))
    return out.getvalue()


def _bootstrap_avro() -> bytes:
    out = io.BytesIO()
    bootstrap = {"version": 1, "buildTs": 1, "tableSchema": tableschema.to_avro(SCHEMA)}
    payload = ("com.pingcap.simple.avro.Bootstrap", bootstrap)
    fastavro.schemaless_writer(out, avro.SCHEMA, (AVRO_MESSAGE, {"type": "BOOTSTRAP", "payload": payload}))
    return out.getvalue()


def test_avro_bit_as_tiflow_long_or_ticdc_string_and_unsigned_bigint_record() -> None:
    decoder = CODEC.decoder({"encoding-format": "avro"})
    decoder.decode(Message(value=_bootstrap_avro()))
    tiflow = {"bits": ("long", -1), "big": (AVRO_UNSIGNED_BIGINT, {"value": -2}), "small": ("long", 255)}
    ticdc = {
        "bits": ("string", "18446744073709551615"),
        "big": (AVRO_UNSIGNED_BIGINT, {"value": 7}),
        "small": ("long", 0),
    }
    (first,) = decoder.decode(Message(value=_avro_message(tiflow)))
    (second,) = decoder.decode(Message(value=_avro_message(ticdc)))
    assert isinstance(first, RowChange) and isinstance(second, RowChange)
    assert first.after == {"bits": 2**64 - 1, "big": 2**64 - 2, "small": 255}
    assert second.after == {"bits": 2**64 - 1, "big": 7, "small": 0}


def test_json_bit_default_is_a_number() -> None:
    schema = tableschema.to_json(
        TableSchema(
            database="d",
            table="t",
            columns=[Column(name="b", data_type=DataType(mysql_type=MySQLType.BIT, length=8), default="5")],
            version=3,
        )
    )
    assert schema["columns"][0]["default"] == 5  # TiCDC converts BIT defaults to numbers
    assert tableschema.decode(schema, "tableSchema").columns[0].default == "5"


@pytest.mark.parametrize("default", ["\u00b2", "\u0665", "b'101'"])
def test_json_bit_default_that_is_not_ascii_digits_stays_text(default: str) -> None:
    """'²' passes str.isdigit() but not int(); Arabic-Indic 5 passes both: neither is a number TiDB prints."""
    column = Column(name="b", data_type=DataType(mysql_type=MySQLType.BIT, length=8), default=default)
    schema = tableschema.to_json(TableSchema(database="d", table="t", columns=[column], version=3))
    assert schema["columns"][0]["default"] == default
