"""TiCDC's Simple protocol in its JSON and Avro encodings, both directions (protocol id ``simple``)."""

from cdc_simple.cache import HeldSummary, SchemaCache
from cdc_simple.codec import CODEC, OPTIONS
from cdc_simple.decoder import SimpleDecoder
from cdc_simple.encoder import SimpleEncoder
from cdc_simple.resolver import HandleKeyResolver

__all__ = ["CODEC", "OPTIONS", "HandleKeyResolver", "HeldSummary", "SchemaCache", "SimpleDecoder", "SimpleEncoder"]
