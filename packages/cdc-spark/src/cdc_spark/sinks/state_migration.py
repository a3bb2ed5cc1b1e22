"""SCD1 state from before the shared key state: moved into it the first time a table is written.

Earlier versions kept each SCD1 table's key state in a table of its own (the format's ``state(table)``: the key
columns, then the bookkeeping) and its truncate floor in that table's ``cdc.truncated-before`` property. Before a
batch of a sink touches such a table, its rows are MERGEd into the key state under the table's name and key
texts, its floor becomes the table's floor row, and the old table is marked as moved. The MERGE matches on table
and key, so a move cut short by a crash is simply done again; nothing else reads the old table afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final

from cdc_spark.merge import scd1
from cdc_spark.merge.batch import Sequence
from cdc_spark.merge.columns import COLUMN_SEQUENCES, DELETED_AT, IMAGE_SEQUENCE, KEY, SEQUENCE, TABLE, TRUNCATED_BEFORE
from cdc_spark.merge.keys import key_text
from cdc_spark.merge.statements import key_state_merge, set_properties

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

    from cdc_spark.merge.spec import ApplySpec
    from cdc_spark.sinks.batch_write import BatchWrite

MOVED: Final = "cdc.moved-to-key-state"


def move_old_states(
    write: BatchWrite,
    specs: Iterable[ApplySpec],
    state: str,
    seq_type: DataType,
    listing: Callable[[Iterable[str]], None],
) -> list[str]:
    """Move the SCD1 state tables of ``specs``' tables that an earlier version wrote into the key state ``state``
    (which exists); returns the tables moved. ``listing`` is told of a table before its floor row is written."""
    from pyspark.sql import functions as F

    moved: list[str] = []
    for spec in specs:
        old = write.format.state(spec.table)
        info = write.format.describe(old, None)
        if info is None or info.properties.get(MOVED) == "true" or SEQUENCE not in info.schema.names:
            continue
        stored = write.spark.table(old)
        rows = stored.select(
            F.lit(spec.table).alias(TABLE),
            key_text([stored.schema[k] for k in spec.keys]).alias(KEY),
            F.col(SEQUENCE).cast(seq_type).alias(SEQUENCE),
            DELETED_AT,
            F.col(IMAGE_SEQUENCE).cast(seq_type).alias(IMAGE_SEQUENCE),
            F.col(COLUMN_SEQUENCES)
            .cast(scd1.state_schema(seq_type)[COLUMN_SEQUENCES].dataType)
            .alias(COLUMN_SEQUENCES),
        )
        floor = info.properties.get(TRUNCATED_BEFORE)
        if floor is not None:
            listing([spec.table])
            rows = rows.unionByName(scd1.floor_row(write.spark, spec.table, Sequence(floor, seq_type), seq_type))
        # checkpointed: Iceberg's MERGE cannot plan a source that reads a catalog table through a temporary view
        write.merge(state, rows.localCheckpoint(), key_state_merge([spec.table]).sql, None)
        write.spark.sql(set_properties(old, {MOVED: "true"}))
        moved.append(spec.table)
    return moved


__all__ = ["MOVED", "move_old_states"]
