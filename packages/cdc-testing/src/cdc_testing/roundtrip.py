"""Decode then encode: does a stream of messages come back field for field?

A *flavour* is one protocol with the options that shape its messages (Canal-JSON as TiCDC writes it, with
``content-compatible``, or as official Canal does; Simple in JSON or Avro...). :func:`replay` decodes messages
with one decoder and encodes the events with a fresh encoder of the same options; :func:`differences` compares
the two streams field by field (JSON documents and Avro datums flattened to paths), leaving out only the fields
that record when a message was built (Canal's ``ts``, Simple's ``buildTs``, Debezium's ``payload.ts_ms``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from cdc_core.codec import Encoder, decode_all
from cdc_core.events import Event
from cdc_core.message import Message
from cdc_core.registry import get_codec

# Fields that say when the message was built, by protocol: (part, path) with path as `flat` writes it.
BUILD_TIME: Final[Mapping[str, frozenset[str]]] = {
    "canal-json": frozenset({"value.ts"}),
    "simple": frozenset({"value.buildTs", "value.payload.buildTs"}),
    "debezium": frozenset({"value.payload.ts_ms"}),
    "avro": frozenset(),
}


@attrs.frozen
class Flavour:
    """One protocol and the options its messages are written (and read) with."""

    name: str
    protocol: str
    options: Mapping[str, str] = attrs.field(factory=dict)

    def side(self, *, decoder: bool) -> dict[str, str]:
        """The options one side takes (the other side's are left out rather than warned about)."""
        specs = get_codec(self.protocol).options
        names = {s.name for s in specs if (s.for_decoder if decoder else s.for_encoder)}
        return {k: v for k, v in self.options.items() if k in names}

    def with_options(self, **options: str) -> Flavour:
        return attrs.evolve(self, options={**self.options, **options})


# Every protocol and flavour whose messages carry what their decoder needs to type them (Debezium without its
# schema needs a table-schema file, and is left out).
FLAVOURS: Final = (
    Flavour("canal-json", "canal-json", {"enable-tidb-extension": "true"}),
    Flavour("canal-json-plain", "canal-json"),
    Flavour(
        "canal-json-content-compatible", "canal-json", {"enable-tidb-extension": "true", "content-compatible": "true"}
    ),
    Flavour("canal-official", "canal-json", {"flavour": "canal"}),
    Flavour("debezium", "debezium"),
    Flavour("debezium-tidb", "debezium", {"enable-tidb-extension": "true"}),
    Flavour("debezium-no-old-value", "debezium", {"output-old-value": "false"}),
    Flavour("simple-json", "simple", {"encoding-format": "json"}),
    Flavour("simple-avro", "simple", {"encoding-format": "avro"}),
    Flavour("avro-precise", "avro", {"enable-tidb-extension": "true"}),
    Flavour(
        "avro-string", "avro", {"avro-decimal-handling-mode": "string", "avro-bigint-unsigned-handling-mode": "string"}
    ),
)


def located(messages: Iterable[Message]) -> list[Message]:
    """The messages as a consumer receives them: each at its own offset of its topic-partition."""
    return [
        attrs.evolve(m, topic=m.topic or "t", partition=m.partition or 0, offset=offset)
        for offset, m in enumerate(messages)
    ]


def decode(flavour: Flavour, messages: Iterable[Message]) -> list[Event]:
    return decode_all(get_codec(flavour.protocol).decoder(flavour.side(decoder=True)), located(messages))


def encoder_of(flavour: Flavour) -> Encoder:
    return get_codec(flavour.protocol).encoder(flavour.side(decoder=False))


def encode(flavour: Flavour, events: Iterable[Event]) -> list[Message]:
    encoder = encoder_of(flavour)
    return [message for event in events for message in encoder.encode(event)]


def replay(flavour: Flavour, messages: Sequence[Message]) -> list[Message]:
    """``messages`` decoded, and the events encoded again with the same options."""
    return encode(flavour, decode(flavour, messages))


def flat(document: Any, path: str) -> dict[str, Any]:
    """A JSON document or Avro datum as ``{path: leaf}`` (objects by key, arrays by index, bytes as they are)."""
    if isinstance(document, dict):
        out: dict[str, Any] = {}
        for key, value in document.items():
            out.update(flat(value, f"{path}.{key}"))
        return out or {path: {}}
    if isinstance(document, list | tuple):
        out = {}
        for i, value in enumerate(document):
            out.update(flat(value, f"{path}[{i}]"))
        return out or {path: []}
    return {path: document}


def fields(flavour: Flavour, message: Message) -> dict[str, Any]:
    """Every field of ``message`` but the build-time ones, as ``{path: leaf}`` (``key.…``, ``value.…``)."""
    out: dict[str, Any] = {"topic": message.topic, "partition": message.partition}
    for part, raw in (("key", message.key), ("value", message.value)):
        if raw is None:
            out[part] = None
        elif flavour.protocol == "avro":
            out[part] = raw  # Confluent-framed datums, byte for byte (the same registry gives the same ids)
        elif flavour.protocol == "simple" and flavour.options.get("encoding-format") == "avro":
            from cdc_simple import avro

            out.update(flat(avro.read(raw), part))
        else:
            out.update(flat(json.loads(raw), part))
    for path in BUILD_TIME[flavour.protocol]:
        out.pop(path, None)
    return out


def differences(flavour: Flavour, original: Sequence[Message], again: Sequence[Message]) -> list[str]:
    """Each field that differs between the two streams, as ``message N path: before -> after``."""
    found: list[str] = []
    if len(original) != len(again):
        found.append(f"{len(original)} messages became {len(again)}")
    for number, (before, after) in enumerate(zip(original, again, strict=False)):
        a, b = fields(flavour, before), fields(flavour, after)
        for path in sorted(a.keys() | b.keys()):
            if a.get(path, "<absent>") != b.get(path, "<absent>"):
                found.append(f"message {number} {path}: {a.get(path, '<absent>')!r} -> {b.get(path, '<absent>')!r}")
    return found


def field_count(flavour: Flavour, messages: Iterable[Message]) -> int:
    return sum(len(fields(flavour, m)) for m in messages)


# ----------------------------------------------------------------------------- the TiCDC messages
#
# What TiCDC's Canal-JSON encoder writes (reference 5.1-5.3) for a table with DECIMAL(18,4), DATETIME(6),
# TIMESTAMP(3) and TIME(3) columns: bare mysqlType names, so the precision, scale and fsp are nowhere but in
# the values' own digits. Before, decode then encode rounded 12345678901234.5678 to 12345678901235, -0.0001 to
# -0, and cut every fraction (838:59:59.000 to 838:59:59).

_MYSQL_TYPES = {
    "id": "int",
    "c_decimal": "decimal",
    "c_datetime": "datetime",
    "c_timestamp": "timestamp",
    "c_time": "time",
    "c_bit": "bit",
    "c_year": "year",
    "c_float": "float",
    "c_u64": "bigint unsigned",
}
_SQL_TYPES = {
    "id": 4,
    "c_decimal": 3,
    "c_datetime": 93,
    "c_timestamp": 93,
    "c_time": 92,
    "c_bit": -7,
    "c_year": 12,
    "c_float": 7,
    "c_u64": 3,  # TiCDC promotes a BIGINT UNSIGNED value above 2^63-1 to DECIMAL's code (reference 5.4)
}
_ROW_1 = {
    "id": "1",
    "c_decimal": "12345678901234.5678",
    "c_datetime": "2024-02-29 12:34:56.123456",
    "c_timestamp": "2024-02-29 12:34:56.789",
    "c_time": "-12:34:56.789",
    "c_bit": "5",
    "c_year": "2024",
    "c_float": "3.25",
    "c_u64": "18446744073709551615",
}
_ROW_2 = {
    **_ROW_1,
    "c_decimal": "-0.0001",
    "c_datetime": "2024-02-29 12:34:56.120000",
    "c_timestamp": "2024-02-29 12:34:56.000",
    "c_time": "838:59:59.000",
    "c_bit": "0",
}


def _canal(kind: str, old: list[dict[str, Any]] | None, data: list[dict[str, Any]], commit_ts: int) -> bytes:
    document = {
        "id": 0,
        "database": "shop",
        "table": "orders",
        "pkNames": ["id"],
        "isDdl": False,
        "type": kind,
        "es": commit_ts >> 18,
        "ts": 1709210096000,
        "sql": "",
        "sqlType": _SQL_TYPES,
        "mysqlType": _MYSQL_TYPES,
        "old": old,
        "data": data,
        "_tidb": {"commitTs": commit_ts},
    }
    return json.dumps(document, separators=(",", ":")).encode()


TICDC_CANAL = [
    _canal("INSERT", None, [_ROW_1], 448020391014875137),
    _canal("UPDATE", [_ROW_1], [_ROW_2], 448020391014875138),
    _canal("DELETE", None, [_ROW_2], 448020391014875139),
]
