"""Resident memory over a long decode stream, for every installed protocol (Avro through a real registry).

Each protocol's own encoder writes inserts of the kitchen-sink row (every column type) for 50 tables (Simple adds
its bootstraps); the decoder then reads that set over and over, ``CDC_BENCH_MESSAGES`` messages in all (10^5 by
default, 10^6 for the closing figures). Current RSS is sampled at each fifth of the stream: a decoder whose
caches are bounded stays flat after the first fifth.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.errors import CdcError
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import installed_codecs
from cdc_testing.seeds import SCHEMA, kitchen_sink_row

TABLES = 50
PROTOCOLS = sorted(installed_codecs())


def _rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _options(protocol: str, request: pytest.FixtureRequest) -> dict[str, object]:
    if protocol != "avro":
        return {}
    registry = request.getfixturevalue("schema_registry")  # cdc-testing's Apicurio Registry
    return {"schema-registry": registry.url}


def _messages(protocol: str, options: dict[str, object]) -> list[Message]:
    try:
        encoder = installed_codecs()[protocol].encoder(options)
    except CdcError:
        pytest.skip(f"{protocol} needs a service to encode")
    row = kitchen_sink_row()
    out: list[Message] = []
    for number in range(TABLES):
        schema = attrs.evolve(SCHEMA, table=f"{SCHEMA.table}_{number}")
        change = RowChange(op=Op.INSERT, database=schema.database, table=schema.table, after=row, schema=schema,
                           commit_ts=449_000_000_000_000_000 + number)  # fmt: skip
        out += [m for m in encoder.encode(change) if m.value is not None]
    return out


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_memory_stays_flat_over_a_long_stream(benchmark: Any, protocol: str, request: pytest.FixtureRequest) -> None:
    options = _options(protocol, request)
    try:
        decoder = installed_codecs()[protocol].decoder(options)
    except CdcError:
        pytest.skip(f"{protocol} needs a service to decode")
    messages = _messages(protocol, options)
    count = int(os.environ.get("CDC_BENCH_MESSAGES", "100000"))
    marks: list[float] = []

    def stream() -> None:
        for i in range(count):
            source = messages[i % len(messages)]
            decoder.decode(attrs.evolve(source, topic="bench", partition=0, offset=i))
            if i % (count // 5) == 0:
                marks.append(_rss_mib())
        marks.append(_rss_mib())

    benchmark.pedantic(stream, rounds=1, iterations=1)
    growth = marks[-1] - marks[1]
    print(
        f"\n{protocol}: {count:,} messages decoded; RSS MiB at 0/20/40/60/80/100 %: "
        + ", ".join(f"{m:.0f}" for m in marks)
        + f"; growth after the first fifth {growth:+.1f} MiB"
    )
