"""The parameters of TiCDC's Kafka sink URI, which every codec accepts (see `cdc_core.sinkuri`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# TiCDC's Kafka client parameters (tiflow pkg/sink/kafka/options.go): where the messages go and how.
KAFKA_PARAMETERS: Final = frozenset(
    {
        "partition-num",
        "replication-factor",
        "kafka-version",
        "max-message-bytes",
        "max-retry",
        "compression",
        "kafka-client-id",
        "auto-create-topic",
        "dial-timeout",
        "write-timeout",
        "read-timeout",
        "required-acks",
        "sasl-user",
        "sasl-password",
        "sasl-mechanism",
        "sasl-gssapi-auth-type",
        "sasl-gssapi-keytab-path",
        "sasl-gssapi-kerberos-config-path",
        "sasl-gssapi-service-name",
        "sasl-gssapi-user",
        "sasl-gssapi-password",
        "sasl-gssapi-realm",
        "sasl-gssapi-disable-pafxfast",
        "enable-tls",
        "ca",
        "cert",
        "key",
        "insecure-skip-verify",
    }
)
# TiCDC's codec parameters (pkg/sink/codec/common/config.go of tiflow and of the new ticdc).
CODEC_PARAMETERS: Final = frozenset(
    {
        "protocol",
        "enable-tidb-extension",
        "max-batch-size",
        "max-message-bytes",
        "avro-decimal-handling-mode",
        "avro-bigint-unsigned-handling-mode",
        "avro-include-before-value",
        "avro-enable-watermark",
        "schema-registry",
        "only-output-updated-columns",
        "content-compatible",
        "debezium-disable-schema",
        "debezium-include-start-ts",
        "debezium-decimal-handling-mode",
        "debezium-bigint-unsigned-handling-mode",
        "debezium-binary-handling-mode",
        "simple-include-start-ts",
        "encoding-format",
        "output-row-key",
    }
)
TICDC_PARAMETERS: Final = KAFKA_PARAMETERS | CODEC_PARAMETERS

# A TiCDC parameter that a decoder takes under its own (upstream) name: (protocol, TiCDC name) -> option.
DECODER_ALIASES: Final[Mapping[tuple[str, str], str]] = {
    ("debezium", "debezium-decimal-handling-mode"): "decimal.handling.mode",
    ("debezium", "debezium-binary-handling-mode"): "binary.handling.mode",
}
