"""Typed column values, never lossy.

| logical type | Python value |
| --- | --- |
| INT, YEAR, BIT | ``int`` (unsigned 64-bit included) |
| FLOAT, DOUBLE | ``float`` |
| DECIMAL | ``decimal.Decimal`` (scale kept, never via float) |
| DATE | ``datetime.date`` or `ZeroTemporal` |
| DATETIME | naive ``datetime.datetime`` or `ZeroTemporal` |
| TIMESTAMP | timezone-aware ``datetime.datetime`` or `ZeroTemporal` |
| TIME | ``datetime.timedelta`` (negative and over 24 h allowed) |
| STRING | ``str`` |
| BYTES | ``bytes`` |
| ENUM | member name ``str`` (``""`` for MySQL's invalid value), or `EnumIndex` when names are unknown |
| SET | ``tuple[str, ...]`` of member names in declaration order, or `SetBits` when names are unknown |
| JSON | the parsed document (dict, list, str, int, float, bool, None) |
| VECTOR | ``list[float]`` |
| GEOMETRY | `Geometry` (OGC WKB and SRID) |
| ARRAY | ``list`` of values typed by the element type (``DataType.item``), nested arrays as nested lists |

SQL NULL is ``None``.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

Value: TypeAlias = Any
"""A column value as tabulated above (``Any`` because JSON documents are recursive)."""

RowImage: TypeAlias = dict[str, Value]


@attrs.frozen
class ZeroTemporal:
    """A MySQL zero or partial-zero date/datetime (``0000-00-00``, ``2021-00-15 00:00:00``).

    Legal data in MySQL and TiDB with a permissive ``sql_mode``; kept verbatim instead of becoming NULL.
    """

    text: str

    def __str__(self) -> str:
        return self.text


@attrs.frozen
class EnumIndex:
    """An ENUM value whose member names are unknown to the decoder: the 1-based index (0 = invalid)."""

    index: int


@attrs.frozen
class SetBits:
    """A SET value whose member names are unknown to the decoder: the bitmask (bit i = member i)."""

    bits: int


@attrs.frozen
class Geometry:
    """A spatial value: its OGC Well-Known Binary and its spatial reference system id (None when unknown).

    MySQL stores (and Canal prints) a 4-byte little-endian SRID before the WKB; Debezium sends ``wkb`` and
    ``srid`` apart. Both become this one form, so that values compare equal across protocols.
    """

    wkb: bytes
    srid: int | None = None
