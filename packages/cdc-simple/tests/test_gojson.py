"""Go encoding/json output details that orjson does not share."""

from __future__ import annotations

from cdc_simple import gojson


def test_html_and_line_separator_escapes() -> None:
    assert gojson.dumps({"a": "<b>&\u2028\u2029"}) == b'{"a":"\\u003cb\\u003e\\u0026\\u2028\\u2029"}'


def test_control_characters_short_and_long_forms() -> None:
    assert gojson.dumps(["\b\f\n\r\t\x00\x1f\x7f"]) == b'["\\b\\f\\n\\r\\t\\u0000\\u001f\x7f"]'


def test_unencodable_text_becomes_replacement_character() -> None:
    assert gojson.dumps({"k\udc80": "x\ud800y"}) == '{"k\ufffd":"x\ufffdy"}'.encode()


def test_non_ascii_is_raw_utf8_and_integers_are_exact() -> None:
    assert gojson.dumps({"é": 2**64 - 1}) == '{"é":18446744073709551615}'.encode()
