"""Compact JSON byte for byte as the Go JSON libraries TiCDC's encoders use write it.

TiCDC writes each protocol with a different library, and they disagree in escaping and number text:

============================  ==========  =========  ============  ==============  ==============
dialect (TiCDC's user)        ``<>&``     ``\\b \\f``  U+2028/2029   invalid UTF-8   ``1e-7``
============================  ==========  =========  ============  ==============  ==============
`ENCODING_JSON` (Simple JSON,  ``\\u003c``  short      escaped       ``\\ufffd``      ``1e-7``
Avro schemas)
`EASYJSON` (Canal-JSON: rows   ``\\u003c``  ``\\u0008``  escaped       ``\\ufffd``      (no floats)
by easyjson, DDL/watermarks
by goccy/go-json: the same)
`JSON_ITERATOR` (Debezium,     raw         ``\\u0008``  raw           raw bytes       ``1e-07``
json-iterator, HTML off)
============================  ==========  =========  ============  ==============  ==============

All write other control bytes as lower-case ``\\u00xx``, ``"``, ``\\``, ``\\n``, ``\\r``, ``\\t`` short, DEL
and non-ASCII text raw, and floats in plain digits for 1e-6 <= |v| < 1e21. json-iterator 1.1.12 (TiCDC's
pin) keeps Go's two-digit exponent (``1e-07``, ``1e+21``) where encoding/json shortens it. The golden test
pins every cell against the libraries' own output (``tests/data/gojson``).

A Python str cannot hold invalid UTF-8; a lone surrogate stands for it. Replacing dialects write
``\\ufffd`` for each; `JSON_ITERATOR` writes U+DC80..U+DCFF (Python's ``surrogateescape``) back as the byte
each stands for and any other lone surrogate in its three-byte form.

Object keys keep the dict's order (Go writes structs in declaration order, maps sorted: callers sort).
Floats: `Float32` prints with float32 shortest digits; give float64 values through `float64` (or as
`Float64`): a bare ``float`` is printed by the fast path as orjson prints it, which equals Go's text only in
the range `float64` lets through.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any, Final, Literal

from cdc_core.textual import format_float_es6

try:
    import orjson
except ImportError:  # pragma: no cover - every JSON adapter installs orjson; the pure writer still works
    _orjson: Any = None
else:
    _orjson = orjson


class Float32(float):
    """A FLOAT value: printed with float32 shortest digits (``12345.123``, not ``12345.123046875``)."""


class Float64(float):
    """A float64 printed as Go prints it where orjson would not (integral values, exponent ranges)."""


def float64(value: float) -> float:
    """``value`` ready for `Dialect.dumps`: a plain float where orjson already prints Go's text, else `Float64`.

    orjson's shortest digits agree with Go for non-integral magnitudes in [1e-5, 1e15) (no exponent there in
    any dialect; checked by a property test); integral values (``100.0`` vs ``100``) and the exponent ranges
    take the `Float64` path.
    """
    if 1e-5 <= abs(value) < 1e15 and not value.is_integer():
        return value
    return Float64(value)


def _raw_byte_or_cesu(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    out = bytearray()
    for char in error.object[error.start : error.end]:
        point = ord(char)
        out += bytes((point - 0xDC00,)) if 0xDC80 <= point <= 0xDCFF else char.encode("utf-8", "surrogatepass")
    return bytes(out), error.end


_RAW_ERRORS: Final = "cdc-go-raw-bytes"
codecs.register_error(_RAW_ERRORS, _raw_byte_or_cesu)

# In orjson's output an escaped backslash is consumed as a pair, so the "b" of a literal backslash-b is never
# taken for \b; other escapes (\n, \u0001, \") do not match and are skipped by the scan.
_SHORT_BF: Final = re.compile(rb"\\\\|\\[bf]")
_LONG_BF: Final = {b"\\b": b"\\u0008", b"\\f": b"\\u000c"}
_HTML: Final = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
_SEPARATORS: Final = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def _long_bf(match: re.Match[bytes]) -> bytes:
    return _LONG_BF.get(match[0], match[0])


class Dialect:
    """One Go JSON library's output rules; `dumps` writes a document in them."""

    def __init__(
        self,
        name: str,
        *,
        escape_html: bool,
        short_bf: bool,
        escape_line_separators: bool,
        invalid_utf8: Literal["replace", "raw"],
        exponent_digits: Literal[1, 2],
    ) -> None:
        self.name = name
        self.escape_html = escape_html
        self.short_bf = short_bf
        self.escape_line_separators = escape_line_separators
        self.invalid_utf8 = invalid_utf8
        self.exponent_digits = exponent_digits
        special = r"\x00-\x1f\"\\"
        if escape_html:
            special += "<>&"
        if escape_line_separators:
            special += "\u2028\u2029"
        if invalid_utf8 == "replace":
            special += "\ud800-\udfff"
        self._needs_escape = re.compile(f"[{special}]")
        self._escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
        if short_bf:
            self._escapes |= {"\b": "\\b", "\f": "\\f"}
        self._writers: dict[type, Callable[[Any, list[str]], None]] = {
            str: lambda v, out: out.append(self._string(v)),
            int: lambda v, out: out.append(str(v)),
            bool: lambda v, out: out.append("true" if v else "false"),
            type(None): lambda _v, out: out.append("null"),
            float: lambda v, out: out.append(self.format_float(v)),
            Float64: lambda v, out: out.append(self.format_float(v)),
            Float32: lambda v, out: out.append(self.format_float(v, bits=32)),
            dict: self._object,
            list: self._array,
            tuple: self._array,
        }

    def __repr__(self) -> str:
        return f"Dialect({self.name})"

    def format_float(self, value: float, *, bits: Literal[32, 64] = 64) -> str:
        return format_float_es6(value, bits=bits, exponent_digits=self.exponent_digits)

    def dumps(self, document: Any) -> bytes:
        """``document`` (dicts with str keys, lists, tuples, str, int, bool, None, floats) as UTF-8 JSON bytes."""
        if _orjson is None:
            return self.dumps_pure(document)
        try:
            out: bytes = _orjson.dumps(document, default=self._fragment)
        except _orjson.JSONEncodeError:  # lone surrogates, integers beyond 64 bits, foreign types
            return self.dumps_pure(document)
        # orjson writes Go's common ground (raw UTF-8, short \" \\ \n \r \t \b \f, \u00xx for other controls);
        # the dialect's extra escapes are bytes that can only occur inside strings, so replacing them is exact.
        if self.escape_html:
            for raw, escaped in _HTML:
                if raw in out:
                    out = out.replace(raw, escaped)
        if self.escape_line_separators and b"\xe2\x80" in out:
            for raw, escaped in _SEPARATORS:
                out = out.replace(raw, escaped)
        if not self.short_bf and (b"\\b" in out or b"\\f" in out):
            out = _SHORT_BF.sub(_long_bf, out)
        return out

    def dumps_pure(self, document: Any) -> bytes:
        """`dumps` without orjson: the reference the fast path is tested against, and its fallback."""
        out: list[str] = []
        self._write(document, out)
        text = "".join(out)
        return text.encode("utf-8", _RAW_ERRORS if self.invalid_utf8 == "raw" else "strict")

    def _fragment(self, value: Any) -> Any:
        if type(value) is Float32:
            return _orjson.Fragment(self.format_float(value, bits=32))
        if type(value) is Float64:
            return _orjson.Fragment(self.format_float(value))
        raise TypeError(f"no JSON form for {type(value).__name__}")

    def _escape_char(self, match: re.Match[str]) -> str:
        char = match[0]
        escaped = self._escapes.get(char)
        if escaped is not None:
            return escaped
        if "\ud800" <= char <= "\udfff":
            return "\\ufffd"
        return f"\\u{ord(char):04x}"

    def _string(self, text: str) -> str:
        if self._needs_escape.search(text) is None:
            return '"' + text + '"'
        return '"' + self._needs_escape.sub(self._escape_char, text) + '"'

    def _write(self, value: Any, out: list[str]) -> None:
        writer = self._writers.get(type(value))
        if writer is not None:
            writer(value, out)
        elif isinstance(value, dict):
            self._object(value, out)
        elif isinstance(value, list | tuple):
            self._array(value, out)
        elif isinstance(value, str):
            out.append(self._string(str(value)))
        elif isinstance(value, int) and not isinstance(value, bool):
            out.append(str(int(value)))
        else:
            raise TypeError(f"no JSON form for {type(value).__name__}")

    def _object(self, value: dict[Any, Any], out: list[str]) -> None:
        out.append("{")
        first = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be str, got {type(key).__name__}")
            if not first:
                out.append(",")
            first = False
            out.append(self._string(key))
            out.append(":")
            self._write(item, out)
        out.append("}")

    def _array(self, value: list[Any] | tuple[Any, ...], out: list[str]) -> None:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            self._write(item, out)
        out.append("]")


ENCODING_JSON: Final = Dialect(
    "encoding/json",
    escape_html=True,
    short_bf=True,
    escape_line_separators=True,
    invalid_utf8="replace",
    exponent_digits=1,
)
"""Go's ``encoding/json`` ``Marshal`` (Go >= 1.22 writes ``\\b``/``\\f`` short): TiCDC's Simple JSON, Avro schemas."""

EASYJSON: Final = Dialect(
    "easyjson",
    escape_html=True,
    short_bf=False,
    escape_line_separators=True,
    invalid_utf8="replace",
    exponent_digits=1,
)
"""easyjson's ``jwriter`` with HTML escaping on, and goccy/go-json ``Marshal`` (they escape alike): Canal-JSON."""

JSON_ITERATOR: Final = Dialect(
    "json-iterator",
    escape_html=False,
    short_bf=False,
    escape_line_separators=False,
    invalid_utf8="raw",
    exponent_digits=2,
)
"""json-iterator 1.1.12 with ``EscapeHTML: false``: TiCDC's Debezium writer."""
