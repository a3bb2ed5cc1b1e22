"""The JSON dialect TiCDC's Debezium encoder writes (json-iterator with HTML escaping off).

Strings escape only ``"``, ``\\``, ``\\n``, ``\\r``, ``\\t`` and other control bytes as lower-case ``\\u00xx``;
non-ASCII text stays raw UTF-8. Floats are ECMAScript-style; `Float32` values print with 32-bit shortest
digits. Objects keep insertion order, which the encoder builds in TiCDC's field order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import orjson

from cdc_core.textual import format_float_es6


class Float32(float):
    """A FLOAT column value: printed with float32 shortest digits (``12345.123``, not ``12345.123046875``)."""


class Float64(float):
    """A float64 printed ECMAScript-style (``1e-7``, ``1e+21``, ``0.000001``) as json-iterator does."""


def float64(value: float) -> float:
    """``value`` ready for `dumps`: a plain float where orjson already prints it ECMAScript-style.

    orjson's shortest digits agree with ES6 for non-integral magnitudes in [1e-5, 1e15) (checked by a property
    test); integral values (``100.0`` vs ``100``) and the exponent boundaries take the `Float64` fragment path.
    """
    if 1e-5 <= abs(value) < 1e15 and not value.is_integer():
        return value
    return Float64(value)


_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE: Final = re.compile(r'[\x00-\x1f"\\]')


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _write(value: Any, out: list[str]) -> None:
    kind = type(value)
    writer = _WRITERS.get(kind)
    if writer is not None:
        writer(value, out)
    elif isinstance(value, dict):
        _object(value, out)
    elif isinstance(value, list | tuple):
        _array(value, out)
    else:
        raise TypeError(f"no Debezium JSON form for {kind.__name__}")


def _object(value: dict[str, Any], out: list[str]) -> None:
    out.append("{")
    first = True
    for key, item in value.items():
        if not first:
            out.append(",")
        first = False
        out.append(_string(key))
        out.append(":")
        _write(item, out)
    out.append("}")


def _array(value: list[Any] | tuple[Any, ...], out: list[str]) -> None:
    out.append("[")
    for i, item in enumerate(value):
        if i:
            out.append(",")
        _write(item, out)
    out.append("]")


_WRITERS: Final[dict[type, Callable[[Any, list[str]], None]]] = {
    str: lambda v, out: out.append(_string(v)),
    int: lambda v, out: out.append(str(v)),
    bool: lambda v, out: out.append("true" if v else "false"),
    type(None): lambda _v, out: out.append("null"),
    float: lambda v, out: out.append(format_float_es6(v)),
    Float32: lambda v, out: out.append(format_float_es6(v, bits=32)),
    Float64: lambda v, out: out.append(format_float_es6(v)),
    dict: _object,
    list: _array,
}


def _fragment(value: Any) -> orjson.Fragment:
    if type(value) is Float32:
        return orjson.Fragment(format_float_es6(value, bits=32))
    if type(value) is Float64:
        return orjson.Fragment(format_float_es6(value))
    raise TypeError(f"no Debezium JSON form for {type(value).__name__}")


def _slow_dumps(document: Any) -> bytes:
    out: list[str] = []
    _write(document, out)
    return "".join(out).encode("utf-8", "surrogatepass")


def dumps(document: Any) -> bytes:
    """``document`` (dicts, lists, str, int, bool, None, float, `Float32`) as Debezium-dialect UTF-8 bytes.

    orjson writes the same dialect (no HTML escaping, raw UTF-8, compact) except that it escapes backspace and
    form feed as ``\\b``/``\\f`` where json-iterator writes ``\\u0008``/``\\u000c``, and it refuses lone
    surrogates and integers beyond 64 bits: those rare documents take the pure-Python writer. Floats always
    go through `format_float_es6` (as orjson fragments).
    """
    try:
        out = orjson.dumps(document, default=_fragment)
    except orjson.JSONEncodeError:
        return _slow_dumps(document)
    if b"\\b" in out or b"\\f" in out:
        return _slow_dumps(document)
    return out
