"""Large-message handling: handle-key-only, claim-check to file:// storage and back, size limits."""

from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest

from cdc_core.errors import ConfigError, DecodeError, LimitExceededError, StorageError
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.tso import compose
from cdc_core.types import parse_type_text

SCHEMA = TableSchema(
    database="shop",
    table="docs",
    columns=[
        Column(name="id", data_type=parse_type_text("bigint(20)"), nullable=False),
        Column(name="body", data_type=parse_type_text("longtext")),
    ],
    indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
)
BIG = RowChange(
    op=Op.INSERT,
    database="shop",
    table="docs",
    after={"id": 42, "body": "x" * 5000},
    commit_ts=compose(1_700_000_000_000),
    schema=SCHEMA,
)


def encode(event: RowChange, **options: Any) -> Message:
    (message,) = get_codec("canal-json").encoder({"enable-tidb-extension": True, **options}).encode(event)
    return message


def decode(message: Message, **options: Any) -> list[Any]:
    return get_codec("canal-json").decoder(options).decode(message)


def test_small_rows_are_untouched() -> None:
    message = encode(BIG, **{"max-message-bytes": 100_000, "large-message-handle-option": "handle-key-only"})
    assert decode(message) == [BIG]


def test_over_the_limit_without_handling_is_a_typed_error() -> None:
    with pytest.raises(LimitExceededError, match="max-message-bytes 1000"):
        encode(BIG, **{"max-message-bytes": 1000})


def test_handle_key_only() -> None:
    message = encode(BIG, **{"max-message-bytes": 1000, "large-message-handle-option": "handle-key-only"})
    document = orjson.loads(message.value)
    assert document["data"] == [{"id": "42"}] and document["sqlType"] == {"id": -5}
    assert document["_tidb"] == {"commitTs": BIG.commit_ts, "onlyHandleKey": True}
    (event,) = decode(message)
    assert event == attrs.evolve(BIG, after={"id": 42}, handle_key_only=True)


def test_handle_key_only_still_too_large() -> None:
    with pytest.raises(LimitExceededError):
        encode(BIG, **{"max-message-bytes": 50, "large-message-handle-option": "handle-key-only"})


@pytest.mark.parametrize("raw", [False, True])
def test_claim_check_round_trip(tmp_path: Path, raw: bool) -> None:
    uri = (tmp_path / "claims").as_uri()
    options = {"claim-check-storage-uri": uri, "claim-check-raw-value": raw}
    message = encode(BIG, **{"max-message-bytes": 1000, "large-message-handle-option": "claim-check"}, **options)
    document = orjson.loads(message.value)
    location = document["_tidb"]["claimCheckLocation"]
    assert document["data"] == [{"id": "42"}] and "onlyHandleKey" not in document["_tidb"]
    (stored,) = (tmp_path / "claims").iterdir()
    assert location == f"{uri}/{stored.name}" and stored.name.endswith(".json")
    body = stored.read_bytes()
    full = body if raw else base64.b64decode(orjson.loads(body)["value"])
    assert orjson.loads(body).get("key", "absent") == ("absent" if raw else None)
    assert orjson.loads(full)["data"] == [{"id": "42", "body": "x" * 5000}]
    # with the storage: the full row; without it: the reduced row that says where the full one is
    assert decode(message, **options) == [attrs.evolve(BIG, claim_check_location=location)]
    (reduced,) = decode(message)
    assert reduced.after == {"id": 42} and reduced.handle_key_only and reduced.claim_check_location == location


def test_claim_check_on_fsspec_storage() -> None:
    pytest.importorskip("fsspec")
    options = {"claim-check-storage-uri": "memory://canal-claims"}
    message = encode(BIG, **{"max-message-bytes": 1000, "large-message-handle-option": "claim-check"}, **options)
    location = orjson.loads(message.value)["_tidb"]["claimCheckLocation"]
    assert location.startswith("memory://canal-claims/")
    assert decode(message, **options) == [attrs.evolve(BIG, claim_check_location=location)]


