"""The `Codec` registered as protocol ``simple`` and its options (TiCDC's sink-URI and changefeed names)."""

from __future__ import annotations

from typing import Final

from cdc_core import largemessage
from cdc_core.codec import Codec
from cdc_core.limits import DEFAULT_LIMITS
from cdc_core.option_table import decoding, encoding, max_message_bytes, option, partition_num, time_zone
from cdc_simple.decoder import SimpleDecoder
from cdc_simple.encoder import SimpleEncoder
from cdc_simple.names import PROTOCOL

OPTIONS: Final = (
    *largemessage.OPTIONS,
    option(
        "encoding-format", str, "json",
        "json: Go encoding/json text; avro: a bare Avro datum of the message.json union", choices=("json", "avro"),
    ),
    max_message_bytes(
        "largest value + 36 bytes a message may have (TiCDC's limit); the decoder refuses larger values"
    ),
    option(
        "integrity-check-level", str, "none",
        "correctness: the encoder writes row checksums and the decoder verifies them (CRC-32 over the columns)",
        choices=("none", "correctness"),
    ),
    time_zone("TiCDC --tz: the zone TIMESTAMP values are written in (its name goes into location)", side="encode"),
    encoding(
        "send-bootstrap-interval-in-sec", int, 120,
        "re-send a table's BOOTSTRAP after this many seconds (<= 0 disables bootstraps)",
    ),
    encoding(
        "send-bootstrap-in-msg-count", int, 10000,
        "re-send a table's BOOTSTRAP after this many row messages (<= 0 disables bootstraps)",
    ),
    encoding(
        "send-bootstrap-to-all-partition", bool, True,
        "BOOTSTRAP goes to every partition of the topic (false: partition 0 only)",
    ),
    partition_num("partitions of the topic: rows hash by table, DDL/watermark/bootstrap go to every partition"),
    decoding(
        "max-held-rows", int, DEFAULT_LIMITS.max_held_rows,
        "rows held waiting for their schema (BOOTSTRAP/DDL) before decoding fails with HeldRowsLimitError",
    ),
    decoding(
        "max-held-bytes", int, DEFAULT_LIMITS.max_held_bytes,
        "bytes of held rows before decoding fails with HeldRowsLimitError",
    ),
    decoding(
        "handle-key-resolver", str, "",
        "module:callable turning handle-key-only rows into full rows (e.g. by querying the upstream TiDB)",
    ),
)  # fmt: skip

CODEC: Final = Codec(
    name=PROTOCOL,
    description="TiCDC's Simple protocol (JSON or Avro) with BOOTSTRAP-driven schemas",
    options=OPTIONS,
    make_decoder=SimpleDecoder,
    make_encoder=SimpleEncoder,
    package="cdc-simple",
    watermarks=True,
)
