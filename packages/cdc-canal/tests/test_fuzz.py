"""Mutation fuzzing seeded from the corpus and the encoder's own output: only `CdcError` may escape.

Mutations: truncation, bit flips, invalid UTF-8, deep nesting, huge numbers and every field replaced by a
value of another JSON type (recursively, inside rows and type maps too).
"""

from __future__ import annotations

import json

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.errors import CdcError
from cdc_core.events import DDLEvent, DDLType, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.tso import compose
from cdc_testing.contract import assert_out_of_range_only_cdc_errors, json_paths, replace_at
from cdc_testing.corpus import corpus_files
from cdc_testing.seeds import edge_changes


def _seeds() -> list[bytes]:
    seeds = [p.read_bytes() for p in corpus_files("tiflow/pkg/sink/codec/canal/**/*.json")]
    codec = get_codec("canal-json")
    for options in ({"enable-tidb-extension": True}, {"flavour": "canal"}, {"content-compatible": True}):
        encoder = codec.encoder(options)
        ts = compose(1_700_000_000_000)
        for event in (
            *edge_changes(ts),
            DDLEvent(ddl_type=DDLType.ALTER, sql="alter table t add c int", database="test", table="t", commit_ts=ts),
            Watermark(ts=ts),
        ):
            seeds += [m.value for m in encoder.encode(event) if m.value is not None]
    return seeds


SEEDS = _seeds()
ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        1 << 64,
        -(1 << 63) - 1,
        1e308,
        "",
        "x",
        "\u0100",
        "99999999999999999999999",
        [],
        {},
        [[]],
        {"a": None},
        "0000-00-00",
        "-838:59:59.999999",
        "[1,2",
        "1e39",
    ]
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    seed = draw(st.sampled_from(SEEDS))
    kind = draw(st.sampled_from(["truncate", "flip", "utf8", "nest", "replace", "drop", "replace"]))
    if kind == "truncate":
        return seed[: draw(st.integers(0, len(seed)))]
    if kind == "flip":
        data = bytearray(seed)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "utf8":
        i = draw(st.integers(0, len(seed)))
        return seed[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + seed[i:]
    if kind == "nest":
        depth = draw(st.integers(100, 5000))
        return b'{"type":"INSERT","database":"d","table":"t","pkNames":[],"data":' + b"[" * depth + b"]" * depth + b"}"
    document = orjson.loads(seed)
    path = draw(st.sampled_from(json_paths(document)[1:]))
    if kind == "drop":
        parent, last = path[:-1], path[-1]
        target = document
        for step in parent:
            target = target[step]
        target.pop(last)  # dict key or list index
        return orjson.dumps(document)
    # stdlib json: orjson refuses integers beyond 64 bits, which are exactly what should be tried
    return json.dumps(replace_at(document, path, draw(ODD_VALUES)), ensure_ascii=False).encode()


TRIED = {"inputs": 0}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=mutated(), zone=st.sampled_from(["UTC", "Asia/Shanghai"]))
def test_only_cdc_errors_escape(value: bytes, zone: str) -> None:
    TRIED["inputs"] += 1
    decoder = get_codec("canal-json").decoder({"time-zone": zone})
    try:
        events = decoder.decode(Message(value=value, topic="fuzz", partition=0, offset=TRIED["inputs"]))
    except CdcError:
        return
    assert isinstance(events, list)


def test_seeds_decode_cleanly() -> None:
    decoder = get_codec("canal-json").decoder()
    decoded = [decoder.decode(Message(value=seed)) for seed in SEEDS]
    # 3 corpus messages; per option set update, delete, DDL (+ watermark with the extension)
    assert len(decoded) == 3 + 4 + 3 + 3 and all(isinstance(events, list) for events in decoded)


def test_out_of_range_values_give_typed_errors() -> None:
    """Every number and string of the encoder's messages, in turn, past its range (a date of 10^18, 2^64, 1e400
    where a length or a value was): deterministic, since random search reaches such a field only by luck."""
    seeds = [Message(value=seed) for seed in SEEDS[3:]]  # the encoder's kitchen-sink row, DDL and watermark
    assert assert_out_of_range_only_cdc_errors(get_codec("canal-json").decoder, seeds) > 1_000
