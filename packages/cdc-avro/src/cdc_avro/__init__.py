"""The TiCDC Avro protocol with a Confluent-compatible Schema Registry, both directions (protocol id ``avro``)."""

from cdc_avro.codec import CODEC, OPTIONS
from cdc_avro.decoder import AvroDecoder
from cdc_avro.encoder import AvroEncoder
from cdc_avro.errors import RegistryRejectedError, RegistryUnavailableError
from cdc_avro.schemagen import SchemaOptions, key_record, value_record

__all__ = [
    "CODEC",
    "OPTIONS",
    "AvroDecoder",
    "AvroEncoder",
    "RegistryRejectedError",
    "RegistryUnavailableError",
    "SchemaOptions",
    "key_record",
    "value_record",
]
