"""Names of the columns apply adds: bookkeeping in the state tables, flags in the merge sources, metadata.

Target tables hold the source table's columns only (SCD2 adds ``__start_at``/``__end_at``, and the metadata
columns the user asks for). Everything else lives in the state table beside each target.
"""

from __future__ import annotations

from typing import Final

from cdc_core.errors import ConfigError

# State of an SCD1 key (one key state per sink: rows by table and key text)
TABLE: Final = "__cdc_table"  # database.table
KEY: Final = "__cdc_key"  # the key's text (cdc_spark.merge.keys); the empty text keeps the table's truncate floor
FLOOR_KEY: Final = ""
SEQUENCE: Final = "__cdc_sequence"  # the newest change applied to the key (any operation)
DELETED_AT: Final = "__cdc_deleted_at"  # the key is a tombstone since then (null: the row is live)
IMAGE_SEQUENCE: Final = "__cdc_image_sequence"  # newest full image (insert, delete, full update); null: SEQUENCE
COLUMN_SEQUENCES: Final = "__cdc_column_sequences"  # column -> partial update newer than the image; null: none

# SCD2 versions (targets show START_AT/END_AT; the state also keeps the sequences that order them)
START_AT: Final = "__start_at"
END_AT: Final = "__end_at"
START_SEQUENCE: Final = "__cdc_start_sequence"
END_SEQUENCE: Final = "__cdc_end_sequence"

# Merge-source columns (never stored)
ACTION: Final = "__cdc_action"  # SCD1 target: 'upsert' or 'delete'
WAS_LIVE: Final = "__cdc_was_live"  # SCD1: the target held the key's row before the batch
WRITE_PREFIX: Final = "__cdc_write__"  # SCD1 target: write this column (else keep the stored value)
DROP: Final = "__cdc_drop"  # SCD2: a stored version that no longer exists
ORDER: Final = "__cdc_order"  # struct(sequence, tiebreak): a total order of the changes of a key
TIME: Final = "__cdc_time"  # the commit time of a change (SCD2 bounds)
HIDDEN_PREFIX: Final = "__cdc_"

# Table properties of a state table
TRUNCATED_BEFORE: Final = "cdc.truncated-before"  # SCD2: JSON {"v": sequence} of the latest truncate
PURGED_AT: Final = "cdc.tombstones-purged-at"  # ISO time of the last tombstone purge
# SCD1 key state: JSON list of the tables that may have a truncate floor row (a superset: written before the rows)
FLOOR_TABLES: Final = "cdc.floor-tables"

# --metadata-columns NAME -> the change-frame columns written to the target under the same names
METADATA: Final = {
    "commit_ts": ("_cdc_commit_ts",),
    "op": ("_cdc_op",),
    "offset": ("_cdc_topic", "_cdc_partition", "_cdc_offset"),
    "schema_version": ("_cdc_schema_version",),
}


def metadata_columns(names: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The change-frame columns for ``--metadata-columns commit_ts,op,offset`` (a comma list or names)."""
    if not names:
        return ()
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    columns: list[str] = []
    for name in (n for n in wanted if n):
        if name not in METADATA:
            raise ConfigError(f"metadata column {name!r}: expected some of {', '.join(METADATA)}")
        columns += [c for c in METADATA[name] if c not in columns]
    return tuple(columns)


__all__ = [
    "ACTION",
    "COLUMN_SEQUENCES",
    "DELETED_AT",
    "DROP",
    "END_AT",
    "END_SEQUENCE",
    "FLOOR_KEY",
    "FLOOR_TABLES",
    "HIDDEN_PREFIX",
    "IMAGE_SEQUENCE",
    "KEY",
    "METADATA",
    "ORDER",
    "PURGED_AT",
    "SEQUENCE",
    "START_AT",
    "START_SEQUENCE",
    "TABLE",
    "TIME",
    "TRUNCATED_BEFORE",
    "WAS_LIVE",
    "WRITE_PREFIX",
    "metadata_columns",
]
