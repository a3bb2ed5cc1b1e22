"""The Go-compatible JSON writer against the bytes the Go libraries TiCDC uses really write.

``data/gojson/golden.json`` is the output of ``data/gojson/main.go`` (``go run . > golden.json``): encoding/json,
easyjson, goccy/go-json and json-iterator at the versions TiCDC pins, configured as TiCDC configures them,
over probe strings (invalid UTF-8 included) and float bit patterns.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdc_core import gojson
from cdc_core.gojson import EASYJSON, ENCODING_JSON, JSON_ITERATOR, Dialect, Float32, Float64, float64

GOLDEN = json.loads((Path(__file__).parent / "data" / "gojson" / "golden.json").read_text())
LIBRARIES: dict[str, Dialect] = {
    "encoding/json": ENCODING_JSON,
    "easyjson": EASYJSON,
    "goccy/go-json": EASYJSON,
    "json-iterator": JSON_ITERATOR,
}


def _strings() -> list[Any]:
    cases = []
    for row in GOLDEN["strings"]:
        raw = bytes.fromhex(row["input_hex"])
        for library, output in row["outputs_hex"].items():
            cases.append(pytest.param(raw, LIBRARIES[library], bytes.fromhex(output), id=f"{library}:{raw!r}"))
    return cases


@pytest.mark.parametrize(("raw", "dialect", "expected"), _strings())
def test_strings_as_the_go_library_writes_them(raw: bytes, dialect: Dialect, expected: bytes) -> None:
    text = raw.decode("utf-8", "surrogateescape")  # invalid bytes become lone surrogates, as a Python str holds them
    assert dialect.dumps(text) == expected
    assert dialect.dumps_pure(text) == expected
    assert dialect.dumps({text: [text]}) == b"{" + expected + b":[" + expected + b"]}"


def _floats(key: str, fmt: str) -> list[Any]:
    cases = []
    for row in GOLDEN[key]:
        (value,) = struct.unpack(fmt, bytes.fromhex(row["input_hex"]))
        for library, output in row["outputs_hex"].items():
            cases.append(pytest.param(value, LIBRARIES[library], bytes.fromhex(output), id=f"{library}:{value!r}"))
    return cases


@pytest.mark.parametrize(("value", "dialect", "expected"), _floats("float64", ">d"))
def test_float64_as_the_go_library_writes_it(value: float, dialect: Dialect, expected: bytes) -> None:
    assert dialect.dumps([float64(value)]) == b"[" + expected + b"]"
    assert dialect.dumps([Float64(value)]) == b"[" + expected + b"]"
    assert dialect.dumps_pure([value]) == b"[" + expected + b"]"


@pytest.mark.parametrize(("value", "dialect", "expected"), _floats("float32", ">f"))
def test_float32_as_the_go_library_writes_it(value: float, dialect: Dialect, expected: bytes) -> None:
    assert dialect.dumps({"f": Float32(value)}) == b'{"f":' + expected + b"}"
    assert dialect.dumps_pure({"f": Float32(value)}) == b'{"f":' + expected + b"}"


def test_golden_file_covers_every_dialect_and_escape_class() -> None:
    libraries = {library for row in GOLDEN["strings"] for library in row["outputs_hex"]}
    assert libraries == set(LIBRARIES)
    inputs = b"".join(bytes.fromhex(row["input_hex"]) for row in GOLDEN["strings"])
    for needed in (b"<", b"&", b"\b", b"\f", b"\x7f", "\u2028".encode(), b"\xff", b"\\b"):
        assert needed in inputs


_scalars = (
    st.text()
    | st.text('\\bf\b\f<>&\u2028\u2029"n\x00\x7f\udc80\ud800é', max_size=12)
    | st.integers(-(2**64), 2**64)
    | st.booleans()
    | st.none()
    | st.floats(allow_nan=False, allow_infinity=False).map(float64)
    | st.floats(width=32, allow_nan=False, allow_infinity=False).map(Float32)
)
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize("dialect", [ENCODING_JSON, EASYJSON, JSON_ITERATOR], ids=repr)
@given(document=_documents)
def test_fast_path_equals_the_pure_writer(dialect: Dialect, document: Any) -> None:
    assert dialect.dumps(document) == dialect.dumps_pure(document)


@given(value=st.floats(min_value=1e-5, max_value=1e15, exclude_max=True))
def test_bare_floats_that_float64_lets_through_print_as_go_does(value: float) -> None:
    for dialect in (ENCODING_JSON, JSON_ITERATOR):
        assert dialect.dumps([float64(value)]) == dialect.dumps_pure([Float64(value)])


def test_without_orjson_the_pure_writer_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gojson, "_orjson", None)
    assert ENCODING_JSON.dumps({"a": "<\b>", "n": Float64(1e21)}) == b'{"a":"\\u003c\\b\\u003e","n":1e+21}'


@pytest.mark.parametrize("bad", [{1: "x"}, {"a": object()}, [b"bytes"]], ids=["int-key", "object", "bytes"])
def test_values_without_a_json_form_are_a_type_error(bad: Any) -> None:
    for dialect in (ENCODING_JSON, EASYJSON, JSON_ITERATOR):
        with pytest.raises(TypeError):
            dialect.dumps(bad)
