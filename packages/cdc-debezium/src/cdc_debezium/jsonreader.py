"""Parsing message bytes: orjson on the common path, an exact parser when numbers would lose digits.

orjson reads every JSON number with a fraction as a float, so ``12345678901234567.891`` loses digits and an
integer beyond 64 bits becomes a float too. A cheap byte scan spots such tokens (16+ digits around a point,
or 20+ digits in a row); only then the stdlib parser re-reads the message with fractions as `Decimal`.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Final

import orjson

_LOSSY_NUMBER: Final = re.compile(rb"[0-9]{20,}|(?=[0-9]*\.[0-9])[0-9.]{17,}")


class JSONParseError(ValueError):
    pass


def loads(data: bytes) -> Any:
    """The document in ``data``; fractions that a float cannot hold come back as `Decimal`."""
    if _LOSSY_NUMBER.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise JSONParseError(str(exc)) from exc
    try:
        return json.loads(data, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        raise JSONParseError(str(exc)) from exc
