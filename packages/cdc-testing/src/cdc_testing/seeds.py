"""Seed messages for fuzzing a decoder: the protocol's golden corpus messages, plus what its own encoder writes
for a kitchen-sink row (DDL, insert, update, delete). Shared by the hypothesis contract test in CI and the
coverage-guided atheris harness (``nox -s fuzz``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
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


# Hand-picked values at the edges of their types (the largest unsigned integers and BIT(64), TIME at -838 h, a
# leap day, text with markup and non-ASCII, a scaled DECIMAL), every other kitchen-sink column null: the row the
# protocol fuzz tests seed their encoders with, next to the drawn one of :func:`kitchen_sink_row`.
EDGE_VALUES: Final[dict[str, Any]] = {
    "id": 7,
    "c_int_u": 4294967295,
    "c_bigint_u": 18446744073709551615,
    "c_float": 1.5,
    "c_decimal": Decimal("12.3400"),
    "c_date": dt.date(2024, 2, 29),
    "c_datetime_6": dt.datetime(2024, 2, 29, 1, 2, 3, 456789),
    "c_timestamp_6": dt.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC),
    "c_time_3": dt.timedelta(hours=-838, seconds=-1),
    "c_varchar": "héllo <b>",
    "c_blob": bytes(range(20)),
    "c_enum": "green",
    "c_set": ("x", "z"),
    "c_bit_12": 4095,
    "c_bit_64": (1 << 64) - 1,
    "c_json": {"k": [1, "two", None]},
}


def edge_row() -> dict[str, Any]:
    """:data:`EDGE_VALUES` as a full row of the kitchen-sink schema (:data:`SCHEMA`)."""
    return {c.name: EDGE_VALUES.get(c.name) for c in SCHEMA.columns}


def edge_changes(commit_ts: int) -> list[RowChange]:
    """An UPDATE of :func:`edge_row` (``c_int_u`` changed) and its DELETE, at ``commit_ts``."""
    row = edge_row()
    common: dict[str, Any] = {"database": SCHEMA.database, "table": SCHEMA.table, "commit_ts": commit_ts}
    return [
        RowChange(op=Op.UPDATE, before=row, after={**row, "c_int_u": 1}, schema=SCHEMA, **common),
        RowChange(op=Op.DELETE, before=row, schema=SCHEMA, **common),
    ]


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
