"""JSON bytes as TiCDC's Canal-JSON writers (easyjson, Go encoding/json) print them.

orjson keeps dict insertion order, so the key order is the order the encoder builds. Escaping is then
aligned with Go's: ``<``, ``>``, ``&``, U+2028 and U+2029 become ``\\u003c``-style escapes (these bytes
can only occur inside strings, so a global replacement is exact), and ``\\b``/``\\f`` become
``\\u0008``/``\\u000c`` (rewritten escape by escape so that an escaped backslash is never misread).
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

_HTML: Final = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
_SEPARATORS: Final = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))
# An escaped backslash is consumed as a pair, so the "b" of a literal backslash-b is never taken for \b;
# other escapes (\n, \u0001, \") do not match and are skipped by the scan.
_ESCAPE: Final = re.compile(rb"\\\\|\\[bf]")
_SHORT_TO_LONG: Final = {b"\\b": b"\\u0008", b"\\f": b"\\u000c"}


def _long_escape(match: re.Match[bytes]) -> bytes:
    return _SHORT_TO_LONG.get(match[0], match[0])


def dumps(document: dict[str, Any]) -> bytes:
    out = orjson.dumps(document)
    for raw, escaped in _HTML:
        if raw in out:
            out = out.replace(raw, escaped)
    if b"\xe2\x80" in out:
        for raw, escaped in _SEPARATORS:
            out = out.replace(raw, escaped)
    if b"\\b" in out or b"\\f" in out:
        out = _ESCAPE.sub(_long_escape, out)
    return out
