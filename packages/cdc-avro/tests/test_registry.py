"""The codec against the registry: caching, schema evolution and compatibility rejection on a real registry
(Apicurio, fixture ``schema_registry``); retries, timeouts, forced rejections, auth and TLS on the fault-injecting
double (fixture ``registry_double``)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
from decimal import Decimal
from pathlib import Path

import attrs
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from cdc_avro import CODEC, RegistryRejectedError, RegistryUnavailableError
from cdc_core.errors import DecodeError, Fault, SchemaError, fault_of
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.registry_double import SchemaRegistryDouble

V1 = TableSchema(
    database="shop",
    table="orders",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.INT), nullable=False),
        Column(name="total", data_type=DataType(mysql_type=MySQLType.DECIMAL, length=8, decimal=2)),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
    version=1,
)
V2 = attrs.evolve(
    V1,
    columns=[*V1.columns, Column(name="note", data_type=DataType(mysql_type=MySQLType.VARCHAR, length=20))],
    version=2,
)


def _insert(schema: TableSchema, row: dict[str, object]) -> RowChange:
    return RowChange(op=Op.INSERT, database="shop", table="orders", after=row, commit_ts=1 << 20, schema=schema)


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_steady_stream_hits_the_registry_once_per_schema(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    messages = [encoder.encode(_insert(V1, {"id": i, "total": Decimal(i)}))[0] for i in range(40)]
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    events = [e for m in messages for e in decoder.decode(m)]
    assert [e.after["id"] for e in events if isinstance(e, RowChange) and e.after] == list(range(40))
    client = SchemaRegistryClient({"url": schema_registry.url})
    key_id = client.get_latest_version("tidb_shop_orders-key").schema_id
    value_id = client.get_latest_version("tidb_shop_orders-value").schema_id
    assert messages[0].key is not None and messages[0].key[1:5] == (key_id or 0).to_bytes(4, "big")
    assert sorted(schema_registry.requests()) == sorted(
        [
            ("POST", "/subjects/tidb_shop_orders-key/versions"),
            ("POST", "/subjects/tidb_shop_orders-value/versions"),
            ("GET", f"/schemas/ids/{key_id}"),
            ("GET", f"/schemas/ids/{value_id}"),
            ("GET", "/subjects/tidb_shop_orders-key/versions/latest"),  # this test's own two look-ups
            ("GET", "/subjects/tidb_shop_orders-value/versions/latest"),
        ]
    )


def test_schema_change_mid_stream_gets_a_new_id_and_both_decode(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url, "enable-tidb-extension": "true"})
    old = encoder.encode(_insert(V1, {"id": 1, "total": Decimal("1.10")}))[0]
    new = encoder.encode(_insert(V2, {"id": 2, "total": None, "note": "after DDL"}))[0]
    assert old.value is not None and new.value is not None
    assert old.value[1:5] != new.value[1:5]  # re-registered after the DDL: a new value schema id
    assert old.key is not None and old.key[:5] == (new.key or b"")[:5]  # the key schema did not change
    assert SchemaRegistryClient({"url": schema_registry.url}).get_versions("tidb_shop_orders-value") == [1, 2]
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    decoded = [e for m in (new, old, new) for e in decoder.decode(m)]
    rows = [e.after for e in decoded if isinstance(e, RowChange)]
    assert rows == [
        {"id": 2, "total": None, "note": "after DDL"},
        {"id": 1, "total": Decimal("1.10")},
        {"id": 2, "total": None, "note": "after DDL"},
    ]
    schemas = [e.schema.column_names for e in decoded if isinstance(e, RowChange) and e.schema]
    assert schemas[1] == ("id", "total") and schemas[0] == ("id", "total", "note")


def test_incompatible_change_is_a_typed_error_naming_table_and_change(schema_registry: ApicurioRegistry) -> None:
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    encoder.encode(_insert(V1, {"id": 1, "total": None}))
    not_null = Column(name="qty", data_type=DataType(mysql_type=MySQLType.INT), nullable=False)
    v3 = attrs.evolve(V1, columns=[*V1.columns, not_null], version=3)
    with pytest.raises(RegistryRejectedError) as caught:
        encoder.encode(_insert(v3, {"id": 2, "total": None, "qty": 1}))
    error = caught.value
    assert isinstance(error, SchemaError)
    assert error.table == "shop.orders" and error.subject == "tidb_shop_orders-value"
    assert "adds column qty without a default" in str(error)
    assert "Incompatible" in str(error)  # the registry's own reason follows


def test_incompatible_change_is_accepted_when_the_registry_checks_nothing(schema_registry: ApicurioRegistry) -> None:
    SchemaRegistryClient({"url": schema_registry.url}).set_compatibility(level="NONE")
    encoder = CODEC.encoder({"schema-registry": schema_registry.url})
    (old,) = encoder.encode(_insert(V1, {"id": 1, "total": None}))
    retyped = Column(name="total", data_type=DataType(mysql_type=MySQLType.VARCHAR, length=9))
    v3 = attrs.evolve(V1, columns=[V1.columns[0], retyped], version=3)
    (new,) = encoder.encode(_insert(v3, {"id": 2, "total": "12.50 EUR"}))
    decoder = CODEC.decoder({"schema-registry": schema_registry.url})
    rows = [e.after for m in (old, new) for e in decoder.decode(m) if isinstance(e, RowChange)]
    assert rows == [{"id": 1, "total": None}, {"id": 2, "total": "12.50 EUR"}]


def test_forced_rejection_from_the_registry(registry_double: SchemaRegistryDouble) -> None:
    registry_double.reject_next("compatibility policy says no")
    encoder = CODEC.encoder({"schema-registry": registry_double.url})
    with pytest.raises(RegistryRejectedError, match="compatibility policy says no") as caught:
        encoder.encode(_insert(V1, {"id": 1, "total": None}))
    assert "first version of the subject" in str(caught.value)


def test_server_errors_are_retried_with_backoff(registry_double: SchemaRegistryDouble) -> None:
    registry_double.fail_next(2, status=503)
    options = {"schema-registry": registry_double.url, "schema-registry-retry-backoff-ms": "5"}
    (message,) = CODEC.encoder(options).encode(_insert(V1, {"id": 1, "total": None}))
    assert message.value is not None
    posts = [r for r in registry_double.requests if r[0] == "POST"]
    assert len(posts) == 4  # key: 2 failures + success; value: success


def test_registry_down_on_encode_is_a_typed_error_after_retries() -> None:
    options = {
        "schema-registry": _closed_port_url(),
        "schema-registry-max-retries": "2",
        "schema-registry-retry-backoff-ms": "1",
    }
    with pytest.raises(RegistryUnavailableError) as caught:
        CODEC.encoder(options).encode(_insert(V1, {"id": 1, "total": None}))
    assert caught.value.attempts == 3
    assert "register subject tidb_shop_orders-key" in str(caught.value)


def test_persistent_server_errors_become_unavailable(registry_double: SchemaRegistryDouble) -> None:
    registry_double.fail_next(10, status=500)
    options = {
        "schema-registry": registry_double.url,
        "schema-registry-max-retries": "1",
        "schema-registry-retry-backoff-ms": "1",
    }
    with pytest.raises(RegistryUnavailableError):
        CODEC.encoder(options).encode(_insert(V1, {"id": 1, "total": None}))
    assert len(registry_double.requests) == 2


def test_a_registry_slower_than_the_timeout_is_unavailable(registry_double: SchemaRegistryDouble) -> None:
    registry_double.delay_next(2, seconds=2.0)
    options = {
        "schema-registry": registry_double.url,
        "schema-registry-timeout": "0.3",
        "schema-registry-max-retries": "1",
        "schema-registry-retry-backoff-ms": "1",
    }
    with pytest.raises(RegistryUnavailableError, match="register subject tidb_shop_orders-key") as caught:
        CODEC.encoder(options).encode(_insert(V1, {"id": 1, "total": None}))
    assert caught.value.attempts == 2
    assert len(registry_double.requests) == 2  # gave up after the retry, without waiting for the answers
    (message,) = CODEC.encoder(options).encode(_insert(V1, {"id": 1, "total": None}))  # in time again
    assert message.value is not None


def test_registry_down_on_decode_is_no_decode_error_but_a_service_fault(schema_registry: ApicurioRegistry) -> None:
    (message,) = CODEC.encoder({"schema-registry": schema_registry.url}).encode(_insert(V1, {"id": 1, "total": None}))
    options = {"schema-registry": _closed_port_url(), "schema-registry-retry-backoff-ms": "1"}
    placed = Message(value=message.value, key=message.key, topic="tidb_shop_orders", partition=0, offset=7)
    with pytest.raises(RegistryUnavailableError) as caught:  # not the message's fault: never skipped
        CODEC.decoder(options).decode(placed)
    assert not isinstance(caught.value, DecodeError)
    assert fault_of(caught.value) is Fault.INFRASTRUCTURE and caught.value.attempts == 4
    (event,) = CODEC.decoder({"schema-registry": schema_registry.url}).decode(placed)  # the registry back: decoded
    assert isinstance(event, RowChange) and event.after == {"id": 1, "total": None}


def test_basic_auth_from_the_url() -> None:
    with SchemaRegistryDouble(credentials=("cdc user", "p@ss:word")) as registry:
        url = registry.url.replace("http://", "http://cdc%20user:p%40ss%3Aword@")
        (message,) = CODEC.encoder({"schema-registry": url}).encode(_insert(V1, {"id": 5, "total": None}))
        (event,) = CODEC.decoder({"schema-registry": url}).decode(message)
        assert isinstance(event, RowChange) and event.after == {"id": 5, "total": None}
        with pytest.raises(RegistryUnavailableError, match="Unauthorized") as caught:
            CODEC.encoder({"schema-registry": registry.url}).encode(_insert(V1, {"id": 5, "total": None}))
        assert "p@ss" not in str(caught.value)
        assert caught.value.attempts == 1  # 401 is not retried


def _self_signed(directory: Path) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "registry.test")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "registry.pem", directory / "registry.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_file), str(key_file)


def test_https_registry_with_a_ca_bundle(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    cert_file, key_file = _self_signed(tmp_path)
    with SchemaRegistryDouble(tls=(cert_file, key_file), credentials=("u", "p")) as registry:
        url = registry.url_with_credentials()
        assert url.startswith("https://u:p@")
        options = {"schema-registry": url, "schema-registry-ca": cert_file}
        (message,) = CODEC.encoder(options).encode(_insert(V1, {"id": 8, "total": Decimal("2.00")}))
        (event,) = CODEC.decoder(options).decode(message)
        assert isinstance(event, RowChange) and event.after == {"id": 8, "total": Decimal("2.00")}
        untrusted = {"schema-registry": url, "schema-registry-max-retries": "0"}
        with pytest.raises(RegistryUnavailableError):  # the self-signed certificate is not in the default store
            CODEC.encoder(untrusted).encode(_insert(V1, {"id": 9, "total": None}))
