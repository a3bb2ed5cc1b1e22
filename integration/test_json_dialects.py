"""Each protocol writes strings byte for byte as the Go JSON library TiCDC uses for it.

The expected bytes are the Go libraries' own output (``packages/cdc-core/tests/data/gojson/golden.json``,
produced by running them at TiCDC's pinned versions): Debezium rows by json-iterator, Simple JSON and Avro
schemas by encoding/json, Canal-JSON rows by easyjson.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdc_avro.schemagen import SchemaOptions, value_record
from cdc_core.events import Op, RowChange
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import parse_type_text

GOLDEN = json.loads(
    (Path(__file__).parents[1] / "packages/cdc-core/tests/data/gojson/golden.json").read_text(encoding="utf-8")
)
PROBES = [bytes.fromhex(row["input_hex"]) for row in GOLDEN["strings"] if row["input_hex"]]


def _golden(raw: bytes, library: str) -> bytes:
    (row,) = [row for row in GOLDEN["strings"] if bytes.fromhex(row["input_hex"]) == raw]
    return bytes.fromhex(row["outputs_hex"][library])


def _event(text: str) -> RowChange:
    schema = TableSchema(
        database="d",
        table="t",
        columns=[
            Column(name="id", data_type=parse_type_text("int"), nullable=False),
            Column(name="s", data_type=parse_type_text("varchar(255)")),
        ],
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
        table_id=7,
        version=1 << 18,
    )
    return RowChange(
        op=Op.INSERT, database="d", table="t", after={"id": 1, "s": text}, schema=schema, commit_ts=2 << 18
    )


def _row_value(protocol: str, options: dict[str, Any], text: str) -> bytes:
    messages = get_codec(protocol).encoder(options).encode(_event(text))
    value = messages[-1].value
    assert value is not None
    return value


@pytest.mark.parametrize("raw", PROBES, ids=repr)
@pytest.mark.parametrize(
    ("protocol", "options", "library"),
    [
        ("debezium", {}, "json-iterator"),
        ("simple", {"send-bootstrap-interval-in-sec": 0}, "encoding/json"),
        ("canal-json", {}, "easyjson"),
    ],
)
def test_row_strings_are_written_as_ticdcs_library_writes_them(
    protocol: str, options: dict[str, Any], library: str, raw: bytes
) -> None:
    value = _row_value(protocol, options, raw.decode("utf-8", "surrogateescape"))
    assert b'"s":' + _golden(raw, library) in value


@pytest.mark.parametrize("raw", PROBES, ids=repr)
def test_avro_schemas_are_written_as_encoding_json_writes_them(raw: bytes) -> None:
    text = raw.decode("utf-8", "surrogateescape")
    table = _event(text).schema
    assert table is not None
    column = Column(name="s", data_type=parse_type_text("varchar(255)"), default=text)
    table = TableSchema(database="d", table="t", columns=[table.columns[0], column], indexes=table.indexes)
    plan = value_record(table, SchemaOptions())
    assert b'"default":' + _golden(raw, "encoding/json") in plan.schema_json.encode()
