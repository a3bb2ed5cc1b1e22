"""Simple's Avro encoding: a bare binary datum of the 12-branch union in ``message.json`` (shipped with this
package), always its last branch ``Message`` (so the first byte is 0x16), decoded and encoded with fastavro.

`read` turns a datum into the same document shape the JSON encoding parses to (payload fields flattened,
MessageType folded into ``type``), so the decoder has one code path; `write` does the reverse.
"""

from __future__ import annotations

import io
import json
from importlib import resources
from typing import Any, Final

import fastavro

from cdc_simple.fields import fail
from cdc_simple.names import AVRO_MESSAGE, AVRO_PAYLOADS, BOOTSTRAP, DDL_TYPES, DML_TYPES, WATERMARK

_U64: Final = (1 << 64) - 1
_PAYLOAD_KINDS: Final = {name: kind for kind, name in AVRO_PAYLOADS.items()}


def schema_document() -> Any:
    """The writer schema TiCDC uses (tiflow ``pkg/sink/codec/simple/message.json``)."""
    return json.loads(resources.files("cdc_simple").joinpath("message.json").read_text(encoding="utf-8"))


SCHEMA: Final = fastavro.parse_schema(schema_document())


def _unsigned(value: Any) -> Any:
    """TSOs and IDs are written as signed longs; read them back as Go's uint64."""
    return value & _U64 if isinstance(value, int) and value < 0 else value


def read(value: bytes) -> dict[str, Any]:
    """The message document of one Avro datum; DecodeError for anything but a well-formed ``Message``."""
    stream = io.BytesIO(value)
    try:
        datum: Any = fastavro.schemaless_reader(
            stream, SCHEMA, None, return_record_name=True, return_record_name_override=True
        )
    except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, UnicodeDecodeError, ...
        raise fail(f"not a Simple Avro datum: {type(exc).__name__}: {exc}") from exc
    if stream.tell() != len(value):
        raise fail(f"{len(value) - stream.tell()} bytes left after the Avro datum")
    if not isinstance(datum, tuple) or datum[0] != AVRO_MESSAGE:
        branch = datum[0] if isinstance(datum, tuple) else type(datum).__name__
        raise fail(f"Avro datum is union branch {branch}, expected {AVRO_MESSAGE}")
    message = datum[1]
    kind = message["type"]
    payload = message["payload"]
    if not isinstance(payload, tuple) or _PAYLOAD_KINDS.get(payload[0]) != kind:
        got = payload[0] if isinstance(payload, tuple) else type(payload).__name__
        raise fail(f"message type {kind} carries a {got} payload", "payload")
    doc: dict[str, Any] = dict(payload[1])
    if kind in (WATERMARK, BOOTSTRAP):
        doc["type"] = kind  # DDL and DML payloads carry their own type symbol, spelled as in JSON
    if kind == "BOOTSTRAP":
        doc["commitTs"] = 0
    for key in ("commitTs", "buildTs", "schemaVersion", "tableID"):
        if key in doc:
            doc[key] = _unsigned(doc[key])
    checksum = doc.get("checksum")
    if isinstance(checksum, dict):
        doc["checksum"] = {k: _unsigned(v) for k, v in checksum.items()}
    return doc


def _signed(value: int) -> int:
    value &= _U64
    return value - (1 << 64) if value >= 1 << 63 else value


def write(doc: dict[str, Any]) -> bytes:
    """One Avro datum for a message document whose ``data``/``old`` hold Avro union values."""
    kind = doc["type"]
    if kind == WATERMARK:
        message_type, payload = (
            "WATERMARK",
            {
                "version": doc["version"],
                "commitTs": _signed(doc["commitTs"]),
                "buildTs": doc["buildTs"],
            },
        )
    elif kind == BOOTSTRAP:
        message_type, payload = (
            "BOOTSTRAP",
            {
                "version": doc["version"],
                "buildTs": doc["buildTs"],
                "tableSchema": doc["tableSchema"],
            },
        )
    elif kind in DDL_TYPES:
        message_type, payload = (
            "DDL",
            {
                "version": doc["version"],
                "type": kind,
                "sql": doc.get("sql", ""),
                "commitTs": _signed(doc["commitTs"]),
                "buildTs": doc["buildTs"],
                "tableSchema": doc.get("tableSchema"),
                "preTableSchema": doc.get("preTableSchema"),
            },
        )
    elif kind in DML_TYPES:
        checksum = doc.get("checksum")
        message_type, payload = (
            "DML",
            {
                "version": doc["version"],
                "database": doc["database"],
                "table": doc["table"],
                "tableID": _signed(doc["tableID"]),
                "type": kind,
                "commitTs": _signed(doc["commitTs"]),
                "buildTs": doc["buildTs"],
                "schemaVersion": _signed(doc["schemaVersion"]),
                "claimCheckLocation": doc.get("claimCheckLocation"),
                "handleKeyOnly": doc.get("handleKeyOnly"),
                "checksum": None if checksum is None else dict(checksum),
                "data": doc.get("data"),
                "old": doc.get("old"),
            },
        )
    else:
        raise ValueError(f"no Avro form for message type {kind!r}")
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, SCHEMA, (AVRO_MESSAGE, {"type": message_type, "payload": (AVRO_PAYLOADS[message_type], payload)})
    )
    return out.getvalue()
