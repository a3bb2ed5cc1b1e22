"""The decoder contract across every installed protocol: mutated messages raise only CdcError subclasses.

Seeds are the protocol's golden corpus messages where the corpus has them, and otherwise messages its own encoder
writes for a kitchen-sink row (insert, update, delete) and a DDL.
"""

from __future__ import annotations

import pytest

from cdc_core.errors import CdcError
from cdc_core.registry import installed_codecs
from cdc_testing.contract import assert_only_cdc_errors
from cdc_testing.seeds import seed_messages

CODECS = sorted(installed_codecs())


def _options(protocol: str, request: pytest.FixtureRequest) -> dict[str, object]:
    """What a decoder needs to run at all: the Avro protocols' registry (a real one, Apicurio, from cdc-testing)."""
    if protocol in ("avro", "debezium-avro"):
        return {"schema-registry": request.getfixturevalue("schema_registry").url}
    return {}


@pytest.mark.parametrize("protocol", CODECS)
def test_only_cdc_errors_escape(protocol: str, request: pytest.FixtureRequest) -> None:
    codec = installed_codecs()[protocol]
    options = _options(protocol, request)
    try:
        codec.decoder(options)
    except CdcError as exc:
        pytest.fail(f"{protocol} decoder cannot start with {options}: {exc}")
    seeds = seed_messages(codec, protocol, options)
    assert seeds, f"no seed messages for {protocol}"
    tried = assert_only_cdc_errors(lambda: codec.decoder(options), seeds, max_examples=150)
    assert tried >= 100


def test_every_codec_is_covered() -> None:
    assert "debezium" in CODECS
