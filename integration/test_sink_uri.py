"""TiCDC sink URIs on the command line and in the Python API, for every protocol.

The URIs are the ones TiCDC's documentation shows users creating changefeeds with: copying one (or any of its
parameters) into ``cdc`` must work, with producer-only parameters noted and only truly unknown names refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest

from cdc_core.codec import IgnoredOptionsWarning
from cdc_core.errors import ConfigError
from cdc_core.events import Op, RowChange
from cdc_core.messagelines import format_line, parse_line
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.sinkuri import TICDC_PARAMETERS, SinkUri
from cdc_core.tso import compose
from cdc_core.types import parse_type_text
from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry

SCHEMA = TableSchema(
    database="shop",
    table="items",
    columns=[
        Column(name="id", data_type=parse_type_text("int(11)"), nullable=False),
        Column(name="name", data_type=parse_type_text("varchar(32)")),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    table_id=42,
    version=compose(1_700_000_000_000),
)
ROW = RowChange(
    op=Op.INSERT,
    database="shop",
    table="items",
    after={"id": 7, "name": "seven"},
    commit_ts=compose(1_700_000_100_000),
    schema=SCHEMA,
)
# As users write them (kafka-version, partition-num, replication-factor, max-message-bytes are TiCDC's examples).
PRODUCER_ONLY = "kafka-version=2.4.0&partition-num=3&replication-factor=1&max-message-bytes=67108864&compression=lz4"
URIS = {
    "debezium": f"kafka://127.0.0.1:9092/orders?protocol=debezium&enable-tidb-extension=true&{PRODUCER_ONLY}",
    "canal-json": "kafka://127.0.0.1:9092,127.0.0.1:9093/orders?protocol=canal-json&enable-tidb-extension=true"
    f"&content-compatible=false&{PRODUCER_ONLY}&auto-create-topic=true",
    "simple": f"kafka://127.0.0.1:9092/orders?protocol=simple&encoding-format=avro&{PRODUCER_ONLY}",
    "avro": "kafka://127.0.0.1:9092/orders?protocol=avro&enable-tidb-extension=true"
    "&avro-decimal-handling-mode=string&avro-bigint-unsigned-handling-mode=string&schema-registry={registry}"
    f"&{PRODUCER_ONLY}",
}


def _cdc(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cdc_core.cli", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=False)


def test_parse_names_protocol_topic_brokers_and_options() -> None:
    uri = SinkUri.parse(URIS["canal-json"])
    assert (uri.protocol, uri.topic, uri.brokers) == ("canal-json", "orders", ("127.0.0.1:9092", "127.0.0.1:9093"))
    assert uri.parameters["content-compatible"] == "false" and "protocol" not in uri.parameters
    secret = SinkUri.parse(
        "kafka+ssl://b:9093/t?protocol=debezium&sasl-user=u&sasl-password=hunter22&sasl-mechanism=scram-sha-512"
    )
    assert "hunter22" not in repr(secret)
    assert secret.consumer_config() == {
        "bootstrap.servers": "b:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "u",
        "sasl.password": "hunter22",
    }


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("http://b:9092/t?protocol=debezium", "scheme 'http'"),
        ("kafka:///t?protocol=debezium", "no broker"),
        ("kafka://b:9092/t?kafka-version=2.4.0", "protocol is required"),
        ("kafka://b:9092/t?protocol=debezium&partition-num=1&partition-num=2", "partition-num given twice"),
    ],
)
def test_bad_uris_are_config_errors(uri: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        SinkUri.parse(uri)


@pytest.mark.parametrize("protocol", sorted(URIS))
def test_a_changefeeds_uri_builds_its_encoder_and_decoder(protocol: str, schema_registry: ApicurioRegistry) -> None:
    uri = SinkUri.parse(URIS[protocol].format(registry=schema_registry.url))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder = uri.encoder()  # Simple: a BOOTSTRAP precedes the row and teaches the decoder its schema
        decoder = uri.decoder()
    notes = [str(w.message) for w in caught if issubclass(w.category, IgnoredOptionsWarning)]
    assert any("kafka-version" in n and "replication-factor" in n and "compression" in n for n in notes), notes
    if protocol in ("canal-json", "debezium"):
        assert any(f"{protocol} decoding ignores" in n and "enable-tidb-extension" in n for n in notes), notes
    events = [e for m in encoder.encode(ROW) for e in decoder.decode(m)]
    rows = [e for e in events if isinstance(e, RowChange)]
    assert [(r.op, dict(r.after or {})) for r in rows] == [(Op.INSERT, {"id": 7, "name": "seven"})]


def test_every_ticdc_parameter_is_accepted_by_every_decoder() -> None:
    for protocol in URIS:
        options = dict.fromkeys(TICDC_PARAMETERS - {"protocol", "schema-registry"}, "true")
        for own in ("max-message-bytes", "partition-num"):
            options[own] = "1048576"
        options["avro-decimal-handling-mode"] = "string"
        options["avro-bigint-unsigned-handling-mode"] = "string"
        options["encoding-format"] = "json"
        options["debezium-decimal-handling-mode"] = "double"
        options["debezium-binary-handling-mode"] = "base64"
        if protocol == "avro":
            options["glue-schema-dir"] = "."
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IgnoredOptionsWarning)
            assert get_codec(protocol).decoder(options) is not None


def test_a_ticdc_name_is_used_where_the_decoder_has_it() -> None:
    # TiCDC's debezium-binary-handling-mode is Debezium's binary.handling.mode: a hex stream decodes as hex.
    decoder = get_codec("debezium").decoder({"debezium-binary-handling-mode": "hex"})
    assert decoder is not None
    with pytest.raises(ConfigError, match=r"binary\.handling\.mode"):
        get_codec("debezium").decoder({"debezium-binary-handling-mode": "octal"})


def test_cli_decode_takes_the_uri_and_notes_what_it_ignores() -> None:
    line = format_line(get_codec("canal-json").encoder({"enable-tidb-extension": True}).encode(ROW)[0])
    result = _cdc("decode", "--sink-uri", URIS["canal-json"], "--no-schema", stdin=line + "\n")
    assert result.returncode == 0, result.stderr
    (event,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert event["after"] == {"id": 7, "name": "seven"}
    notes = [line for line in result.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and notes[0].startswith("cdc decode: note: canal-json decoding ignores")
    assert result.stderr.splitlines()[-1].startswith("cdc decode: 1 message read")
    assert "content-compatible" in notes[0] and "kafka-version" in notes[0]


def test_cli_option_copied_from_a_uri_is_no_longer_unknown() -> None:
    for option in ("enable-tidb-extension=true", "content-compatible=false"):
        result = _cdc("decode", "-p", "canal-json", "--option", option, stdin="")
        assert result.returncode == 0, result.stderr
        assert "unknown option" not in result.stderr and "note:" in result.stderr
    unknown = _cdc("decode", "--sink-uri", "kafka://b:9092/t?protocol=canal-json&no-such=1", stdin="")
    assert unknown.returncode == 2 and "unknown option(s) no-such" in unknown.stderr


def test_cli_encode_and_convert_take_uris() -> None:
    uri = "kafka://127.0.0.1:9092/shop-items?protocol=debezium&partition-num=1&kafka-version=3.7.0"
    from cdc_core import canonical

    encoded = _cdc("encode", "--sink-uri", uri, stdin=canonical.dumps(ROW) + "\n")
    assert encoded.returncode == 0, encoded.stderr
    (message,) = [parse_line(x, line=1) for x in encoded.stdout.splitlines()]
    assert message.topic == "shop-items"
    to = "kafka://127.0.0.1:9092/out?protocol=canal-json&enable-tidb-extension=true"
    converted = _cdc("convert", "--sink-uri", uri, "--to-sink-uri", to, stdin=encoded.stdout)
    assert converted.returncode == 0, converted.stderr
    (line,) = converted.stdout.splitlines()
    canal = json.loads(parse_line(line, line=1).value or b"")
    assert canal["data"] == [{"id": "7", "name": "seven"}] and "_tidb" in canal
    clash = _cdc("decode", "-p", "simple", "--sink-uri", uri, stdin="")
    assert clash.returncode == 2 and "contradicts" in clash.stderr


@pytest.mark.kafka
def test_cli_tail_reads_the_uris_brokers_and_topic(kafka_bootstrap: str, kafka_topic: str) -> None:
    encoder = get_codec("debezium").encoder({"enable-tidb-extension": True})
    kafka.produce(kafka_bootstrap, kafka_topic, encoder.encode(ROW))
    uri = f"kafka://{kafka_bootstrap}/{kafka_topic}?protocol=debezium&enable-tidb-extension=true&kafka-version=3.7.0"
    result = _cdc("tail", "--sink-uri", uri, "--from-beginning", "--max-messages", "1", "--no-schema")
    assert result.returncode == 0, result.stderr
    (event,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert event["after"] == {"id": 7, "name": "seven"}
