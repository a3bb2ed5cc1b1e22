"""The `Codec` registered as protocol ``canal-json`` and its options (TiCDC's sink-URI names)."""

from __future__ import annotations

from typing import Final

from cdc_canal.decoder import CanalDecoder
from cdc_canal.encoder import CanalEncoder
from cdc_canal.names import PROTOCOL
from cdc_core import largemessage
from cdc_core.codec import Codec
from cdc_core.option_table import decoding, encoding, max_message_bytes, partition_num, tidb_extension, time_zone

OPTIONS: Final = (
    *largemessage.OPTIONS,
    time_zone("zone of TIMESTAMP strings (TiCDC --tz of the changefeed, or the MySQL server zone for Canal)"),
    decoding(
        "database.include", str, "", "regular expression a database name must fully match to be decoded (empty: all)"
    ),
    decoding("table.include", str, "", "regular expression a table name must fully match to be decoded (empty: all)"),
    encoding(
        "flavour", str, "ticdc",
        "ticdc: TiCDC's Canal-JSON; canal: official Canal flat messages (partial old, full mysqlType)",
        choices=("ticdc", "canal"),
    ),
    tidb_extension("write _tidb (commitTs, onlyHandleKey, claimCheckLocation) and emit TIDB_WATERMARK messages"),
    encoding(
        "content-compatible", bool, False,
        "full mysqlType definitions (enum('a','b'), int(10) unsigned); implies only-output-updated-columns",
    ),
    encoding("only-output-updated-columns", bool, False, "update old keeps only the columns whose value changed"),
    encoding(
        "delete-only-output-handle-key-columns", bool, False,
        "delete data, sqlType and mysqlType restricted to the handle-key columns",
    ),
    max_message_bytes(
        "largest key + value + 36 bytes a message may have (TiCDC's limit); the decoder refuses larger values"
    ),
    partition_num("partitions of the topic: rows hash by table, watermarks go to every partition, DDL to 0"),
)  # fmt: skip

CODEC: Final = Codec(
    name=PROTOCOL,
    description="Canal-JSON as TiCDC and Alibaba Canal write it",
    options=OPTIONS,
    make_decoder=CanalDecoder,
    make_encoder=CanalEncoder,
    package="cdc-canal",
    watermarks=True,
)
