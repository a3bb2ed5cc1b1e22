"""The contract check catches a decoder that leaks a builtin exception, and passes one that does not."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_core.errors import DecodeError
from cdc_core.events import Event
from cdc_core.message import Message
from cdc_testing.contract import (
    OUT_OF_RANGE,
    assert_only_cdc_errors,
    assert_out_of_range_only_cdc_errors,
    out_of_range_variants,
)

SEED = Message(value=json.dumps({"op": "c", "after": {"id": 1, "name": "a"}}).encode())


class Fragile:
    def decode(self, message: Message) -> list[Event]:
        document = json.loads(message.value or b"")  # leaks ValueError and KeyError
        document["after"]["id"] + 0
        return []


class Careful:
    def decode(self, message: Message) -> list[Event]:
        try:
            document = json.loads(message.value or b"")
            document["after"]["id"] + 0
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise DecodeError.at(message, "toy", str(exc)) from exc
        return []


def test_a_leaking_decoder_is_caught() -> None:
    with pytest.raises(AssertionError, match="escaped the decoder"):
        assert_only_cdc_errors(Fragile, [SEED], max_examples=100)


def test_a_careful_decoder_passes_and_the_count_is_reported() -> None:
    assert assert_only_cdc_errors(Careful, [SEED], max_examples=120) >= 100


class DaysFromEpoch:
    """Reads ``after.day`` as days from 1970-01-01 and forgets that a date has a range (OverflowError leaks)."""

    def decode(self, message: Message) -> list[Event]:
        try:
            document = json.loads(message.value or b"")
            days = int(document["after"]["day"])
        except (ValueError, KeyError, TypeError) as exc:
            raise DecodeError.at(message, "toy", str(exc)) from exc
        dt.date.fromordinal(dt.date(1970, 1, 1).toordinal() + days)
        return []


DAY_SEED = Message(value=json.dumps({"op": "c", "after": {"id": 1, "day": 19000}}).encode())


def test_an_out_of_range_leak_is_caught_deterministically() -> None:
    """A Date of 10^18 days is among the variants tried, every run, without relying on random search."""
    with pytest.raises(AssertionError, match="OverflowError escaped"):
        assert_out_of_range_only_cdc_errors(DaysFromEpoch, [DAY_SEED])


def test_out_of_range_variants_replace_each_number_and_string_in_turn() -> None:
    variants = list(out_of_range_variants({"a": 1, "b": ["x"], "c": None}))
    assert variants[: len(OUT_OF_RANGE)] == [{"a": v, "b": ["x"], "c": None} for v in OUT_OF_RANGE]
    assert variants[len(OUT_OF_RANGE) :] == [{"a": 1, "b": [v], "c": None} for v in OUT_OF_RANGE]  # null kept
