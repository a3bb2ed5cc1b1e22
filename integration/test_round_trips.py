"""Every value survives: decode then encode gives back the messages TiCDC wrote, field for field.

For every protocol and flavour (`cdc_testing.roundtrip.FLAVOURS`): TiCDC's own messages (the golden corpus, the
Canal-JSON messages of the issue's figures, the Simple protocol's documented examples) and hypothesis-generated
changefeeds, with their column parameters known (as TiDB describes its tables) and unknown (as a message that
left them out leaves them). Only the fields that say when a message was built may differ.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.events import Event, RowChange
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.types import DataType
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.corpus import corpus_files, spec_json_blocks
from cdc_testing.roundtrip import (
    FLAVOURS,
    TICDC_CANAL,
    Flavour,
    decode,
    differences,
    encode,
    field_count,
    fields,
    replay,
)
from cdc_testing.strategies import kitchen_sink_schema, row_changes

# ----------------------------------------------------------------------------- the TiCDC messages
# (`cdc_testing.roundtrip.TICDC_CANAL`: Canal-JSON as TiCDC writes it, plain mysqlType names)

CANAL = next(f for f in FLAVOURS if f.name == "canal-json")


def test_ticdc_canal_json_comes_back_field_for_field() -> None:
    original = [Message(value=value, partition=0) for value in TICDC_CANAL]
    again = replay(CANAL, original)
    assert differences(CANAL, original, again) == []
    assert field_count(CANAL, again) == field_count(CANAL, original) == 40 + 48 + 40  # every field but "ts"
    update = fields(CANAL, again[1])
    assert update["value.old[0].c_decimal"] == "12345678901234.5678"
    assert (update["value.data[0].c_decimal"], update["value.data[0].c_time"]) == ("-0.0001", "838:59:59.000")


def test_decode_keeps_the_parameters_unknown_and_the_values_exact() -> None:
    (insert, update, _delete) = decode(CANAL, [Message(value=value) for value in TICDC_CANAL])
    assert isinstance(insert, RowChange) and insert.schema is not None and insert.after is not None
    types = {c.name: c.data_type for c in insert.schema.columns}
    assert types["c_decimal"] == DataType(mysql_type="decimal")  # neither precision nor scale: unknown
    assert types["c_datetime"].known_fsp is None and types["c_time"].known_fsp is None
    assert insert.after["c_decimal"] == Decimal("12345678901234.5678")
    assert isinstance(update, RowChange) and update.after is not None
    assert update.after["c_time"] == dt.timedelta(hours=838, minutes=59, seconds=59)


# ---------------------------------------------------------------------------------------- golden corpus

_DEBEZIUM_EXTRACTED = "{repo}/pkg/sink/codec/debezium/codec_test.extracted/{name}.*.json"
# (key file, value file, options) of the corpus messages TiCDC wrote with a schema or with a table in them
_DEBEZIUM_CASES = [
    ("TestEncodeInsert.03", "TestEncodeInsert.04", {}),
    ("TestEncodeUpdate.03", "TestEncodeUpdate.04", {}),
    ("TestEncodeDelete.03", "TestEncodeDelete.04", {}),
    ("TestCheckPointEvent.01", "TestCheckPointEvent.02", {"enable-tidb-extension": "true"}),
    ("TestDDLEvent.01", "TestDDLEvent.02", {}),
    ("TestDDLEvent.03", "TestDDLEvent.04", {"debezium-disable-schema": "true"}),
    ("TestDDLEvent.05", "TestDDLEvent.06", {"debezium-disable-schema": "true"}),
]


def _golden(repo: str, name: str) -> bytes:
    (path,) = corpus_files(_DEBEZIUM_EXTRACTED.format(repo=repo, name=name))
    return path.read_bytes()


@pytest.mark.parametrize("repo", ["tiflow", "ticdc"])
@pytest.mark.parametrize(("key", "value", "options"), _DEBEZIUM_CASES, ids=[c[1] for c in _DEBEZIUM_CASES])
def test_ticdc_debezium_corpus_comes_back(repo: str, key: str, value: str, options: dict[str, str]) -> None:
    flavour = Flavour("debezium", "debezium", {"cluster-id": "test_cluster", **options})
    original = [Message(key=_golden(repo, key), value=_golden(repo, value))]
    again = replay(flavour, original)
    assert differences(flavour, original, again) == []


def test_real_debezium_datatype_row_comes_back_as_ticdc_writes_it() -> None:
    """TiCDC's own test holds its Debezium output equal to real Debezium's for this every-type row (but for
    ``payload.source`` and ``payload.ts_ms``): so the row decoded and encoded again must equal it too."""
    (value_file,) = corpus_files("tiflow/pkg/sink/codec/debezium/testdata/datatype.dbz.json")
    flavour = Flavour("debezium", "debezium", {"cluster-id": "dbserver1"})
    original = Message(value=value_file.read_bytes(), key=value_file.with_name("datatype.dbz.key.json").read_bytes())
    (again,) = replay(flavour, [original])
    found = [d for d in differences(flavour, [original], [again]) if ".payload.source." not in d]
    # the source struct's schema is TiCDC's (commit_ts, cluster_id), not the MySQL connector's
    assert [d for d in found if "value.schema.fields[2]" not in d] == []
    timestamps = {k: v for k, v in fields(flavour, again).items() if k.startswith("value.payload.after.col_ts")}
    assert timestamps["value.payload.after.col_ts_fsp_5"] == "2023-11-30T12:34:56.12346Z"


def test_ticdc_canal_corpus_comes_back() -> None:
    files = corpus_files("tiflow/pkg/sink/codec/canal/canal_json_txn_event_decoder_test.extracted/*.json")
    flavour = next(f for f in FLAVOURS if f.name == "canal-json-plain")
    original = [Message(value=path.read_bytes(), partition=0) for path in files]
    assert differences(flavour, original, replay(flavour, original)) == []


def _simple_spec_messages() -> list[bytes]:
    """The example messages of the Simple protocol document, as TiCDC wrote them."""
    blocks = spec_json_blocks("ticdc-simple-protocol.en.txt")
    return [json.dumps(block).encode() for block in blocks if "type" in block]


def test_simple_protocol_examples_come_back() -> None:
    flavour = next(f for f in FLAVOURS if f.name == "simple-json").with_options(**{"send-bootstrap-in-msg-count": "0"})
    original = [Message(value=value, partition=0) for value in _simple_spec_messages()]
    assert len(original) == 6
    assert differences(flavour, original, replay(flavour, original)) == []


# ------------------------------------------------------------------------------------ generated changefeeds


def unknown_parameters(schema: TableSchema) -> TableSchema:
    """``schema`` as a message that leaves type parameters out describes it (TiCDC's Canal-JSON mysqlType)."""

    def plain(data_type: DataType) -> DataType:
        return attrs.evolve(data_type, length=None, decimal=None, charset=None, collation=None)

    return attrs.evolve(schema, columns=[attrs.evolve(c, data_type=plain(c.data_type)) for c in schema.columns])


KNOWN = kitchen_sink_schema(version=448020391014875100)
UNKNOWN = unknown_parameters(KNOWN)


def _changefeed(schema: TableSchema) -> st.SearchStrategy[list[RowChange]]:
    ops = st.lists(row_changes(KNOWN), min_size=1, max_size=6)
    return ops.map(lambda events: [_ordered(attrs.evolve(e, schema=schema), n) for n, e in enumerate(events)])


def _ordered(event: RowChange, number: int) -> RowChange:
    return attrs.evolve(event, commit_ts=448020391014875100 + number)


def _flavour(flavour: Flavour, registry: ApicurioRegistry | None) -> Flavour:
    return flavour.with_options(**{"schema-registry": registry.url}) if registry is not None else flavour


@pytest.fixture
def registry_for(request: pytest.FixtureRequest) -> Any:
    def registry(flavour: Flavour) -> ApicurioRegistry | None:
        return request.getfixturevalue("schema_registry") if flavour.protocol == "avro" else None

    return registry


@pytest.mark.parametrize("schema", [KNOWN, UNKNOWN], ids=["known-parameters", "unknown-parameters"])
@pytest.mark.parametrize("flavour", FLAVOURS, ids=[f.name for f in FLAVOURS])
def test_generated_changefeeds_come_back(flavour: Flavour, schema: TableSchema, registry_for: Any) -> None:
    concrete = _flavour(flavour, registry_for(flavour))

    @settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(_changefeed(schema))
    def check(events: list[Event]) -> None:
        original = encode(concrete, events)
        assert differences(concrete, original, replay(concrete, original)) == []

    check()
