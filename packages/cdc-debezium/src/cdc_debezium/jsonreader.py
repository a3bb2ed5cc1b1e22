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

# Starts with a literal, so the regex engine finds candidates with a fast byte search instead of trying
# every position (a character-class scan of a 7 kB message costs 100 us; this costs about 1 us).
_FRACTION: Final = re.compile(rb"\.([0-9]+)")
_DIGITS: Final = frozenset(b"0123456789")
_FLOAT_DIGITS: Final = 15  # every decimal with at most 15 significant digits survives a float64 round trip


# Digits to "0", everything else to " ": a 19-digit run then is a plain substring search. 19 digits may pass
# the int64 range (orjson turns such integers into floats); TiCDC's TSOs have 18 digits until about 2090.
_DIGIT_MASK: Final = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_INTEGER: Final = b"0" * 19


def _may_lose_digits(data: bytes) -> bool:
    """True when a number has more significant digits than orjson keeps (float64, or 64-bit integers)."""
    if _LONG_INTEGER in data.translate(_DIGIT_MASK):
        return True
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


def loads(data: bytes) -> Any:
    """The document in ``data``; fractions that a float cannot hold come back as `Decimal`."""
    if not _may_lose_digits(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise JSONParseError(str(exc)) from exc
    try:
        return json.loads(data, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        raise JSONParseError(str(exc)) from exc
