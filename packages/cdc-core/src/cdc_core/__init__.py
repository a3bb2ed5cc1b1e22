"""cdc-core: typed change events, the MySQL/TiDB type system and the codec contract."""

from importlib.metadata import version

from cdc_core.codec import Codec, Decoder, Encoder, Options, OptionSpec, decode_all
from cdc_core.errors import (
    CdcError,
    ChecksumError,
    CodecNotFoundError,
    ConfigError,
    DecodeError,
    EncodeError,
    HeldRowsLimitError,
    LimitExceededError,
    SchemaError,
    StorageError,
)
from cdc_core.events import Bootstrap, DDLEvent, DDLType, Event, LogicalMessage, Op, RowChange, Source, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec, installed_codecs
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, LogicalType, MySQLType, parse_type_text
from cdc_core.values import EnumIndex, Geometry, SetBits, Value, ZeroTemporal

__version__ = version("cdc-core")  # the repository's VERSION file, through the package metadata

__all__ = [
    "Bootstrap",
    "CdcError",
    "ChecksumError",
    "Codec",
    "CodecNotFoundError",
    "Column",
    "ConfigError",
    "DDLEvent",
    "DDLType",
    "DataType",
    "DecodeError",
    "Decoder",
    "EncodeError",
    "Encoder",
    "EnumIndex",
    "Event",
    "Geometry",
    "HeldRowsLimitError",
    "Index",
    "LimitExceededError",
    "LogicalMessage",
    "LogicalType",
    "Message",
    "MySQLType",
    "Op",
    "OptionSpec",
    "Options",
    "RowChange",
    "SchemaError",
    "SetBits",
    "Source",
    "StorageError",
    "TableSchema",
    "Value",
    "Watermark",
    "ZeroTemporal",
    "__version__",
    "decode_all",
    "get_codec",
    "installed_codecs",
    "parse_type_text",
]
