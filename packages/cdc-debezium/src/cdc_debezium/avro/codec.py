"""The `Codec` registered as protocol ``debezium-avro`` and its options.

The registry options are cdc-core's, the same as protocol ``avro``'s; the others are the Debezium JSON codec's
that still mean something when every message carries its schema. Importable without the ``avro`` extra
(fastavro and cdc-core's registry client), so that ``cdc protocols`` lists the protocol everywhere; making a
decoder or encoder without them is a `ConfigError` naming the extra.
"""

from __future__ import annotations

from typing import Final

import attrs

from cdc_core.codec import Codec, Decoder, Encoder, Options, OptionSpec
from cdc_core.errors import ConfigError
from cdc_core.schema_registry import TUNING_OPTIONS, URL_OPTION, Registry, RegistrySettings
from cdc_debezium.codec import OPTIONS as JSON_OPTIONS
from cdc_debezium.names import AVRO_PROTOCOL

_JSON: Final = {spec.name: spec for spec in JSON_OPTIONS}

OPTIONS: Final = (
    attrs.evolve(URL_OPTION, help="Schema Registry URL (http or https, user:password@ for basic auth); required"),
    attrs.evolve(
        _JSON["enable-tidb-extension"],
        help="keep each column's tidb_type in connect.parameters and emit watermark (op m) messages",
    ),
    _JSON["output-old-value"],
    _JSON["cluster-id"],
    OptionSpec(
        name="topic.prefix",
        kind=str,
        default="",
        help="Debezium's topic prefix (default: cluster-id): rows go to <prefix>.<db>.<table>, DDL to <prefix>, "
        "watermarks to <prefix>.watermark; schemas are registered as <topic>-key and <topic>-value",
        for_decoder=False,
    ),
    _JSON["time-zone"],
    attrs.evolve(_JSON["binary.handling.mode"], help="how the producer wrote binary columns typed as string"),
    attrs.evolve(_JSON["table-schema"], help="file of canonical table schema JSON typing the named tables' columns"),
    *TUNING_OPTIONS,
)


def _registry(options: Options) -> Registry:
    if not options["schema-registry"]:
        raise ConfigError(f"{AVRO_PROTOCOL}: option schema-registry is required (the Schema Registry URL)")
    return Registry(RegistrySettings.of(options, AVRO_PROTOCOL))


def _missing_extra(exc: ImportError) -> ConfigError:
    return ConfigError(f"{AVRO_PROTOCOL} needs the avro extra: pip install 'cdc-debezium[avro]' ({exc})")


def _decoder(options: Options) -> Decoder:
    try:
        from cdc_debezium.avro.decoder import DebeziumAvroDecoder
    except ImportError as exc:
        raise _missing_extra(exc) from exc
    return DebeziumAvroDecoder(options, schemas=_registry(options))


def _encoder(options: Options) -> Encoder:
    try:
        from cdc_debezium.avro.encoder import DebeziumAvroEncoder
    except ImportError as exc:
        raise _missing_extra(exc) from exc
    return DebeziumAvroEncoder(options, registry=_registry(options))


CODEC: Final = Codec(
    name=AVRO_PROTOCOL,
    description="Debezium change events as Kafka Connect's Avro converter writes them, schemas in a Schema Registry",
    options=OPTIONS,
    make_decoder=_decoder,
    make_encoder=_encoder,
    package="cdc-debezium",
)
