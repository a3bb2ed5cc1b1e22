"""The decoder contract across every installed protocol: mutated messages raise only CdcError subclasses.

Seeds are the protocol's golden corpus messages where the corpus has them, and otherwise messages its own encoder
writes for a kitchen-sink row (insert, update, delete) and a DDL.
"""

from __future__ import annotations

import pytest

from cdc_core.errors import CdcError
from cdc_core.message import Message
from cdc_core.registry import installed_codecs
from cdc_testing.contract import assert_only_cdc_errors
from cdc_testing.seeds import seed_messages

CODECS = sorted(installed_codecs())


@pytest.mark.parametrize("protocol", CODECS)
def test_only_cdc_errors_escape(protocol: str) -> None:
    codec = installed_codecs()[protocol]
    try:
        codec.decoder()
    except CdcError as exc:  # needs configuration (a registry URL): its package's own fuzz test covers it
        pytest.skip(f"{protocol} decoder needs options: {exc}")
    seeds = seed_messages(codec, protocol)
    if not seeds:
        seeds = [Message(value=b'{"type": "INSERT", "data": [{"id": "1"}]}')]
    tried = assert_only_cdc_errors(codec.decoder, seeds, max_examples=150)
    assert tried >= 100


def test_every_codec_is_covered() -> None:
    assert "debezium" in CODECS
