"""The `Codec` registered as protocol ``debezium`` and its options (TiCDC's and Debezium's own names)."""

from __future__ import annotations

from typing import Final

from cdc_core.codec import Codec, Options, OptionSpec
from cdc_debezium.decoder import DebeziumDecoder
from cdc_debezium.encoder import DebeziumEncoder
from cdc_debezium.inbound import BinaryMode, DecimalMode, TimePrecisionMode
from cdc_debezium.names import PROTOCOL

OPTIONS: Final = (
    OptionSpec(
        name="enable-tidb-extension",
        kind=bool,
        default=False,
        help="write tidb_type in column schemas and emit watermark (op m) messages",
        for_decoder=False,
    ),
    OptionSpec(
        name="debezium-disable-schema",
        kind=bool,
        default=False,
        help="omit the schema member of keys and values",
        for_decoder=False,
    ),
    OptionSpec(
        name="output-old-value",
        kind=bool,
        default=True,
        help="[sink.debezium] output-old-value: write the before image of updates",
        for_decoder=False,
    ),
    OptionSpec(
        name="cluster-id",
        kind=str,
        default="default",
        help="TiCDC cluster id: source.name, source.cluster_id and the schema name prefix",
        for_decoder=False,
    ),
    OptionSpec(
        name="time-zone",
        kind=str,
        default="UTC",
        help="encoder: zone of naive TIMESTAMP values; decoder: zone TIMESTAMP values are returned in",
    ),
    OptionSpec(
        name="decimal.handling.mode",
        kind=str,
        default=DecimalMode.DOUBLE.value,
        choices=tuple(m.value for m in DecimalMode),
        help="how the producer wrote DECIMAL when no field schema says (precise needs a table-schema)",
        for_encoder=False,
    ),
    OptionSpec(
        name="binary.handling.mode",
        kind=str,
        default=BinaryMode.BASE64.value,
        choices=tuple(m.value for m in BinaryMode),
        help="how the producer wrote binary strings typed as string",
        for_encoder=False,
    ),
    OptionSpec(
        name="time.precision.mode",
        kind=str,
        default=TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS.value,
        choices=tuple(m.value for m in TimePrecisionMode),
        help="how the producer wrote DATETIME/TIME when no field schema says",
        for_encoder=False,
    ),
    OptionSpec(
        name="table-schema",
        kind=str,
        default="",
        help="file of canonical table schema JSON (object or array) typing schemaless streams",
        for_encoder=False,
    ),
    OptionSpec(
        name="untyped-columns",
        kind=str,
        default="text",
        choices=("text", "reject"),
        help="a schemaless row of a table no table-schema types: every column text, or a DecodeError (strict)",
        for_encoder=False,
    ),
)


def _decoder(options: Options) -> DebeziumDecoder:
    return DebeziumDecoder(options)


def _encoder(options: Options) -> DebeziumEncoder:
    return DebeziumEncoder(options)


CODEC: Final = Codec(
    name=PROTOCOL,
    description="Debezium JSON as TiCDC, Debezium (MySQL connector) and dtle write it",
    options=OPTIONS,
    make_decoder=_decoder,
    make_encoder=_encoder,
    package="cdc-debezium",
)
