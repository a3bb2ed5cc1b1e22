"""The decoder contract across every installed protocol: mutated messages raise only CdcError subclasses.

Seeds are the protocol's golden corpus messages where the corpus has them, and otherwise messages its own encoder
writes for a kitchen-sink row (insert, update, delete) and a DDL.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from cdc_core.codec import Codec
from cdc_core.errors import CdcError
from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import installed_codecs
from cdc_testing.contract import assert_only_cdc_errors
from cdc_testing.corpus import corpus_dir
from cdc_testing.strategies import kitchen_sink_schema, row_images

CORPUS_DIRS = {"debezium": "debezium", "canal-json": "canal", "simple": "simple"}
SCHEMA = kitchen_sink_schema()
CODECS = sorted(installed_codecs())


def _corpus_seeds(protocol: str) -> list[Message]:
    folder = CORPUS_DIRS.get(protocol)
    if folder is None:
        return []
    paths = sorted(corpus_dir().glob(f"*/pkg/sink/codec/{folder}/**/*.json"))
    return [Message(value=path.read_bytes()) for path in paths if "message.json" not in path.name]


def _events(row: dict[str, Any]) -> list[Event]:
    common: dict[str, Any] = {"database": SCHEMA.database, "table": SCHEMA.table, "commit_ts": 449_000_000_000_000_000}
    return [
        DDLEvent(ddl_type=DDLType.CREATE, sql="CREATE TABLE t (...)", table_schema=SCHEMA, **common),
        RowChange(op=Op.INSERT, after=row, schema=SCHEMA, **common),
        RowChange(op=Op.UPDATE, before=row, after=row, schema=SCHEMA, **common),
        RowChange(op=Op.DELETE, before=row, schema=SCHEMA, **common),
    ]


def _encoded_seeds(codec: Codec, row: dict[str, Any]) -> list[Message]:
    try:
        encoder = codec.encoder()
    except CdcError:  # a codec that needs configuration to encode (a registry, say)
        return []
    seeds: list[Message] = []
    for event in _events(row):
        try:
            seeds.extend(encoder.encode(event))
        except CdcError:
            continue
    return [m for m in seeds if m.value is not None]


@pytest.mark.parametrize("protocol", CODECS)
def test_only_cdc_errors_escape(protocol: str) -> None:
    codec = installed_codecs()[protocol]
    try:
        codec.decoder()
    except CdcError as exc:  # needs configuration (a registry URL): its package's own fuzz test covers it
        pytest.skip(f"{protocol} decoder needs options: {exc}")
    rows: list[dict[str, Any]] = []

    @settings(max_examples=1, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_images(SCHEMA))
    def draw(row: dict[str, Any]) -> None:
        rows.append(row)

    draw()
    seeds = _corpus_seeds(protocol) + _encoded_seeds(codec, rows[0])
    if not seeds:
        seeds = [Message(value=b'{"type": "INSERT", "data": [{"id": "1"}]}')]
    tried = assert_only_cdc_errors(codec.decoder, seeds, max_examples=150)
    assert tried >= 100


def test_every_codec_is_covered() -> None:
    assert "debezium" in CODECS
