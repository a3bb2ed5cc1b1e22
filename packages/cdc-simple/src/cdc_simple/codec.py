"""The `Codec` registered as protocol ``simple`` and its options (TiCDC's sink-URI and changefeed names)."""

from __future__ import annotations

from typing import Final

from cdc_core import largemessage
from cdc_core.codec import Codec, Options, OptionSpec
from cdc_core.limits import DEFAULT_LIMITS
from cdc_simple.decoder import SimpleDecoder
from cdc_simple.encoder import SimpleEncoder
from cdc_simple.names import PROTOCOL

OPTIONS: Final = (
    *largemessage.OPTIONS,
    OptionSpec(
        name="encoding-format",
        kind=str,
        default="json",
        choices=("json", "avro"),
        help="json: Go encoding/json text; avro: a bare Avro datum of the message.json union",
    ),
    OptionSpec(
        name="max-message-bytes",
        kind=int,
        default=10 * 1024 * 1024,
        help="largest value + 36 bytes a message may have (TiCDC's limit); the decoder refuses larger values",
    ),
    OptionSpec(
        name="integrity-check-level",
        kind=str,
        default="none",
        choices=("none", "correctness"),
        help="correctness: the encoder writes row checksums and the decoder verifies them (CRC-32 over the columns)",
    ),
    OptionSpec(
        name="time-zone",
        kind=str,
        default="UTC",
        help="TiCDC --tz: the zone TIMESTAMP values are written in (its name goes into location)",
        for_decoder=False,
    ),
    OptionSpec(
        name="send-bootstrap-interval-in-sec",
        kind=int,
        default=120,
        help="re-send a table's BOOTSTRAP after this many seconds (<= 0 disables bootstraps)",
        for_decoder=False,
    ),
    OptionSpec(
        name="send-bootstrap-in-msg-count",
        kind=int,
        default=10000,
        help="re-send a table's BOOTSTRAP after this many row messages (<= 0 disables bootstraps)",
        for_decoder=False,
    ),
    OptionSpec(
        name="send-bootstrap-to-all-partition",
        kind=bool,
        default=True,
        help="BOOTSTRAP goes to every partition of the topic (false: partition 0 only)",
        for_decoder=False,
    ),
    OptionSpec(
        name="partition-num",
        kind=int,
        default=1,
        help="partitions of the topic: rows hash by table, DDL/watermark/bootstrap go to every partition",
        for_decoder=False,
    ),
    OptionSpec(
        name="max-held-rows",
        kind=int,
        default=DEFAULT_LIMITS.max_held_rows,
        help="rows held waiting for their schema (BOOTSTRAP/DDL) before decoding fails with HeldRowsLimitError",
        for_encoder=False,
    ),
    OptionSpec(
        name="max-held-bytes",
        kind=int,
        default=DEFAULT_LIMITS.max_held_bytes,
        help="bytes of held rows before decoding fails with HeldRowsLimitError",
        for_encoder=False,
    ),
    OptionSpec(
        name="handle-key-resolver",
        kind=str,
        default="",
        help="module:callable turning handle-key-only rows into full rows (e.g. by querying the upstream TiDB)",
        for_encoder=False,
    ),
)


def _decoder(options: Options) -> SimpleDecoder:
    return SimpleDecoder(options)


def _encoder(options: Options) -> SimpleEncoder:
    return SimpleEncoder(options)


CODEC: Final = Codec(
    name=PROTOCOL,
    description="TiCDC's Simple protocol (JSON or Avro) with BOOTSTRAP-driven schemas",
    options=OPTIONS,
    make_decoder=_decoder,
    make_encoder=_encoder,
    package="cdc-simple",
)
