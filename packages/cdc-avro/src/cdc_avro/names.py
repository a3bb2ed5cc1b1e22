"""Names as TiCDC's Avro encoder spells them: record names, namespaces, field names and registry subjects."""

from __future__ import annotations

from typing import Final

from cdc_core.naming import sanitize_name

PROTOCOL: Final = "avro"
KEY_SUFFIX: Final = "-key"
VALUE_SUFFIX: Final = "-value"
DEFAULT_NAMESPACE: Final = "default"  # TiCDC's changefeed namespace unless configured otherwise

# Extension fields appended to value records (enable-tidb-extension, enable-row-checksum).
TIDB_OP: Final = "_tidb_op"
TIDB_COMMIT_TS: Final = "_tidb_commit_ts"
TIDB_PHYSICAL_TIME: Final = "_tidb_commit_physical_time"
TIDB_ROW_CHECKSUM: Final = "_tidb_row_level_checksum"
TIDB_CORRUPTED: Final = "_tidb_corrupted"
TIDB_CHECKSUM_VERSION: Final = "_tidb_checksum_version"
EXTENSION_FIELDS: Final = frozenset(
    {TIDB_OP, TIDB_COMMIT_TS, TIDB_PHYSICAL_TIME, TIDB_ROW_CHECKSUM, TIDB_CORRUPTED, TIDB_CHECKSUM_VERSION}
)


def sanitize_topic(topic: str) -> str:
    """The topic as it appears in subject names: dots replaced (the Kafka topic itself keeps them)."""
    return topic.replace(".", "_")


def record_namespace(database: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    return f"{sanitize_name(namespace)}.{sanitize_name(database)}"


def key_subject(topic: str) -> str:
    return sanitize_topic(topic) + KEY_SUFFIX


def value_subject(topic: str) -> str:
    return sanitize_topic(topic) + VALUE_SUFFIX
