"""The Debezium JSON change-event protocol, both directions (protocol id ``debezium``)."""

from cdc_debezium.codec import CODEC, OPTIONS
from cdc_debezium.decoder import DebeziumDecoder
from cdc_debezium.encoder import DebeziumEncoder

__all__ = ["CODEC", "OPTIONS", "DebeziumDecoder", "DebeziumEncoder"]
