"""cdc_core.schema_registry without a server: Confluent framing, settings from a codec's options, the URL checks
(the client against a real registry and a fault-injecting double is tested by cdc-avro and cdc-debezium)."""

from __future__ import annotations

import pytest

from cdc_core.codec import Options
from cdc_core.errors import ConfigError
from cdc_core.schema_registry import (
    TUNING_OPTIONS,
    URL_OPTION,
    FramingError,
    Registry,
    RegistrySettings,
    confluent_frame,
    confluent_unframe,
)


def test_confluent_framing_round_trips() -> None:
    framed = confluent_frame(258, b"datum")
    assert framed == b"\x00\x00\x00\x01\x02datum"
    schema_id, datum = confluent_unframe(framed)
    assert (schema_id, bytes(datum)) == (258, b"datum")


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", "empty payload"), (b"\x03abcdef", "magic byte 0x03"), (b"\x00\x00\x01", "needs 5 bytes, got 3")],
)
def test_what_is_not_confluent_framing_is_said(data: bytes, reason: str) -> None:
    with pytest.raises(FramingError, match=reason):
        confluent_unframe(data)


def test_settings_from_a_codecs_options_name_the_protocol() -> None:
    raw = {"schema-registry": "https://user:secret@registry:8081/base", "schema-registry-timeout": "2.5"}
    options = Options((URL_OPTION, *TUNING_OPTIONS), raw, protocol="p")
    settings = RegistrySettings.of(options, "debezium-avro")
    assert (settings.timeout_s, settings.max_retries, settings.protocol) == (2.5, 3, "debezium-avro")
    assert settings.redacted_url == "https://registry:8081/base"  # no credentials in messages
    with pytest.raises(ConfigError, match=r"^debezium-avro: schema-registry 'ftp://registry/' must be an http"):
        Registry(RegistrySettings(url="ftp://registry/", protocol="debezium-avro"))
    with pytest.raises(ConfigError, match=r"^avro: option schema-registry is required"):
        Registry(RegistrySettings(url=""))
