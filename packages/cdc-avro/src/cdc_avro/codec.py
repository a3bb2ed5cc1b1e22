"""The `Codec` registered as protocol ``avro`` and its options (TiCDC's sink-URI names where TiCDC has one)."""

from __future__ import annotations

from typing import Final

from cdc_avro.decoder import AvroDecoder
from cdc_avro.encoder import AvroEncoder
from cdc_avro.names import DEFAULT_NAMESPACE, PROTOCOL
from cdc_avro.schemagen import SchemaOptions
from cdc_avro.tidbtypes import BigintUnsignedMode, DecimalMode
from cdc_core.codec import Codec, Options
from cdc_core.errors import ConfigError
from cdc_core.fitting import UNKNOWN_PARAMETERS_OPTION, UnknownParameterMode
from cdc_core.option_table import (
    decoding,
    encoding,
    max_message_bytes,
    partition_num,
    tidb_extension,
    time_zone,
)
from cdc_core.schema_registry import TUNING_OPTIONS, URL_OPTION, Registry, RegistrySettings
from cdc_core.textual import resolve_zone

OPTIONS: Final = (
    URL_OPTION,
    tidb_extension("append _tidb_op, _tidb_commit_ts and _tidb_commit_physical_time to value records"),
    encoding(
        "avro-decimal-handling-mode", str, DecimalMode.PRECISE.value,
        "DECIMAL as bytes with the decimal logical type (precise) or as TiDB's text (string)",
        choices=tuple(m.value for m in DecimalMode),
    ),
    UNKNOWN_PARAMETERS_OPTION,
    encoding(
        "avro-bigint-unsigned-handling-mode", str, BigintUnsignedMode.LONG.value,
        "BIGINT UNSIGNED as two's-complement long or as decimal text (string)",
        choices=tuple(m.value for m in BigintUnsignedMode),
    ),
    encoding(
        "enable-row-checksum", bool, False,
        "add the row checksum fields (needs enable-tidb-extension and both handling modes string)",
    ),
    encoding(
        "avro-enable-watermark", bool, False,
        "TiCDC's testing switch: also write DDL (0x01) and watermark (0x02) messages (needs the extension)",
    ),
    time_zone("TiCDC server zone: TIMESTAMP values are written and read as local time in it"),
    encoding(
        "topic", str, "tidb_{schema}_{table}",
        "topic expression; must contain {schema} and {table} (one registry subject per table)",
    ),
    encoding("namespace", str, DEFAULT_NAMESPACE, "changefeed namespace: first part of the record namespace"),
    partition_num("partitions of each topic"),
    encoding(
        "partition", str, "default", "dispatcher partition rule",
        choices=("default", "table", "index-value", "rowid", "ts"),
    ),
    max_message_bytes(
        "largest Kafka record (key + value + 36 bytes); a larger row is an error, as in TiCDC", side="encode"
    ),
    *TUNING_OPTIONS,
    decoding(
        "glue-schema-dir", str, "", "directory of <schema-version-uuid>.avsc files for AWS Glue-framed data"
    ),
)  # fmt: skip


def _settings(options: Options) -> RegistrySettings:
    return RegistrySettings.of(options, PROTOCOL)


def _decoder(options: Options) -> AvroDecoder:
    registry = Registry(_settings(options)) if options["schema-registry"] else None
    if registry is None and not options["glue-schema-dir"]:
        raise ConfigError("avro: option schema-registry is required (or glue-schema-dir for Glue-framed data)")
    return AvroDecoder(registry=registry, zone=resolve_zone(options["time-zone"]), glue_dir=options["glue-schema-dir"])


def _encoder(options: Options) -> AvroEncoder:
    decimal_mode = DecimalMode(options["avro-decimal-handling-mode"])
    bigint_mode = BigintUnsignedMode(options["avro-bigint-unsigned-handling-mode"])
    extension: bool = options["enable-tidb-extension"]
    checksum: bool = options["enable-row-checksum"]
    if checksum and not (extension and decimal_mode is DecimalMode.STRING and bigint_mode is BigintUnsignedMode.STRING):
        raise ConfigError(
            "avro: enable-row-checksum needs enable-tidb-extension=true, avro-decimal-handling-mode=string "
            "and avro-bigint-unsigned-handling-mode=string"
        )
    topic: str = options["topic"]
    if "{schema}" not in topic or "{table}" not in topic:
        raise ConfigError(f"avro: topic {topic!r} must contain {{schema}} and {{table}} (one subject per table)")
    if options["partition-num"] < 1:
        raise ConfigError("avro: partition-num must be at least 1")
    return AvroEncoder(
        registry=Registry(_settings(options)),
        schema_options=SchemaOptions(
            decimal_mode=decimal_mode,
            bigint_mode=bigint_mode,
            tidb_extension=extension,
            row_checksum=checksum,
            namespace=options["namespace"],
        ),
        zone=resolve_zone(options["time-zone"]),
        topic_template=topic,
        partitions=options["partition-num"],
        dispatcher=options["partition"],
        enable_watermark=options["avro-enable-watermark"],
        max_message_bytes=options["max-message-bytes"],
        unknown_parameters=UnknownParameterMode(options["unknown-parameters"]),
    )


CODEC: Final = Codec(
    name=PROTOCOL,
    description="TiCDC Avro: Confluent-framed key and value records, schemas in a Confluent Schema Registry",
    options=OPTIONS,
    make_decoder=_decoder,
    make_encoder=_encoder,
    package="cdc-avro",
    keyed_deletes=True,
    watermarks=True,
)
