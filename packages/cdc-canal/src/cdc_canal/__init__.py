"""The Canal-JSON change-event protocol, both directions (protocol id ``canal-json``)."""

from cdc_canal.codec import CODEC, OPTIONS
from cdc_canal.decoder import CanalDecoder
from cdc_canal.encoder import CanalEncoder

__all__ = ["CODEC", "OPTIONS", "CanalDecoder", "CanalEncoder"]