def test_claim_check_reads_only_the_base_name_under_its_own_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.json").write_bytes(b'{"key":null,"value":""}')
    options = {"claim-check-storage-uri": root.as_uri()}
    reduced = orjson.loads(encode(attrs.evolve(BIG, after={"id": 42}, handle_key_only=True)).value)
    for location, error in [
        ("file:///" + str(tmp_path / "root" / ".." / "secret.json"), StorageError),  # base name only: not found
        ("../secret.json", StorageError),
        ("s3://bucket/..", StorageError),  # names no plain file
        ("", StorageError),
    ]:
        reduced["_tidb"] = {"commitTs": 1, "claimCheckLocation": location}
        with pytest.raises(error):
            decode(Message(value=orjson.dumps(reduced)), **options)


def test_claim_check_file_problems_are_typed(tmp_path: Path) -> None:
    options = {"claim-check-storage-uri": tmp_path.as_uri()}
    reduced = orjson.loads(encode(attrs.evolve(BIG, after={"id": 42}, handle_key_only=True)).value)
    for name, body, error, words in [
        ("a.json", b"not json", StorageError, "a.json.*not a {key, value} JSON wrapper"),
        ("b.json", b'{"key":null}', StorageError, "b.json.*not a {key, value} JSON wrapper"),
        ("c.json", b'{"key":null,"value":"***"}', StorageError, "c.json.*not a {key, value} JSON wrapper"),
        ("d.json", orjson.dumps({"key": None, "value": base64.b64encode(b'{"type":"QUERY"}').decode()}),
         DecodeError, "claimCheckLocation"),
        ("e.json", orjson.dumps({"key": None, "value": base64.b64encode(b"{not json").decode()}),
         DecodeError, "claimCheckLocation"),
    ]:  # fmt: skip
        (tmp_path / name).write_bytes(body)
        reduced["_tidb"] = {"commitTs": 1, "claimCheckLocation": f"file:///anywhere/{name}"}
        with pytest.raises(error, match=words):
            decode(Message(value=orjson.dumps(reduced), topic="t", partition=1, offset=2), **options)


def test_configuration_errors(tmp_path: Path) -> None:
    codec = get_codec("canal-json")
    with pytest.raises(ConfigError, match="enable-tidb-extension"):
        codec.encoder({"large-message-handle-option": "handle-key-only"})
    with pytest.raises(ConfigError, match="claim-check-storage-uri"):
        codec.encoder({"enable-tidb-extension": True, "large-message-handle-option": "claim-check"})
    with pytest.raises(ConfigError, match="not one of"):
        codec.encoder({"large-message-handle-option": "drop"})


def test_decoder_refuses_messages_over_its_limit() -> None:
    message = Message(value=encode(BIG).value, topic="big", partition=0, offset=9)
    with pytest.raises(LimitExceededError, match=r"big\[0\]@9"):
        decode(message, **{"max-message-bytes": 1000})
    assert decode(message, **{"max-message-bytes": 100_000}) == [BIG]


def test_partition_count_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="partition-num"):
        get_codec("canal-json").encoder({"partition-num": 0})


@pytest.mark.parametrize("kind", ["snappy", "lz4"])
def test_compressed_values_round_trip(kind: str) -> None:
    options = {"large-message-handle-compression": kind}
    message = encode(BIG, **options)
    assert message.value is not None and b'"type"' not in message.value  # compressed on the wire
    if kind == "lz4":
        assert message.value[:6] == bytes.fromhex("04224d186470")  # TiCDC's frame header: FLG 0x64, BD 0x70
    assert decode(message, **options) == [BIG]
    with pytest.raises(DecodeError):  # a consumer not told of the compression sees no JSON
        decode(message)


def test_compressed_claim_check_holds_the_compressed_message(tmp_path: Path) -> None:
    options = {"claim-check-storage-uri": tmp_path.as_uri(), "large-message-handle-compression": "lz4"}
    noisy = attrs.evolve(BIG, after={"id": 42, "body": random.Random(5).randbytes(2000).hex()})  # barely compresses
    message = encode(noisy, **{"max-message-bytes": 1000, "large-message-handle-option": "claim-check"}, **options)
    (stored,) = tmp_path.iterdir()
    assert base64.b64decode(orjson.loads(stored.read_bytes())["value"])[:4] == bytes.fromhex("04224d18")
    (row,) = decode(message, **options)
    assert row.after == noisy.after and row.claim_check_location is not None


def test_a_decompression_bomb_is_refused_quickly() -> None:
    import lz4.frame

    bomb = lz4.frame.compress(b"{" * (80 * 1024 * 1024))
    with pytest.raises(LimitExceededError):
        decode(Message(value=bomb), **{"large-message-handle-compression": "lz4"})
