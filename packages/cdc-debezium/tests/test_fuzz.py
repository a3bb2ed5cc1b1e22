"""Mutation fuzzing seeded from the corpus and the encoder's own output: only `CdcError` may escape.

Mutations: truncation, bit flips, invalid UTF-8, deep nesting, huge numbers, and any field (at any depth,
in payloads, field schemas, keys and tableChanges) replaced by a value of another JSON type.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.codec import Options
from cdc_core.errors import CdcError
from cdc_core.events import DDLEvent, DDLType, Watermark
from cdc_core.message import Message
from cdc_core.tso import compose
from cdc_debezium import OPTIONS, DebeziumDecoder, DebeziumEncoder
from cdc_testing.contract import assert_out_of_range_only_cdc_errors, json_paths, replace_at
from cdc_testing.corpus import corpus_files
from cdc_testing.seeds import SCHEMA, edge_changes


def _options(encoder: bool, raw: dict[str, object]) -> Options:
    return Options([s for s in OPTIONS if (s.for_encoder if encoder else s.for_decoder)], raw, protocol="debezium")


def _encoded(options: dict[str, object]) -> list[tuple[bytes | None, bytes]]:
    """What the encoder writes with ``options`` for the kitchen-sink row (update, delete), a DDL and a watermark."""
    ts = compose(1_700_000_000_000)
    events = (
        *edge_changes(ts),
        DDLEvent(
            ddl_type=DDLType.CREATE,
            sql="create table t",
            database="test",
            table="kitchen_sink",
            commit_ts=ts,
            table_schema=SCHEMA,
        ),
        Watermark(ts=ts),
    )
    encoder = DebeziumEncoder(_options(True, options))
    return [(m.key, m.value) for event in events for m in encoder.encode(event) if m.value is not None]


ENCODER_OPTIONS: list[dict[str, object]] = [{"enable-tidb-extension": True}, {"debezium-disable-schema": True}, {}]


def _seeds() -> list[tuple[bytes | None, bytes]]:
    seeds: list[tuple[bytes | None, bytes]] = [
        (None, path.read_bytes()) for path in corpus_files("*/pkg/sink/codec/debezium/**/*.json")
    ]
    for options in ENCODER_OPTIONS:
        seeds += _encoded(options)
    return seeds


SEEDS = _seeds()
DECODERS = (
    DebeziumDecoder(_options(False, {})),
    DebeziumDecoder(_options(False, {"decimal.handling.mode": "precise"}), schemas=[SCHEMA]),
    DebeziumDecoder(
        _options(False, {"binary.handling.mode": "hex", "time.precision.mode": "connect"}), schemas=[SCHEMA]
    ),
)
ODD_VALUES = st.sampled_from(
    [None, True, 0, -1, 1 << 64, -(1 << 63) - 1, 10**40, 1.5e308, -0.0, "", "x", "AAAA", "!!", "2024-13-45",
     "-", [], [1], {}, {"a": 1}, {"scale": "x", "value": 3}]
)  # fmt: skip


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes | None, bytes]:
    key, value = draw(st.sampled_from(SEEDS))
    kind = draw(st.sampled_from(["truncate", "flip", "utf8", "field", "nest", "number", "key"]))
    if kind == "truncate":
        return key, value[: draw(st.integers(0, max(len(value) - 1, 0)))]
    if kind == "flip":
        data = bytearray(value)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        return key, bytes(data)
    if kind == "utf8":
        i = draw(st.integers(0, len(value)))
        return key, value[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + value[i:]
    if kind == "nest":
        depth = draw(st.integers(200, 3000))
        return key, b'{"payload":' + b"[" * depth + b"]" * depth + b"}"
    if kind == "number":
        digits = draw(st.integers(17, 400))
        return key, value.replace(b"1", b"9" * digits, 1).replace(b"0.", b"0." + b"7" * digits, 1)
    document = orjson.loads(value)
    target = key if kind == "key" and key else None
    if target is not None:
        key_doc = orjson.loads(target)
        path = draw(st.sampled_from(json_paths(key_doc)))
        return _dumps(replace_at(key_doc, path, draw(ODD_VALUES))), value
    path = draw(st.sampled_from(json_paths(document)))
    return key, _dumps(replace_at(document, path, draw(ODD_VALUES)))


TRIED = {"inputs": 0}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated(), st.sampled_from(range(len(DECODERS))))
def test_only_cdc_errors_escape(message: tuple[bytes | None, bytes], which: int) -> None:
    key, value = message
    TRIED["inputs"] += 1
    try:
        events = DECODERS[which].decode(Message(key=key, value=value, topic="fuzz", partition=0, offset=1))
    except CdcError:
        return
    assert isinstance(events, list)


def test_seeds_decode_cleanly() -> None:
    """The unmutated seeds are valid: every one decodes (so the fuzz test starts from real messages)."""
    key_files = {p.read_bytes() for p in corpus_files("*/pkg/sink/codec/debezium/**/*.json") if ".key." in p.name}
    decoded = 0
    for key, value in SEEDS:
        if value not in key_files:  # key documents are seeds for mutation, not values
            decoded += len(DECODERS[0].decode(Message(key=key, value=value)))
    assert decoded >= 30


def test_out_of_range_values_give_typed_errors() -> None:
    """Every number and string of every seed, in turn, past its range (a Date of 10^18 days, 2^64, 1e400): the
    deterministic half of the contract, tried exhaustively because random search reaches such a field by luck."""
    # each decoder with one option set's messages: TiDB extension (types from tidb_type), schemaless (types from
    # the user's TableSchema), plain (types from the wire schema)
    for decoder, options in zip(DECODERS, ENCODER_OPTIONS, strict=True):
        seeds = [Message(key=key, value=value) for key, value in _encoded(options)]
        assert assert_out_of_range_only_cdc_errors(itertools.repeat(decoder).__next__, seeds) > 500
