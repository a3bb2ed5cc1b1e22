"""TiDB TSO helpers: a 64-bit timestamp whose high 46 bits are physical milliseconds, low 18 a counter."""

from __future__ import annotations

import datetime as dt
from typing import Final

LOGICAL_BITS: Final = 18


def physical_ms(ts: int) -> int:
    """Epoch milliseconds of a TSO (``oracle.ExtractPhysical``)."""
    return ts >> LOGICAL_BITS


def logical(ts: int) -> int:
    return ts & ((1 << LOGICAL_BITS) - 1)


def compose(physical: int, logical_part: int = 0) -> int:
    """A TSO from epoch milliseconds and a logical counter."""
    return (physical << LOGICAL_BITS) | logical_part


def to_datetime(ts: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(physical_ms(ts) / 1000, tz=dt.UTC)


def from_datetime(moment: dt.datetime, logical_part: int = 0) -> int:
    return compose(int(moment.timestamp() * 1000), logical_part)
