"""Message lines, the public input format of ``cdc decode``: envelopes, kcat -J lines, bare documents, errors."""

from __future__ import annotations

import base64
import io

import pytest

from cdc_core.message import Message
from cdc_core.messagelines import MessageLineError, format_line, parse_line, read_lines


def test_envelope_with_text_value_and_coordinates() -> None:
    line = '{"value": "{\\"a\\":1}", "key": "k1", "topic": "t", "partition": 2, "offset": 40, "timestamp": 7}'
    message = parse_line(line, line=1)
    assert message == Message(value=b'{"a":1}', key=b"k1", topic="t", partition=2, offset=40, timestamp=7)


def test_envelope_with_base64_value_key_and_headers() -> None:
    raw = bytes([0, 0, 0, 0, 1, 0xFF])
    b64 = base64.b64encode(raw).decode()
    line = f'{{"value_b64": "{b64}", "key_b64": "{b64}", "headers": {{"h": "x", "n": null}}}}'
    message = parse_line(line, line=3)
    assert message.value == raw
    assert message.key == raw
    assert message.headers == (("h", b"x"), ("n", None))


def test_null_value_is_a_tombstone() -> None:
    message = parse_line('{"value": null, "key": "{\\"id\\":1}"}', line=1)
    assert message.is_tombstone
    assert message.key == b'{"id":1}'


def test_kcat_envelope() -> None:
    line = (
        '{"topic":"orders","partition":1,"offset":9,"tstype":"create","ts":1700000000000,"broker":0,'
        '"headers":["trace","abc","empty",null],"key":"k","payload":"{\\"op\\":\\"c\\"}"}'
    )
    message = parse_line(line, line=1)
    assert message.topic == "orders"
    assert (message.partition, message.offset, message.timestamp) == (1, 9, 1_700_000_000_000)
    assert message.headers == (("trace", b"abc"), ("empty", None))
    assert message.value == b'{"op":"c"}'


def test_bare_document_keeps_its_exact_bytes() -> None:
    # A Debezium value is a bare document; its long number must not pass through a float.
    line = b'{"payload": {"after": {"id": 18446744073709551615123}}, "schema": null}'
    assert parse_line(line, line=1).value == line


@pytest.mark.parametrize(
    ("line", "field", "reason"),
    [
        ('{"value": 12}', "value", "must be a string or null"),
        ('{"value_b64": "***"}', "value_b64", "invalid base64"),
        ('{"value": "x", "partition": "zero"}', "partition", "must be an integer"),
        ('{"value": "x", "headers": 5}', "headers", "must be an object"),
        ("not json at all", None, "not a JSON document"),
    ],
)
def test_bad_lines_name_line_field_and_reason(line: str, field: str | None, reason: str) -> None:
    with pytest.raises(MessageLineError) as caught:
        parse_line(line, line=12, source="in.jsonl")
    assert caught.value.line == 12
    assert caught.value.field == field
    assert reason in str(caught.value)
    assert str(caught.value).startswith("in.jsonl:12")


def test_format_then_parse_round_trips_text_and_binary() -> None:
    messages = [
        Message(value=b'{"a": "\xc3\xa9"}', key=b"k", topic="t", partition=0, offset=1, headers=(("h", b"v"),)),
        Message(value=b"\x00\xff\x10", key=None, topic="t", partition=1, offset=2),
        Message(value=None, key=b"\x80", headers=(("bin", b"\xfe"), ("none", None))),
    ]
    for message in messages:
        assert parse_line(format_line(message), line=1) == message


def test_read_lines_skips_blank_lines_and_numbers_from_one() -> None:
    stream = io.BytesIO(b'{"value": "a"}\n\n  \n{"value": "b"}\n')
    assert [(n, m.value) for n, m in read_lines(stream)] == [(1, b"a"), (4, b"b")]
