"""TiCDC's large-message settings (``[sink.kafka-config.large-message-handle]``), declared once for every codec
that has them (Simple, Canal-JSON), with TiCDC's names, defaults and choices.
"""

from __future__ import annotations

from typing import Final

from cdc_core.codec import OptionSpec

HANDLE_OPTION: Final = OptionSpec(
    name="large-message-handle-option",
    kind=str,
    default="none",
    choices=("none", "handle-key-only", "claim-check"),
    help="rows over max-message-bytes: fail, keep only the handle-key columns, or store the full message in"
    " claim-check storage and send its location",
    for_decoder=False,
)
COMPRESSION: Final = OptionSpec(
    name="large-message-handle-compression",
    kind=str,
    default="none",
    choices=("none", "snappy", "lz4"),
    help="every message value compressed (snappy block, lz4 frame), with or without large-message handling;"
    " nothing on the wire says so: the decoder must be given the producer's setting",
)
CLAIM_CHECK_STORAGE: Final = OptionSpec(
    name="claim-check-storage-uri",
    kind=str,
    default="",
    help="claim-check storage (file://, or s3://, gs://, ... with cdc-core[fsspec]): the encoder writes full"
    " messages there, the decoder reads a location's base name from it",
)
CLAIM_CHECK_RAW: Final = OptionSpec(
    name="claim-check-raw-value",
    kind=bool,
    default=False,
    help="claim-check files hold the raw message instead of the {key, value} JSON wrapper",
)
OPTIONS: Final = (HANDLE_OPTION, COMPRESSION, CLAIM_CHECK_STORAGE, CLAIM_CHECK_RAW)
