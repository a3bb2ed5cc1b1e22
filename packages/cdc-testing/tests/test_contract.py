"""The contract check catches a decoder that leaks a builtin exception, and passes one that does not."""

from __future__ import annotations

import json

import pytest

from cdc_core.errors import DecodeError
from cdc_core.events import Event
from cdc_core.message import Message
from cdc_testing.contract import assert_only_cdc_errors

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
