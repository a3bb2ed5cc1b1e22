"""Go ``encoding/json`` output, which TiCDC's Simple JSON encoder uses.

orjson already writes what Go writes for everything but a few characters: Go additionally HTML-escapes
``<`` ``>`` ``&`` and escapes U+2028/U+2029. Those characters can only occur inside strings in JSON text, so
replacing them in the output bytes is exact. Strings Python cannot encode as UTF-8 (lone surrogates) become
U+FFFD, as Go turns invalid UTF-8 into ``\\ufffd``. Object key order is the caller's (struct order); callers
sort map keys themselves.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

_GO_ESCAPES: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
_SPECIAL: Final = (b"<", b">", b"&", b"\xe2\x80")  # U+2028/2029 start with e2 80


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        if not _has_surrogate(value):
            return value
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def dumps(document: Any) -> bytes:
    """``document`` as Go's ``json.Marshal`` writes it (dict insertion order kept)."""
    try:
        out = orjson.dumps(document)
    except orjson.JSONEncodeError:
        out = orjson.dumps(_replace_surrogates(document))
    if not any(marker in out for marker in _SPECIAL):
        return out
    for raw, escaped in _GO_ESCAPES:
        out = out.replace(raw, escaped)
    return out
