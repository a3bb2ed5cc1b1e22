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
from cdc_core.types import DataType, LogicalTypeVisitor

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


def _bits(datum: Any) -> bytes:
    return _U64.pack(int.from_bytes(datum, "big") & _MASK)


class _Contribution(LogicalTypeVisitor[Contribution]):
    """The bytes one column's datum adds to TiCDC's row checksum (section 3.7)."""

    def visit_int(self, data_type: DataType) -> Contribution:
        return _integer

    def visit_year(self, data_type: DataType) -> Contribution:
        return _integer

    def visit_float(self, data_type: DataType) -> Contribution:
        return _float32

    def visit_double(self, data_type: DataType) -> Contribution:
        return _float

    def visit_bit(self, data_type: DataType) -> Contribution:
        return _bits

    def visit_enum(self, data_type: DataType) -> Contribution:
        elements = data_type.elements or ()
        return lambda datum: _U64.pack(elements.index(datum) + 1 if datum in elements else 0)

    def visit_set(self, data_type: DataType) -> Contribution:
        elements = data_type.elements or ()

        def set_bits(datum: Any) -> bytes:
            names = str(datum).split(",") if datum else []
            return _U64.pack(sum(1 << elements.index(n) for n in names if n in elements))

        return set_bits

    def visit_decimal(self, data_type: DataType) -> Contribution:
        scale = data_type.known_scale
        return lambda datum: _text(format_decimal(datum, scale) if isinstance(datum, Decimal) else datum)

    def visit_date(self, data_type: DataType) -> Contribution:
        return _text

    def visit_datetime(self, data_type: DataType) -> Contribution:
        return _text

    def visit_timestamp(self, data_type: DataType) -> Contribution:
        return _text

    def visit_time(self, data_type: DataType) -> Contribution:
        return _text

    def visit_string(self, data_type: DataType) -> Contribution:
        return _text

    def visit_bytes(self, data_type: DataType) -> Contribution:
        return _text

    def visit_json(self, data_type: DataType) -> Contribution:
        return _text

    def visit_vector(self, data_type: DataType) -> Contribution:
        return _text

    def visit_geometry(self, data_type: DataType) -> Contribution:
        return _text  # never reached: TiDB has no spatial columns, the encoder refuses them

    def visit_array(self, data_type: DataType) -> Contribution:
        return _text  # never reached, as for GEOMETRY


_CONTRIBUTION: Final = _Contribution()


def contribution_for(column: Column) -> Contribution:
    return _CONTRIBUTION.visit(column.data_type)


def row_checksum(datums: Sequence[Any], contributions: Sequence[Contribution]) -> int:
    checksum = 0
    for datum, contribute in zip(datums, contributions, strict=True):
        if datum is not None:
            checksum = zlib.crc32(contribute(datum), checksum)
    return checksum
