"""Shared fixtures: the JSON examples of the Simple protocol spec, and codec factories."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from cdc_core.codec import Decoder, Encoder
from cdc_simple import CODEC
from cdc_testing.corpus import spec_json_blocks

SPEC = "ticdc-simple-protocol.en.txt"


@pytest.fixture(scope="session")
def spec_blocks() -> list[dict[str, Any]]:
    return spec_json_blocks(SPEC)


@pytest.fixture(scope="session")
def spec_messages(spec_blocks: list[dict[str, Any]]) -> dict[str, bytes]:
    """The spec's example messages by type (ALTER, INSERT, UPDATE, DELETE, WATERMARK, BOOTSTRAP)."""
    messages = {b["type"]: json.dumps(b).encode() for b in spec_blocks if "type" in b}
    assert set(messages) == {"ALTER", "INSERT", "UPDATE", "DELETE", "WATERMARK", "BOOTSTRAP"}
    return messages


@pytest.fixture
def make_decoder() -> Callable[..., Decoder]:
    def make(**options: object) -> Decoder:
        return CODEC.decoder(options)

    return make


@pytest.fixture
def make_encoder() -> Callable[..., Encoder]:
    def make(**options: object) -> Encoder:
        return CODEC.encoder(options)

    return make
