"""One database workload streamed by several Debezium variants at once: what each wrote, and every state the
database went through meanwhile.

The workload's tables must include ``marks (id, mark)``: rows written there are the progress marks the run
waits for on every variant's ``<variant>.<schema>.marks`` topic (a mark streamed means everything before it
was). ``CDC_WRITE_CAPTURES=DIR`` also writes every variant's messages, marks left out, as message lines into
``DIR/<variant>.jsonl``, and for a variant written with the Avro converter the registry's schemas its messages
name, as ``DIR/<variant>.schemas.json`` (``{"<schema id>": "<schema text>"}``).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cdc_core.message import Message
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.connect import ConnectWorker
from cdc_testing.producers import (
    AVRO_CONVERTER,
    TableState,
    read_all,
    topics_with_prefix,
    wait_for_value,
    write_message_lines,
)

CAPTURES_ENV = "CDC_WRITE_CAPTURES"


class WorkloadRun:
    """What a module's producers wrote (messages per variant) and what the database said along the way."""

    def __init__(self, tables: Sequence[str], bootstrap: str, registry: ApicurioRegistry | None = None) -> None:
        self.tables = tuple(tables)
        self.bootstrap = bootstrap
        self.registry = registry  # where the Avro variants' schemas are
        self.states: dict[str, list[TableState]] = {t: [] for t in self.tables}
        self.columns: dict[tuple[str, str], dict[str, Any]] = {}  # (table, column) -> what the catalog says
        self.messages: dict[str, list[Message]] = {}

    def record(self, select: Callable[[str], TableState]) -> None:
        """Keep each table's state, as ``select(table)`` reads it, when it differs from the last one kept."""
        for table in self.tables:
            state = select(table)
            if not self.states[table] or self.states[table][-1] != state:
                self.states[table].append(state)


def stream_variants(
    run: WorkloadRun,
    worker: ConnectWorker,
    connectors: Mapping[str, Mapping[str, str]],
    steps: Sequence[Sequence[str]],
    *,
    execute: Callable[[str], object],
    record: Callable[[], None],
    schema: str,
) -> None:
    """Run ``steps`` (SQL statements, through ``execute``) under one connector per variant (``connectors``:
    variant name -> connector config) and keep what each wrote in ``run.messages``.

    The tables and snapshot rows must exist already. ``record()`` is called once before the connectors start and
    after each step. Every connector's snapshot has ended before the first step, and every connector has
    streamed the last step before its topics are read; the connectors are removed at the end.
    """
    execute("INSERT INTO marks VALUES (0, 'created')")
    record()
    for name, config in connectors.items():
        worker.add(name, config)
    # streaming starts after the snapshot: a mark streamed by every connector means its snapshot is done
    execute("INSERT INTO marks VALUES (1, 'snapshot-done')")
    for name in connectors:
        wait_for_value(run.bootstrap, f"{name}.{schema}.marks", b"snapshot-done")
    for step in steps:
        for statement in step:
            execute(statement)
        record()
    execute("INSERT INTO marks VALUES (2, 'workload-done')")
    for name in connectors:
        wait_for_value(run.bootstrap, f"{name}.{schema}.marks", b"workload-done")
        run.messages[name] = read_all(run.bootstrap, topics_with_prefix(run.bootstrap, name))
    for name in connectors:
        worker.remove(name)  # a PostgreSQL connector drops its replication slot (slot.drop.on.stop)
    captures = os.environ.get(CAPTURES_ENV)
    if captures:
        for name, config in connectors.items():
            kept = [m for m in run.messages[name] if not (m.topic or "").endswith(".marks")]
            write_message_lines(Path(captures) / f"{name}.jsonl", kept)
            if config.get("value.converter") == AVRO_CONVERTER and run.registry is not None:
                write_schemas(Path(captures) / f"{name}.schemas.json", run.registry, kept)


def write_schemas(path: Path, registry: ApicurioRegistry, messages: Iterable[Message]) -> int:
    """The registry's schema text of every schema id the Confluent-framed keys and values of ``messages`` name."""
    ids = sorted({struct.unpack(">I", data[1:5])[0] for m in messages for data in (m.key, m.value) if data})
    schemas = {str(i): registry.call("GET", f"/schemas/ids/{i}")["schema"] for i in ids}
    path.write_text(json.dumps(schemas, indent=1) + "\n", encoding="utf-8")
    return len(schemas)


__all__ = ["CAPTURES_ENV", "WorkloadRun", "stream_variants", "write_schemas"]
