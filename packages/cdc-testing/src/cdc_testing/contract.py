"""The decoder contract, as a reusable check: whatever the input, only ``CdcError`` subclasses escape a decoder.

:func:`mutations` derives hostile inputs from a good message (truncation, bit flips, byte insertion and deletion,
invalid UTF-8, and for JSON seeds: values of the wrong type, huge numbers, deep nesting, dropped keys);
:func:`assert_only_cdc_errors` runs a fresh decoder over them with hypothesis and returns how many it tried.
:func:`out_of_range_variants` is the deterministic part: every number and string of a JSON seed in turn replaced by
values past the range of whatever it stands for (a Date of 10^18 days, 64-bit overflow, a length or scale of
10^40); random search finds such a field only by luck, so these are tried exhaustively and first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.codec import Decoder
from cdc_core.errors import CdcError
from cdc_core.message import Message

_ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**64,
    -(2**63) - 1,
    10**40,
    1.5e308,
    "",
    "x" * 300,
    [],
    {},
    [None],
    {"": 1},
]


# Past the range of a temporal integer (days, microseconds, nanoseconds), of 64 bits, of a FLOAT (3.5e38), of a
# double, and the same magnitudes as text: each replaces every number and string of a seed, one at a time.
OUT_OF_RANGE: tuple[Any, ...] = (
    10**18,
    -(10**18),
    2**64,
    -(2**63) - 1,
    10**40,
    3.5e38,
    1.5e308,
    -1.5e308,
    "1000000000000000000",
    "3.5e38",
    "-99999999999999999999999999999999999999999",
    "1e400",
)


def _byte_mutations(seed: bytes) -> st.SearchStrategy[bytes]:
    size = max(len(seed), 1)
    truncated = st.integers(0, size).map(lambda n: seed[:n])
    flipped = st.tuples(st.integers(0, size - 1), st.integers(0, 7)).map(
        lambda p: seed[: p[0]] + bytes([seed[p[0]] ^ (1 << p[1])]) + seed[p[0] + 1 :] if seed else b"\x01"
    )
    inserted = st.tuples(st.integers(0, size), st.binary(min_size=1, max_size=8)).map(
        lambda p: seed[: p[0]] + p[1] + seed[p[0] :]
    )
    deleted = st.tuples(st.integers(0, size), st.integers(1, 16)).map(lambda p: seed[: p[0]] + seed[p[0] + p[1] :])
    bad_utf8 = st.integers(0, size).map(lambda n: seed[:n] + b"\xff\xfe\xc3" + seed[n:])
    return st.one_of(truncated, flipped, inserted, deleted, bad_utf8, st.binary(max_size=64))


def json_paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and list indexes, the first 8 items of a list) in a parsed JSON document, root first."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += json_paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document[:8]):
            found += json_paths(value, (*prefix, index))
    return found


def replace_at(document: Any, path: tuple[Any, ...], value: Any, drop: bool = False) -> Any:
    """A copy of ``document`` with the node at ``path`` replaced by ``value`` (or its key dropped: ``drop``)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        copy = dict(document)
        if drop and not rest:
            copy.pop(head, None)
        else:
            copy[head] = replace_at(copy[head], rest, value, drop)
        return copy
    copy_list = list(document)
    copy_list[head] = replace_at(copy_list[head], rest, value, drop)
    return copy_list


def out_of_range_variants(document: Any) -> Iterator[Any]:
    """``document`` with each number and string leaf replaced by each `OUT_OF_RANGE` value, in document order."""
    for path in json_paths(document):
        node: Any = document
        for step in path:
            node = node[step]
        if path and type(node) in (int, float, str):
            for value in OUT_OF_RANGE:
                if value != node:
                    yield replace_at(document, path, value)


def assert_out_of_range_only_cdc_errors(make_decoder: Callable[[], Decoder], seeds: Sequence[Message]) -> int:
    """Decode every `out_of_range_variants` of each JSON seed's value and key; fail if anything but CdcError escapes.

    Deterministic (no hypothesis): the same variants in the same order every run. Returns how many were decoded.
    """
    tried = 0
    for seed in seeds:
        for part in ("value", "key"):
            raw = seed.value if part == "value" else seed.key
            try:
                document = json.loads(raw or b"")
            except ValueError:
                continue
            for variant in out_of_range_variants(document):
                text = json.dumps(variant).encode()
                message = Message(
                    value=text if part == "value" else seed.value,
                    key=text if part == "key" else seed.key,
                    topic="out-of-range",
                    partition=0,
                    offset=tried,
                )
                tried += 1
                try:
                    make_decoder().decode(message)
                except CdcError:
                    pass
                except Exception as exc:
                    raise AssertionError(
                        f"{type(exc).__name__} escaped the decoder (only CdcError may): {exc!r}\n{part}={text!r}"
                    ) from exc
    return tried


def _json_mutations(document: Any) -> st.SearchStrategy[bytes]:
    paths = json_paths(document)
    deep = st.integers(50, 5000).map(lambda n: "[" * n + "]" * n)
    odd = st.sampled_from(_ODD_VALUES)
    replaced = st.tuples(st.sampled_from(paths), odd, st.booleans()).map(
        lambda p: json.dumps(replace_at(document, p[0], p[1], p[2] and len(p[0]) > 0)).encode()
    )
    nested = st.tuples(st.sampled_from(paths), deep).map(
        lambda p: json.dumps(replace_at(document, p[0], "@@", False)).replace('"@@"', p[1]).encode()
    )
    return st.one_of(replaced, nested)


def mutations(seed: bytes) -> st.SearchStrategy[bytes]:
    """Hostile variants of ``seed``; JSON-aware when the seed is a JSON document."""
    strategies = [_byte_mutations(seed)]
    try:
        document = json.loads(seed)
    except ValueError:
        document = None
    if isinstance(document, dict | list):
        strategies.append(_json_mutations(document))
    return st.one_of(strategies)


def assert_only_cdc_errors(
    make_decoder: Callable[[], Decoder], seeds: Sequence[Message], *, max_examples: int = 200
) -> int:
    """Decode mutated seeds (value and key) with a fresh decoder each; fail if anything but CdcError escapes.

    The out-of-range variants of every JSON seed come first (`assert_out_of_range_only_cdc_errors`, not counted in
    the return value), then ``max_examples`` random mutations (hypothesis, derandomized).
    """
    if not seeds:
        raise ValueError("assert_only_cdc_errors needs at least one seed message")
    assert_out_of_range_only_cdc_errors(make_decoder, seeds)
    tried = 0

    def mutated(seed: Message) -> st.SearchStrategy[Message]:
        values = mutations(seed.value or b"")
        keys = st.one_of(st.just(seed.key), mutations(seed.key or b"{}"))
        return st.tuples(values, keys).map(
            lambda vk: Message(value=vk[0], key=vk[1], topic="fuzz", partition=0, offset=tried)
        )

    @settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        report_multiple_bugs=False,
    )
    @given(st.sampled_from(list(seeds)).flatmap(mutated))
    def check(message: Message) -> None:
        nonlocal tried
        tried += 1
        decoder = make_decoder()
        try:
            decoder.decode(message)
        except CdcError:
            pass
        except Exception as exc:
            raise AssertionError(
                f"{type(exc).__name__} escaped the decoder (only CdcError may): {exc!r}\n"
                f"value={message.value!r}\nkey={message.key!r}"
            ) from exc

    check()
    return tried
