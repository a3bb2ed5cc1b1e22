"""Parsing message bytes: orjson on the common path, an exact parser when numbers would lose digits.

orjson reads every JSON number with a fraction as a float, so ``12345678901234567.891`` loses digits, and it
turns integers beyond 64 bits into floats. A cheap byte scan finds fractions with more than 15 significant
digits and integers of 19 or more; only then does the stdlib parser re-read the message with fractions as
`Decimal` and integers of any size.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Final

import orjson

_FRACTION: Final = re.compile(rb"\.([0-9]+)")
_DIGITS: Final = frozenset(b"0123456789")
_FLOAT_DIGITS: Final = 15  # every decimal with at most 15 significant digits survives a float64 round trip
# Digits to "0", the point kept, everything else to " ": the scans below become plain substring searches, which
# run at memory speed (a regex trying every position of a 7 kB message costs 100 us; this about 5 us).
_DIGIT_MASK: Final = bytes(48 if 48 <= b <= 57 else 46 if b == 46 else 32 for b in range(256))
# 19 digits may pass the int64 range (orjson turns such integers into floats); TiCDC's 18-digit TSOs do not.
_LONG_INTEGER: Final = b"0" * 19
# A number with 16+ significant digits around a point has 8+ of them on one side of it.
_LONG_SIDES: Final = (b"." + b"0" * 8, b"0" * 8 + b".")


def _may_lose_digits(data: bytes) -> bool:
    """True when a number has more significant digits than orjson keeps (float64, or 64-bit integers)."""
    masked = data.translate(_DIGIT_MASK)
    if _LONG_INTEGER in masked:
        return True
    if _LONG_SIDES[0] not in masked and _LONG_SIDES[1] not in masked:
        return False
    for match in _FRACTION.finditer(data):
        digits = len(match.group(1))
        position = match.start() - 1
        while position >= 0 and data[position] in _DIGITS and digits <= _FLOAT_DIGITS:
            digits += 1
            position -= 1
        if digits > _FLOAT_DIGITS:
            return True
    return False


class JSONParseError(ValueError):
    pass


_FRACTION_OR_EXPONENT: Final = re.compile(rb"[0-9][.eE]")


def loads(data: bytes, *, exact: bool = False) -> Any:
    """The document in ``data``; fractions that a float cannot hold come back as `Decimal`.

    With ``exact`` every number with a fraction or exponent comes back as `Decimal` (the digits as written).
    """
    if exact and _FRACTION_OR_EXPONENT.search(data) is not None:
        try:
            return json.loads(data, parse_float=Decimal)
        except (ValueError, RecursionError) as exc:
            raise JSONParseError(str(exc)) from exc
    if not _may_lose_digits(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise JSONParseError(str(exc)) from exc
    try:
        return json.loads(data, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        raise JSONParseError(str(exc)) from exc
