"""Message lines: the text form of Kafka messages that ``cdc decode`` reads and ``cdc encode`` writes.

A public contract (documented in docs/cli.md). One message per line, each line one of:

- an envelope object: ``{"value": TEXT|null, "value_b64": B64, "key": TEXT|null, "key_b64": B64, "topic": STR,
  "partition": INT, "offset": INT, "timestamp": INT, "headers": {NAME: TEXT|null} | [[NAME, TEXT|null], ...]}``,
  every member optional but one of ``value``/``value_b64`` present (``"value": null`` is a tombstone);
- a kcat ``-J`` envelope: ``{"topic", "partition", "offset", "tstype", "ts", "broker", "headers": [k, v, ...],
  "key", "payload"}``;
- any other JSON document, taken verbatim (its exact bytes) as the message value.

Blank lines are skipped. Line numbers count from 1 and name the line in errors.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final

from cdc_core.errors import DataError
from cdc_core.message import Message

try:  # orjson is several times faster; envelopes hold only strings and small integers, so it loses nothing.
    import orjson

    _loads: Any = orjson.loads
except ImportError:  # pragma: no cover - exercised where orjson is absent
    _loads = json.loads

ENVELOPE_KEYS: Final = frozenset(
    {"value", "value_b64", "key", "key_b64", "topic", "partition", "offset", "timestamp", "headers"}
)
KCAT_KEYS: Final = frozenset(
    {"topic", "partition", "offset", "tstype", "ts", "broker", "headers", "key", "payload", "key_error"}
)


class MessageLineError(DataError):
    """A line that is not a valid message line; names the source and line number."""

    def __init__(self, reason: str, *, line: int, source: str = "<input>", field: str | None = None) -> None:
        where = f"{source}:{line}" + (f" field {field}" if field else "")
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.line = line
        self.source = source
        self.field = field


def _text_or_b64(doc: dict[str, Any], name: str, line: int, source: str) -> bytes | None:
    encoded = doc.get(f"{name}_b64")
    if encoded is not None:
        if not isinstance(encoded, str):
            raise MessageLineError("must be a base64 string", line=line, source=source, field=f"{name}_b64")
        try:
            return base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise MessageLineError(f"invalid base64: {exc}", line=line, source=source, field=f"{name}_b64") from exc
    text = doc.get(name)
    if text is None:
        return None
    if not isinstance(text, str):
        reason = f"must be a string or null, not {type(text).__name__} (use {name}_b64 for bytes)"
        raise MessageLineError(reason, line=line, source=source, field=name)
    return text.encode()


def _optional_int(doc: dict[str, Any], name: str, line: int, source: str) -> int | None:
    value = doc.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageLineError(f"must be an integer, not {value!r}", line=line, source=source, field=name)
    return value


def _header_value(value: object, line: int, source: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dict) and isinstance(value.get("b64"), str):
        try:
            return base64.b64decode(value["b64"], validate=True)
        except binascii.Error as exc:
            raise MessageLineError(f"invalid base64 header: {exc}", line=line, source=source) from exc
    reason = f'header values must be strings, null or {{"b64": ...}}, not {value!r}'
    raise MessageLineError(reason, line=line, source=source, field="headers")


def _headers(raw: object, *, flat: bool, line: int, source: str) -> tuple[tuple[str, bytes | None], ...]:
    if raw is None:
        return ()
    if isinstance(raw, dict):
        return tuple((str(k), _header_value(v, line, source)) for k, v in raw.items())
    if isinstance(raw, list) and flat and len(raw) % 2 == 0:  # kcat: [k1, v1, k2, v2, ...]
        return tuple((str(raw[i]), _header_value(raw[i + 1], line, source)) for i in range(0, len(raw), 2))
    if isinstance(raw, list) and all(isinstance(pair, list) and len(pair) == 2 for pair in raw):
        return tuple((str(k), _header_value(v, line, source)) for k, v in raw)
    reason = "must be an object or a list of [name, value] pairs"
    raise MessageLineError(reason, line=line, source=source, field="headers")


def _is_kcat(doc: dict[str, Any]) -> bool:
    return "payload" in doc and "topic" in doc and "offset" in doc and doc.keys() <= KCAT_KEYS


def _is_envelope(doc: dict[str, Any]) -> bool:
    return ("value" in doc or "value_b64" in doc) and doc.keys() <= ENVELOPE_KEYS


def parse_line(raw: bytes | str, *, line: int, source: str = "<input>") -> Message:
    """One message from one line (without its newline)."""
    data = raw.encode() if isinstance(raw, str) else raw
    try:
        doc = _loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MessageLineError(f"not a JSON document: {exc}", line=line, source=source) from exc
    if isinstance(doc, dict) and _is_kcat(doc):
        return Message(
            value=_text_or_b64({"v": doc.get("payload")}, "v", line, source),
            key=_text_or_b64({"k": doc.get("key")}, "k", line, source),
            topic=doc.get("topic") if isinstance(doc.get("topic"), str) else None,
            partition=_optional_int(doc, "partition", line, source),
            offset=_optional_int(doc, "offset", line, source),
            timestamp=_optional_int(doc, "ts", line, source),
            headers=_headers(doc.get("headers"), flat=True, line=line, source=source),
        )
    if isinstance(doc, dict) and _is_envelope(doc):
        topic = doc.get("topic")
        if topic is not None and not isinstance(topic, str):
            raise MessageLineError("must be a string", line=line, source=source, field="topic")
        return Message(
            value=_text_or_b64(doc, "value", line, source),
            key=_text_or_b64(doc, "key", line, source),
            topic=topic,
            partition=_optional_int(doc, "partition", line, source),
            offset=_optional_int(doc, "offset", line, source),
            timestamp=_optional_int(doc, "timestamp", line, source),
            headers=_headers(doc.get("headers"), flat=False, line=line, source=source),
        )
    # A bare document is the value itself: keep its exact bytes (re-serializing would lose long numbers).
    return Message(value=data.strip())


def read_lines(stream: IO[bytes], *, source: str = "<input>") -> Iterator[tuple[int, Message]]:
    """(line number, message) for every non-blank line of ``stream``."""
    for number, raw in enumerate(stream, start=1):
        stripped = raw.strip()
        if stripped:
            yield number, parse_line(stripped, line=number, source=source)


def _field(document: dict[str, Any], name: str, payload: bytes | None) -> None:
    if payload is None:
        document[name] = None
        return
    try:
        document[name] = payload.decode()
    except UnicodeDecodeError:
        document[f"{name}_b64"] = base64.b64encode(payload).decode("ascii")


def _header_text(value: bytes | None) -> str | dict[str, str] | None:
    if value is None:
        return None
    try:
        return value.decode()
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode("ascii")}


def format_line(message: Message) -> str:
    """The envelope line of ``message``: text where the bytes are UTF-8, ``*_b64`` otherwise."""
    document: dict[str, Any] = {}
    _field(document, "value", message.value)
    if message.key is not None:
        _field(document, "key", message.key)
    for name in ("topic", "partition", "offset", "timestamp"):
        value = getattr(message, name)
        if value is not None:
            document[name] = value
    if message.headers:
        headers: list[list[Any]] = []
        for name, value in message.headers:
            headers.append([name, _header_text(value)])
        document["headers"] = headers
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def write_lines(messages: Iterable[Message], stream: IO[str]) -> int:
    count = 0
    for message in messages:
        stream.write(format_line(message) + "\n")
        count += 1
    return count
