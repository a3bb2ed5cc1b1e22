"""Each protocol's JVM decode rules are found by entry point, and a protocol without them is left to its codec."""

from __future__ import annotations

import logging
import warnings
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from cdc_spark.decoding import adapters, avro, canal, debezium, debezium_avro, simple
from cdc_spark.decoding.adapters import GROUP, adapter_factory
from cdc_spark.decoding.reuse import Reuse


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


@pytest.mark.parametrize(
    ("protocol", "options"),
    [
        ("canal-json", {"enable-tidb-extension": "true", "time-zone": "Asia/Shanghai"}),  # an encoder-only option
        ("simple", {"encoding-format": "json", "max-message-bytes": "1048576"}),
        ("debezium", {"enable-tidb-extension": "true", "protocol": "debezium"}),  # and a sink-URI parameter
        ("debezium-avro", {"schema-registry": "http://127.0.0.1:1", "enable-tidb-extension": "true"}),
        ("avro", {"schema-registry": "http://127.0.0.1:1", "enable-tidb-extension": "true"}),
    ],
)
def test_each_adapter_takes_the_options_its_codecs_decoder_takes(protocol: str, options: dict[str, object]) -> None:
    """Options a changefeed's sink URI or encoder carries, which the codec's decoder ignores (with a warning), are
    ignored by the Spark adapter too (they made ``cdc apply`` fail after its options were checked); a name neither
    side knows is refused by both."""
    from cdc_core.errors import ConfigError
    from cdc_core.registry import get_codec, installed_codecs

    if protocol not in installed_codecs():
        pytest.skip(f"needs {protocol}")
    # the adapters themselves (their factories add the session's Java readers, which need Spark)
    made = {
        "canal-json": lambda o: canal.CanalAdapter(o, "UTC"),
        "simple": lambda o: simple.SimpleAdapter(o, "UTC"),
        "debezium": lambda o: debezium.DebeziumAdapter(o, "UTC"),
        "debezium-avro": lambda o: debezium_avro.DebeziumAvroAdapter(o, "UTC"),
        "avro": lambda o: avro.AvroAdapter(o, "UTC", Reuse(capacity=1)),
    }[protocol]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        get_codec(protocol).decoder(options)
        assert made(options).protocol == protocol
        for make in (get_codec(protocol).decoder, made):
            with pytest.raises(ConfigError, match="no-such-option"):
                make({**options, "no-such-option": "1"})
