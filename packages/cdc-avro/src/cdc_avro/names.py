"""Names as TiCDC's Avro encoder spells them: record names, namespaces, field names and registry subjects."""

from __future__ import annotations

from typing import Final

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


def _allowed(ch: str) -> bool:
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9")


def sanitize_name(name: str) -> str:
    """Avro-safe name: a leading digit gets a ``_`` prefix, every other disallowed character becomes ``_``.

    Go iterates runes, so one non-ASCII character becomes one underscore (``中文`` -> ``__``).
    """
    out: list[str] = []
    for i, ch in enumerate(name):
        if i == 0 and "0" <= ch <= "9":
            out.append("_" + ch)
        elif _allowed(ch):
            out.append(ch)
        else:
            out.append("_")
    return "".join(out)


def sanitize_topic(topic: str) -> str:
    """The topic as it appears in subject names: dots replaced (the Kafka topic itself keeps them)."""
    return topic.replace(".", "_")


def record_namespace(database: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    return f"{sanitize_name(namespace)}.{sanitize_name(database)}"


def key_subject(topic: str) -> str:
    return sanitize_topic(topic) + KEY_SUFFIX


def value_subject(topic: str) -> str:
    return sanitize_topic(topic) + VALUE_SUFFIX
