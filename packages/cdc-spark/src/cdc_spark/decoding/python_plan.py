"""The ``python`` plan: every message decoded by the protocol's codec in the executors (the JVM path's reference);
and the ``driver`` plan: the same codec on the driver, over the batch's messages collected in one job, its typed
rows handed to Spark as local relations (a small batch: no Python worker, no repartition, no cached rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cdc_core.schema import TableSchema
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.python_path import SEED_RANK, PythonPath, Rank, assemble, held_messages, newest
from cdc_spark.decoding.steps import Steps
from cdc_spark.partition_clock import PartitionKey

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def decode(
    df: DataFrame,
    protocol: str,
    options: Mapping[str, object],
    schemas: Mapping[tuple[str, str], TableSchema],
    *,
    partition_ts: Mapping[PartitionKey, int],
    known_versions: Sequence[TableSchema],
    time_as: str,
    on_driver: bool = False,
) -> DecodedChanges:
    steps = Steps()
    with steps.timed("codec"):
        held = held_messages(df) if on_driver else None
        python = PythonPath.run(df, protocol, options, [*known_versions, *schemas.values()], held,
                                partition_ts=partition_ts)  # fmt: skip
    candidates: dict[tuple[str, str], list[tuple[Rank, TableSchema]]] = {
        name: [(SEED_RANK, schema)] for name, schema in schemas.items()
    }
    for name, ranked in python.first.schemas().items():
        candidates.setdefault(name, []).append(ranked)
    final = newest(candidates)
    with steps.timed("codec"):
        result = assemble(python, [final[name][1] for name in sorted(final)], partition_ts)
    parts = {name: [part] for name, part in result.parts.items()}
    schemas_out = {name: schema for name, (_, schema) in final.items()}
    return DecodedChanges(
        df.sparkSession,
        parts,
        schemas_out,
        [result.control],
        result.dead,
        result.clock,
        list(result.cached),
        time_as,
        paths={"jvm": 0, "codec": result.messages},
        steps=steps.seconds,
        dead_count=result.dead_count,
    )


__all__ = ["decode"]
