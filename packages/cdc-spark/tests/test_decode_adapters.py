"""Each protocol's JVM decode rules are found by entry point, and a protocol without them is left to its codec."""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from cdc_spark.decoding import adapters, avro, canal, debezium, debezium_avro, simple
from cdc_spark.decoding.adapters import GROUP, adapter_factory


def test_every_adapter_of_cdc_spark_is_found_by_its_protocols_name() -> None:
    found = {name: adapter_factory(name) for name in ("canal-json", "debezium", "debezium-avro", "simple", "avro")}
    assert found == {
        "canal-json": canal.adapter,
        "debezium": debezium.adapter,
        "debezium-avro": debezium_avro.adapter,
        "simple": simple.adapter,
        "avro": avro.adapter,
    }
    assert adapter_factory("no-such-protocol") is None


def test_an_adapter_that_cannot_be_imported_leaves_its_protocol_to_the_codec(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A package that registers an adapter whose module does not import (a missing dependency, say): the protocol is
    decoded by its codec, and the log says why."""
    broken = EntryPoint(name="broken", value="cdc_spark.decoding.no_such_module:adapter", group=GROUP)

    def registered(*, group: str, name: str) -> list[Any]:
        return [broken] if (group, name) == (GROUP, "broken") else []

    monkeypatch.setattr(adapters, "entry_points", registered)
    with caplog.at_level(logging.WARNING, logger=adapters.__name__):
        assert adapter_factory("broken") is None
    assert "decode adapter broken (cdc_spark.decoding.no_such_module:adapter) cannot be imported" in caplog.text
