"""Shared fixtures: the JSON examples of the Simple protocol spec, and codec factories."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from cdc_core.codec import Decoder, Encoder
from cdc_simple import CODEC
from cdc_testing.corpus import shared_dir

SPEC = "specs/ticdc-simple-protocol.en.txt"


def _json_blocks(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object printed in the spec (a line that is exactly ``{`` up to its closing brace)."""
    blocks: list[dict[str, Any]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "{":
            depth, body = 0, []
            for line in lines[i:]:
                body.append(line)
                depth += line.count("{") - line.count("}")
                if depth == 0:
                    break
            blocks.append(json.loads("\n".join(body)))
            i += len(body)
        else:
            i += 1
    return blocks


@pytest.fixture(scope="session")
def spec_blocks() -> list[dict[str, Any]]:
    path = shared_dir() / SPEC
    if not path.is_file():
        pytest.fail(f"the Simple protocol spec is missing: {path}")
    return _json_blocks(path.read_text(encoding="utf-8"))


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
