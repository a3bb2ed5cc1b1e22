"""Seed messages for fuzzing a decoder: the protocol's golden corpus messages, plus what its own encoder writes
for a kitchen-sink row (DDL, insert, update, delete). Shared by the hypothesis contract test in CI and the
coverage-guided atheris harness (``nox -s fuzz``).
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import HealthCheck, given, settings

from cdc_core.codec import Codec
from cdc_core.errors import CdcError
from cdc_core.events import DDLEvent, DDLType, Event, Op, RowChange
from cdc_core.message import Message
from cdc_testing.corpus import corpus_dir
from cdc_testing.strategies import kitchen_sink_schema, row_images

# Where each protocol's golden messages live under the corpus (``*/pkg/sink/codec/<folder>/``).
CORPUS_FOLDERS: Final = {"debezium": "debezium", "canal-json": "canal", "simple": "simple"}
SCHEMA: Final = kitchen_sink_schema()


def corpus_seeds(protocol: str) -> list[Message]:
    folder = CORPUS_FOLDERS.get(protocol)
    if folder is None:
        return []
    paths = sorted(corpus_dir().glob(f"*/pkg/sink/codec/{folder}/**/*.json"))
    return [Message(value=path.read_bytes()) for path in paths if "message.json" not in path.name]


def kitchen_sink_row() -> dict[str, Any]:
    """One deterministic row with a value in every column type of :func:`kitchen_sink_schema`."""
    rows: list[dict[str, Any]] = []

    @settings(max_examples=1, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_images(SCHEMA))
    def draw(row: dict[str, Any]) -> None:
        rows.append(row)

    draw()
    return rows[0]


def _events(row: dict[str, Any]) -> list[Event]:
    common: dict[str, Any] = {"database": SCHEMA.database, "table": SCHEMA.table, "commit_ts": 449_000_000_000_000_000}
    return [
        DDLEvent(ddl_type=DDLType.CREATE, sql="CREATE TABLE t (...)", table_schema=SCHEMA, **common),
        RowChange(op=Op.INSERT, after=row, schema=SCHEMA, **common),
        RowChange(op=Op.UPDATE, before=row, after=row, schema=SCHEMA, **common),
        RowChange(op=Op.DELETE, before=row, schema=SCHEMA, **common),
    ]


def encoded_seeds(
    codec: Codec, row: dict[str, Any] | None = None, options: dict[str, object] | None = None
) -> list[Message]:
    """What ``codec``'s encoder writes for the kitchen-sink events; empty when it needs configuration."""
    try:
        encoder = codec.encoder(options)
    except CdcError:  # a codec that needs configuration to encode (a registry, say)
        return []
    seeds: list[Message] = []
    for event in _events(kitchen_sink_row() if row is None else row):
        try:
            seeds.extend(encoder.encode(event))
        except CdcError:
            continue
    return [m for m in seeds if m.value is not None]


def seed_messages(codec: Codec, protocol: str, options: dict[str, object] | None = None) -> list[Message]:
    return corpus_seeds(protocol) + encoded_seeds(codec, options=options)
