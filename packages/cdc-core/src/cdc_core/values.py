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

A DATETIME, TIMESTAMP or TIME value read from text whose column's fsp the message did not carry remembers how
many fractional digits its text had (`with_fsp`, `written_fsp`): ``12:34:56.000`` and ``12:34:56`` are one
value, but an encoder writing it for a column of unknown fsp writes the digits it came with. Such a value is a
``datetime``/``timedelta`` in every other respect and compares equal to the plain one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypeAlias, overload

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


# ------------------------------------------------------------------------------------ written fraction digits


class _WrittenDatetime(dt.datetime):
    """A datetime that remembers its text's fractional digits (`with_fsp`)."""

    fsp: int | None = None  # set per instance; arithmetic and replace() give instances without it

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:  # pickled with its digits (Spark's Python path)
        return (_restore, (dt.datetime.combine(self.date(), self.timetz()), self.fsp))


class _WrittenTimedelta(dt.timedelta):
    """A timedelta that remembers its text's fractional digits (`with_fsp`)."""

    fsp: int | None = None

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (_restore, (dt.timedelta(self.days, self.seconds, self.microseconds), self.fsp))


def _restore(value: dt.datetime | dt.timedelta, fsp: int | None) -> dt.datetime | dt.timedelta:
    return value if fsp is None else with_fsp(value, fsp)


@overload
def with_fsp(value: dt.datetime, fsp: int) -> dt.datetime: ...
@overload
def with_fsp(value: dt.timedelta, fsp: int) -> dt.timedelta: ...
def with_fsp(value: dt.datetime | dt.timedelta, fsp: int) -> dt.datetime | dt.timedelta:
    """``value``, remembering that its text had ``fsp`` fractional digits (0 to 6).

    Digits a plain value is written with anyway (`own_fsp`: none without microseconds, 6 with) need no
    remembering: such a value stays (or becomes) a plain ``datetime``/``timedelta``.
    """
    if fsp == _natural_fsp(value):
        return value if written_fsp(value) is None else _plain(value)
    if isinstance(value, dt.datetime):
        moment = _WrittenDatetime.combine(value.date(), value.timetz())
        moment.fsp = fsp
        return moment
    duration = _WrittenTimedelta(value.days, value.seconds, value.microseconds)
    duration.fsp = fsp
    return duration


def _natural_fsp(value: dt.datetime | dt.timedelta) -> int:
    return 6 if (value.microsecond if isinstance(value, dt.datetime) else value.microseconds) else 0


def _plain(value: dt.datetime | dt.timedelta) -> dt.datetime | dt.timedelta:
    if isinstance(value, dt.datetime):
        return dt.datetime.combine(value.date(), value.timetz())
    return dt.timedelta(value.days, value.seconds, value.microseconds)


def written_fsp(value: object) -> int | None:
    """The fractional digits ``value``'s text had (`with_fsp`); None for a value that does not say."""
    if isinstance(value, _WrittenDatetime | _WrittenTimedelta):
        return value.fsp
    return None


def own_fsp(value: dt.datetime | dt.timedelta) -> int:
    """The fractional digits ``value`` is written with when its column's fsp is unknown: those its text had
    (`written_fsp`), else 6 when it has microseconds and 0 when it has none (as ISO 8601 text prints it)."""
    written = written_fsp(value)
    return _natural_fsp(value) if written is None else written
