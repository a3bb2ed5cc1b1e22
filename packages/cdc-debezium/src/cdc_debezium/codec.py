"""The `Codec` registered as protocol ``debezium`` and its options (TiCDC's and Debezium's own names)."""

from __future__ import annotations

from typing import Final

from cdc_core.codec import Codec
from cdc_core.fitting import UNKNOWN_PARAMETERS_OPTION
from cdc_core.option_table import decoding, encoding, tidb_extension, time_zone
from cdc_debezium.connector_modes import BinaryMode, DecimalMode, TimePrecisionMode
from cdc_debezium.decoder import DebeziumDecoder
from cdc_debezium.encoder import DebeziumEncoder
from cdc_debezium.names import PROTOCOL

OPTIONS: Final = (
    tidb_extension("write tidb_type in column schemas and emit watermark (op m) messages"),
    encoding("debezium-disable-schema", bool, False, "omit the schema member of keys and values"),
    encoding("output-old-value", bool, True, "[sink.debezium] output-old-value: write the before image of updates"),
    encoding(
        "cluster-id", str, "default", "TiCDC cluster id: source.name, source.cluster_id and the schema name prefix"
    ),
    time_zone("encoder: zone of naive TIMESTAMP values; decoder: zone TIMESTAMP values are returned in"),
    UNKNOWN_PARAMETERS_OPTION,
    decoding(
        "decimal.handling.mode", str, DecimalMode.DOUBLE.value,
        "how the producer wrote DECIMAL when no field schema says (precise needs a table-schema)",
        choices=tuple(m.value for m in DecimalMode),
    ),
    decoding(
        "binary.handling.mode", str, BinaryMode.BASE64.value, "how the producer wrote binary strings typed as string",
        choices=tuple(m.value for m in BinaryMode),
    ),
    decoding(
        "time.precision.mode", str, TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS.value,
        "how the producer wrote DATETIME/TIME when no field schema says",
        choices=tuple(m.value for m in TimePrecisionMode),
    ),
    decoding(
        "table-schema", str, "", "file of canonical table schema JSON (object or array) typing schemaless streams"
    ),
    decoding(
        "untyped-columns", str, "text",
        "a schemaless row of a table no table-schema types: every column text, or a DecodeError (strict)",
        choices=("text", "reject"),
    ),
)  # fmt: skip

CODEC: Final = Codec(
    name=PROTOCOL,
    description="Debezium JSON as TiCDC, Debezium (MySQL connector) and dtle write it",
    options=OPTIONS,
    make_decoder=DebeziumDecoder,
    make_encoder=DebeziumEncoder,
    package="cdc-debezium",
    watermarks=True,
)
