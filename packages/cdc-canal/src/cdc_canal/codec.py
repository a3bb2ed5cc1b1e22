"""The `Codec` registered as protocol ``canal-json`` and its options (TiCDC's sink-URI names)."""

from __future__ import annotations

from typing import Final

from cdc_canal.decoder import CanalDecoder
from cdc_canal.encoder import CanalEncoder
from cdc_canal.names import PROTOCOL
from cdc_core import largemessage
from cdc_core.codec import Codec, Options, OptionSpec

OPTIONS: Final = (
    *largemessage.OPTIONS,
    OptionSpec(
        name="time-zone",
        kind=str,
        default="UTC",
        help="zone of TIMESTAMP strings (TiCDC --tz of the changefeed, or the MySQL server zone for Canal)",
    ),
    OptionSpec(
        name="database.include",
        kind=str,
        default="",
        help="regular expression a database name must fully match to be decoded (empty: all)",
        for_encoder=False,
    ),
    OptionSpec(
        name="table.include",
        kind=str,
        default="",
        help="regular expression a table name must fully match to be decoded (empty: all)",
        for_encoder=False,
    ),
    OptionSpec(
        name="flavour",
        kind=str,
        default="ticdc",
        choices=("ticdc", "canal"),
        help="ticdc: TiCDC's Canal-JSON; canal: official Canal flat messages (partial old, full mysqlType)",
        for_decoder=False,
    ),
    OptionSpec(
        name="enable-tidb-extension",
        kind=bool,
        default=False,
        help="write _tidb (commitTs, onlyHandleKey, claimCheckLocation) and emit TIDB_WATERMARK messages",
        for_decoder=False,
    ),
    OptionSpec(
        name="content-compatible",
        kind=bool,
        default=False,
        help="full mysqlType definitions (enum('a','b'), int(10) unsigned); implies only-output-updated-columns",
        for_decoder=False,
    ),
    OptionSpec(
        name="only-output-updated-columns",
        kind=bool,
        default=False,
        help="update old keeps only the columns whose value changed",
        for_decoder=False,
    ),
    OptionSpec(
        name="delete-only-output-handle-key-columns",
        kind=bool,
        default=False,
        help="delete data, sqlType and mysqlType restricted to the handle-key columns",
        for_decoder=False,
    ),
    OptionSpec(
        name="max-message-bytes",
        kind=int,
        default=10 * 1024 * 1024,
        help="largest key + value + 36 bytes a message may have (TiCDC's limit); the decoder refuses larger values",
    ),
    OptionSpec(
        name="partition-num",
        kind=int,
        default=1,
        help="partitions of the topic: rows hash by table, watermarks go to every partition, DDL to 0",
        for_decoder=False,
    ),
)


def _decoder(options: Options) -> CanalDecoder:
    return CanalDecoder(options)


def _encoder(options: Options) -> CanalEncoder:
    return CanalEncoder(options)


CODEC: Final = Codec(
    name=PROTOCOL,
    description="Canal-JSON as TiCDC and Alibaba Canal write it",
    options=OPTIONS,
    make_decoder=_decoder,
    make_encoder=_encoder,
    package="cdc-canal",
)
