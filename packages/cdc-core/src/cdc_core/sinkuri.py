"""TiCDC Kafka sink URIs: ``kafka://HOST:PORT[,HOST:PORT]/TOPIC?protocol=...&...`` as a changefeed is created with.

One URI names the protocol, the topic, the brokers and the codec options. Its parameters are TiCDC's: those
of its codec config (``enable-tidb-extension``, ``content-compatible``, ``avro-*``, ``schema-registry``, ...) and
of its Kafka client (``kafka-version``, ``partition-num``, ``replication-factor``, ``compression``, SASL and TLS,
...), listed in `TICDC_PARAMETERS`. A codec takes every one of them: those it has an option for are used, the
others (they shape only the producer's output or its Kafka client) are ignored with an `IgnoredOptionsWarning`.
Only a name that is neither a TiCDC parameter nor an option of the codec is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

import attrs

from cdc_core.codec import Decoder, Encoder
from cdc_core.errors import ConfigError
from cdc_core.registry import get_codec
from cdc_core.secrets import redact_options
from cdc_core.sinkparams import DECODER_ALIASES, KAFKA_PARAMETERS, TICDC_PARAMETERS

__all__ = ["CONSUMER_PARAMETERS", "DECODER_ALIASES", "KAFKA_PARAMETERS", "TICDC_PARAMETERS", "SinkUri"]

SCHEMES: Final = ("kafka", "kafka+ssl")
# The Kafka client parameters `SinkUri.consumer_config` turns into librdkafka settings.
CONSUMER_PARAMETERS: Final = frozenset(
    {"enable-tls", "ca", "cert", "key", "insecure-skip-verify", "sasl-user", "sasl-password", "sasl-mechanism"}
    | {"kafka-client-id"}
)


@attrs.frozen(kw_only=True)
class SinkUri:
    """A parsed TiCDC Kafka sink URI."""

    protocol: str
    topic: str | None
    brokers: tuple[str, ...]
    parameters: dict[str, str] = attrs.field(
        repr=lambda p: repr(redact_options(p))
    )  # every query parameter but protocol
    tls: bool = False

    @classmethod
    def parse(cls, uri: str, *, protocol_required: bool = True) -> SinkUri:
        """The URI's parts; ``protocol_required=False`` lets a URI name no protocol (``protocol`` then empty), for a
        caller that gets it elsewhere (``cdc decode --protocol``; TiCDC's Simple docs put it in the changefeed's
        config file)."""
        try:
            parts = urlsplit(uri.strip())
        except ValueError as exc:
            raise ConfigError(f"sink URI: {exc}") from None
        if parts.scheme not in SCHEMES:
            raise ConfigError(f"sink URI: scheme {parts.scheme or '(none)'!r} is not one of {', '.join(SCHEMES)}")
        brokers = tuple(b for b in parts.netloc.split(",") if b)
        if not brokers:
            raise ConfigError("sink URI: no broker address (kafka://HOST:PORT/TOPIC?protocol=...)")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        parameters: dict[str, str] = {}
        for name, value in pairs:
            if name in parameters:
                raise ConfigError(f"sink URI: parameter {name} given twice")
            parameters[name] = value
        protocol = parameters.pop("protocol", "")
        if not protocol and protocol_required:
            raise ConfigError("sink URI: parameter protocol is required (debezium, simple, avro, canal-json)")
        topic = unquote(parts.path.lstrip("/")) or None
        return cls(protocol=protocol, topic=topic, brokers=brokers, parameters=parameters, tls=parts.scheme != "kafka")

    def protocol_given(self, given: str | None, *, flag: str) -> str:
        """The protocol: the URI's, or ``given`` (the caller's ``flag``) where the URI names none; the two must
        agree where both are set."""
        if given is not None and self.protocol and given != self.protocol:
            raise ConfigError(f"{flag} {given} contradicts the sink URI's protocol={self.protocol}")
        chosen = given or self.protocol
        if not chosen:
            raise ConfigError(f"the sink URI names no protocol: give {flag} (or protocol=... in the URI)")
        return chosen

    def options(self, extra: Mapping[str, object] | None = None) -> dict[str, object]:
        """The codec options: the URI's parameters, then ``extra`` (``--option``) on top."""
        return {**self.parameters, **(extra or {})}

    def decoder(self, extra: Mapping[str, object] | None = None) -> Decoder:
        return get_codec(self.protocol).decoder(self.options(extra))

    def encoder(self, extra: Mapping[str, object] | None = None) -> Encoder:
        return get_codec(self.protocol).encoder(self.options(extra))

    def consumer_config(self) -> dict[str, Any]:
        """librdkafka settings for reading the sink's topic: the brokers, and TiCDC's SASL/TLS parameters."""
        p = self.parameters
        config: dict[str, Any] = {"bootstrap.servers": ",".join(self.brokers)}
        tls = self.tls or p.get("enable-tls", "").lower() == "true" or bool(p.get("ca"))
        sasl = bool(p.get("sasl-mechanism") or p.get("sasl-user"))
        if tls or sasl:
            config["security.protocol"] = ("SASL_" if sasl else "") + ("SSL" if tls else "PLAINTEXT")
        if sasl:
            config["sasl.mechanism"] = _SASL_MECHANISMS.get(p.get("sasl-mechanism", "plain").lower(), "PLAIN")
            if "sasl-user" in p:
                config["sasl.username"] = p["sasl-user"]
            if "sasl-password" in p:
                config["sasl.password"] = p["sasl-password"]
        for name, setting in (
            ("ca", "ssl.ca.location"),
            ("cert", "ssl.certificate.location"),
            ("key", "ssl.key.location"),
        ):
            if p.get(name):
                config[setting] = p[name]
        if p.get("insecure-skip-verify", "").lower() == "true":
            config["enable.ssl.certificate.verification"] = False
        if p.get("kafka-client-id"):
            config["client.id"] = p["kafka-client-id"]
        return config


_SASL_MECHANISMS: Final = {
    "plain": "PLAIN",
    "scram-sha-256": "SCRAM-SHA-256",
    "scram-sha-512": "SCRAM-SHA-512",
    "gssapi": "GSSAPI",
    "oauthbearer": "OAUTHBEARER",
}
