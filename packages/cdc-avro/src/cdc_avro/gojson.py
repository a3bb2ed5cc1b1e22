"""Compact JSON exactly as Go's ``encoding/json`` marshals it (TiCDC registers schemas in this form).

Differences from ``json.dumps``: ``<``, ``>``, ``&``, U+2028 and U+2029 are escaped, non-ASCII text is
written raw, floats use Go's ES6-like formatting (``3.140000104904175``, ``1e-7``). Key order is the caller's:
Go marshals maps with sorted keys and structs in declaration order, so callers build dicts in that order.
"""

from __future__ import annotations

import json
from typing import Any, Final

from cdc_core.textual import format_float_es6

_GO_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _GO_ESCAPES.items():
        if raw in out:
            out = out.replace(raw, escaped)
    return out


def dumps(document: Any) -> str:
    """Go ``json.Marshal`` text of ``document`` (dict, list, str, int, float, bool, None)."""
    parts: list[str] = []
    _write(document, parts)
    return "".join(parts)


def _write(value: Any, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        parts.append(format_float_es6(value))
    elif isinstance(value, dict):
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                parts.append(",")
            parts.append(_string(str(key)))
            parts.append(":")
            _write(item, parts)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    else:
        raise TypeError(f"cannot marshal {type(value).__name__}")
