"""Wire constants shared by the encoder and decoder: logical type names, versions, name sanitizing."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final

from cdc_core.naming import sanitize_name

PROTOCOL: Final = "debezium"
AVRO_PROTOCOL: Final = "debezium-avro"  # the same events as Kafka Connect's Avro converter writes them
DEBEZIUM_VERSION: Final = "2.4.0.Final"
TICDC_CONNECTOR: Final = "TiCDC"


class Logical(StrEnum):
    """Kafka Connect logical type names Debezium puts in field schemas."""

    DATE = "io.debezium.time.Date"
    TIMESTAMP = "io.debezium.time.Timestamp"
    MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
    NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp"
    ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
    TIME = "io.debezium.time.Time"
    MICRO_TIME = "io.debezium.time.MicroTime"
    NANO_TIME = "io.debezium.time.NanoTime"
    YEAR = "io.debezium.time.Year"
    BITS = "io.debezium.data.Bits"
    ENUM = "io.debezium.data.Enum"
    ENUM_SET = "io.debezium.data.EnumSet"
    JSON = "io.debezium.data.Json"
    VECTOR = "io.debezium.data.TiDBVectorFloat32"
    VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
    CONNECT_DECIMAL = "org.apache.kafka.connect.data.Decimal"
    CONNECT_DATE = "org.apache.kafka.connect.data.Date"
    CONNECT_TIME = "org.apache.kafka.connect.data.Time"
    CONNECT_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
    # Debezium PostgreSQL and MySQL/MariaDB types TiCDC never writes
    ZONED_TIME = "io.debezium.time.ZonedTime"
    ISO_DATE = "io.debezium.time.IsoDate"
    ISO_TIME = "io.debezium.time.IsoTime"
    ISO_TIMESTAMP = "io.debezium.time.IsoTimestamp"
    MICRO_DURATION = "io.debezium.time.MicroDuration"
    INTERVAL = "io.debezium.time.Interval"
    UUID = "io.debezium.data.Uuid"
    XML = "io.debezium.data.Xml"
    LTREE = "io.debezium.data.Ltree"
    TSVECTOR = "io.debezium.data.Tsvector"
    POINT = "io.debezium.data.geometry.Point"
    GEOMETRY = "io.debezium.data.geometry.Geometry"
    GEOGRAPHY = "io.debezium.data.geometry.Geography"
    DOUBLE_VECTOR = "io.debezium.data.DoubleVector"
    FLOAT_VECTOR = "io.debezium.data.FloatVector"


class WireOp(StrEnum):
    CREATE = "c"
    UPDATE = "u"
    DELETE = "d"
    READ = "r"
    TRUNCATE = "t"
    MESSAGE = "m"  # TiCDC watermark; PostgreSQL logical-decoding message when the payload has "message"


# column.propagate.source.type / datatype.propagate.source.type parameters
SOURCE_TYPE: Final = "__debezium.source.column.type"
SOURCE_LENGTH: Final = "__debezium.source.column.length"
SOURCE_SCALE: Final = "__debezium.source.column.scale"
SOURCE_NAME: Final = "__debezium.source.column.name"

_NOT_TOPIC: Final = re.compile(r"[^A-Za-z0-9_.]")


def sanitize_topic(name: str) -> str:
    return _NOT_TOPIC.sub("_", name)


def record_prefix(cluster: str, database: str, table: str) -> str:
    """``<cluster>.<db>.<table>`` as TiCDC names the Envelope, Value and Key schemas."""
    return f"{sanitize_name(cluster)}.{sanitize_name(database)}.{sanitize_topic(table)}"
