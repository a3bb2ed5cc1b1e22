"""Canal-JSON events through the canonical event JSON, and against the Debezium codec on the same changes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

from cdc_core import canonical
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec, installed_codecs
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing.corpus import corpus_files
from cdc_testing.strategies import kitchen_sink_schema

SCHEMA = TableSchema(
    database="shop",
    table="accounts",
    columns=[
        Column(name="id", data_type=parse_type_text("int(11)"), nullable=False),
        Column(name="owner", data_type=parse_type_text("varchar(64)")),
        Column(name="opened", data_type=parse_type_text("date")),
        Column(name="seen", data_type=parse_type_text("datetime(6)")),
        Column(name="visits", data_type=parse_type_text("bigint(20) unsigned")),
        Column(name="balance", data_type=parse_type_text("decimal(12,2)")),
        Column(name="note", data_type=parse_type_text("text")),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
BEFORE = {
    "id": 7,
    "owner": "Grace <h>",
    "opened": dt.date(1985, 12, 9),
    "seen": dt.datetime(2024, 2, 29, 23, 59, 59, 999999),
    "visits": 18446744073709551615,
    "balance": Decimal("1234.50"),
    "note": None,
}
UPDATE = RowChange(
    op=Op.UPDATE,
    database="shop",
    table="accounts",
    before=BEFORE,
    after={**BEFORE, "visits": 0, "note": "renamed"},
    commit_ts=compose(1_709_251_199_000, 3),
    schema=SCHEMA,
)


def test_corpus_events_survive_the_canonical_json() -> None:
    decoder = get_codec("canal-json").decoder()
    for path in corpus_files("tiflow/pkg/sink/codec/canal/**/*.json"):
        (event,) = decoder.decode(Message(value=path.read_bytes(), topic="t", partition=0, offset=1))
        line = canonical.dumps(event)
        assert canonical.loads(line) == event, path.name


@pytest.mark.parametrize("options", [{}, {"content-compatible": True}, {"flavour": "canal"}])
def test_encoded_events_survive_the_canonical_json(options: dict[str, Any]) -> None:
    schema = kitchen_sink_schema()
    row = {c.name: None for c in schema.columns} | {"id": 1, "c_enum": "blue", "c_set": ("x", "z"), "c_bit_64": 5}
    event = RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=row, schema=schema)
    (message,) = get_codec("canal-json").encoder(options).encode(event)
    (decoded,) = get_codec("canal-json").decoder().decode(message)
    assert canonical.loads(canonical.dumps(decoded)) == decoded


def test_canal_and_debezium_agree_on_the_same_change() -> None:
    if "debezium" not in installed_codecs():
        pytest.fail("cdc-debezium is part of the workspace and must be installed for integration tests")
    results = {}
    # Debezium needs tidb_type (the extension) to tell BIGINT UNSIGNED max from -1.
    for protocol, options in [
        ("canal-json", {"enable-tidb-extension": True}),
        ("debezium", {"enable-tidb-extension": True}),
    ]:
        messages = get_codec(protocol).encoder(options).encode(UPDATE)
        (decoded,) = [e for m in messages for e in get_codec(protocol).decoder().decode(m)]
        results[protocol] = canonical.to_canonical(decoded, include_schema=False)
    canal, debezium = results["canal-json"], results["debezium"]
    for key in ("op", "database", "table", "commit_ts"):
        assert canal[key] == debezium[key], key
    # Debezium writes DECIMAL as a double by default (lossy); every other column agrees exactly.
    for image in ("before", "after"):
        assert {k: v for k, v in canal[image].items() if k != "balance"} == {
            k: v for k, v in debezium[image].items() if k != "balance"
        }
    assert canal["after"]["visits"] == 0 and canal["before"]["visits"] == 18446744073709551615
