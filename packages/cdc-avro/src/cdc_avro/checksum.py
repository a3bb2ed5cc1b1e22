"""Row-level checksum of TiCDC's Avro integrity mode (``enable-row-checksum``).

CRC-32/IEEE chained over the columns in field order, each contributing the bytes of its Avro datum:
integers, ENUM indexes, SET bitmasks and BIT values as 8-byte little-endian uint64; FLOAT/DOUBLE as the
little-endian bits of the float64 value; text, binary, temporal, DECIMAL and JSON as a 4-byte little-endian
length and the bytes; NULL contributes nothing. The mode requires string DECIMAL and BIGINT UNSIGNED.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, Final

from cdc_core.schema import Column
from cdc_core.textual import format_decimal, to_float32
from cdc_core.types import LogicalType

_U64: Final = struct.Struct("<Q")
_F64: Final = struct.Struct("<d")
_U32: Final = struct.Struct("<I")
_MASK: Final = (1 << 64) - 1

Contribution = Callable[[Any], bytes]


def _integer(datum: Any) -> bytes:
    return _U64.pack(int(datum) & _MASK)


def _float(datum: Any) -> bytes:
    value = float(datum)
    return _F64.pack(0.0 if math.isinf(value) or math.isnan(value) else value)


def _float32(datum: Any) -> bytes:
    # TiDB sums a FLOAT as the float64 of its 32-bit value, whichever decimal digits hold it here
    value = float(datum)
    return _F64.pack(0.0 if math.isinf(value) or math.isnan(value) else to_float32(value))


def _length_prefixed(data: bytes) -> bytes:
    return _U32.pack(len(data)) + data


def _text(datum: Any) -> bytes:
    return _length_prefixed(datum if isinstance(datum, bytes) else str(datum).encode("utf-8"))


def contribution_for(column: Column) -> Contribution:
    data_type = column.data_type
    logical = data_type.logical
    if logical in (LogicalType.INT, LogicalType.YEAR):
        return _integer
    if logical is LogicalType.FLOAT:
        return _float32
    if logical is LogicalType.DOUBLE:
        return _float
    if logical is LogicalType.BIT:
        return lambda datum: _U64.pack(int.from_bytes(datum, "big") & _MASK)
    if logical is LogicalType.ENUM:
        elements = data_type.elements or ()
        return lambda datum: _U64.pack(elements.index(datum) + 1 if datum in elements else 0)
    if logical is LogicalType.SET:
        elements = data_type.elements or ()

        def set_bits(datum: Any) -> bytes:
            names = str(datum).split(",") if datum else []
            return _U64.pack(sum(1 << elements.index(n) for n in names if n in elements))

        return set_bits
    if logical is LogicalType.DECIMAL:
        scale = data_type.scale
        return lambda datum: _text(format_decimal(datum, scale) if isinstance(datum, Decimal) else datum)
    return _text


def row_checksum(datums: Sequence[Any], contributions: Sequence[Contribution]) -> int:
    checksum = 0
    for datum, contribute in zip(datums, contributions, strict=True):
        if datum is not None:
            checksum = zlib.crc32(contribute(datum), checksum)
    return checksum
