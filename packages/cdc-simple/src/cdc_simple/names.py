"""Protocol constants of TiCDC's Simple protocol: message type names and the Avro schema names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from cdc_core.events import DDLType, Op

PROTOCOL: Final = "simple"
PROTOCOL_VERSION: Final = 1

WATERMARK: Final = "WATERMARK"
BOOTSTRAP: Final = "BOOTSTRAP"

DDL_TYPES: Final[Mapping[str, DDLType]] = {t.value: t for t in DDLType}
DML_TYPES: Final[Mapping[str, Op]] = {"INSERT": Op.INSERT, "UPDATE": Op.UPDATE, "DELETE": Op.DELETE}
DML_NAMES: Final[Mapping[Op, str]] = {op: name for name, op in DML_TYPES.items()}

# Avro: the top-level union of message.json; TiCDC always writes the last branch.
AVRO_NAMESPACE: Final = "com.pingcap.simple.avro"
AVRO_MESSAGE: Final = f"{AVRO_NAMESPACE}.Message"
AVRO_TIMESTAMP: Final = f"{AVRO_NAMESPACE}.Timestamp"
AVRO_UNSIGNED_BIGINT: Final = f"{AVRO_NAMESPACE}.UnsignedBigint"

# MessageType enum symbol -> payload record name (the payload union has the same order).
AVRO_PAYLOADS: Final[Mapping[str, str]] = {
    "WATERMARK": f"{AVRO_NAMESPACE}.Watermark",
    "BOOTSTRAP": f"{AVRO_NAMESPACE}.Bootstrap",
    "DDL": f"{AVRO_NAMESPACE}.DDL",
    "DML": f"{AVRO_NAMESPACE}.DML",
}

# Kafka's per-record overhead that TiCDC adds to key + value before comparing with max-message-bytes.
RECORD_OVERHEAD: Final = 36
