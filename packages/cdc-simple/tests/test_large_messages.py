"""Compression, claim-check, handle-key-only rows with a pluggable resolver, and row checksums."""

from __future__ import annotations

import base64
import json
import random
import string
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from cdc_core.codec import Decoder, Encoder, Options
from cdc_core.errors import ChecksumError, DecodeError, EncodeError, LimitExceededError, StorageError
from cdc_core.events import Event, Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_simple import CODEC, OPTIONS, SimpleDecoder

TEXT = DataType(mysql_type=MySQLType.LONGTEXT, charset="utf8mb4", collation="utf8mb4_bin")
SCHEMA = TableSchema(
    database="shop",
    table="docs",
    columns=[
        Column(name="id", data_type=DataType(mysql_type=MySQLType.BIGINT, length=20), nullable=False),
        Column(name="body", data_type=TEXT),
        Column(name="n", data_type=DataType(mysql_type=MySQLType.INT, length=11)),
    ],
    indexes=[Index(name="primary", columns=["id"], unique=True, primary=True)],
    table_id=9,
    version=500,
)


_RNG = random.Random(4)
NOISE = "".join(_RNG.choice(string.ascii_letters) for _ in range(4000))  # snappy cannot shrink it much


def _row(op: Op = Op.INSERT, body: str = "small", commit_ts: int = 1000) -> RowChange:
    image = {"id": 7, "body": body, "n": 3}
    return RowChange(
        op=op,
        database="shop",
        table="docs",
        before=image if op is not Op.INSERT else None,
        after={**image, "n": 4} if op is not Op.DELETE else None,
        commit_ts=commit_ts,
        table_id=9,
        schema_version=500,
        schema=SCHEMA,
    )


def _through(encoder: Encoder, decoder: Decoder, event: Event) -> list[Event]:
    out: list[Event] = []
    for offset, message in enumerate(encoder.encode(event)):
        out += decoder.decode(attrs.evolve(message, topic="t", offset=offset))
    return out


def _single_row(events: list[Event]) -> RowChange:
    rows = [e for e in events if isinstance(e, RowChange)]
    assert len(rows) == 1
    return rows[0]


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_compressed_values_round_trip(encoding: str, compression: str) -> None:
    options = {"encoding-format": encoding, "large-message-handle-compression": compression}
    encoder, decoder = CODEC.encoder(options), CODEC.decoder(options)
    messages = encoder.encode(_row(body="text " * 200))
    if compression == "lz4":
        assert all((m.value or b"")[:6] == b"\x04\x22\x4d\x18\x64\x70" for m in messages)
    assert all(len(m.value or b"") < 600 for m in messages)
    events = [e for m in messages for e in decoder.decode(m)]
    assert _single_row(events).after == {"id": 7, "body": "text " * 200, "n": 4}
    with pytest.raises(DecodeError):  # a consumer configured without the producer's compression
        CODEC.decoder({"encoding-format": encoding}).decode(messages[-1])


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("raw", [False, True])
def test_claim_check_messages_are_resolved_from_storage(encoding: str, raw: bool, tmp_path: Path) -> None:
    uri = (tmp_path / "claims").as_uri()
    common = {"encoding-format": encoding, "claim-check-storage-uri": uri, "claim-check-raw-value": raw}
    encoder = CODEC.encoder(
        {
            **common,
            "max-message-bytes": 1024,
            "large-message-handle-option": "claim-check",
            "large-message-handle-compression": "snappy",
        }
    )
    big = _row(Op.UPDATE, body=NOISE)
    bootstrap, message = encoder.encode(big)
    assert len(message.value or b"") < 400
    (stored,) = (tmp_path / "claims").iterdir()
    content = stored.read_bytes()
    if not raw:
        wrapper = json.loads(content)
        assert wrapper["key"] is None and base64.b64decode(wrapper["value"])
    decoder = CODEC.decoder({**common, "large-message-handle-compression": "snappy"})
    row = _single_row(decoder.decode(bootstrap) + decoder.decode(message))
    assert row.after == {"id": 7, "body": NOISE, "n": 4}
    assert row.before == {"id": 7, "body": NOISE, "n": 3}
    assert not row.handle_key_only
    assert row.claim_check_location == f"{uri}/{stored.name}"

    # Without storage configured: the reduced row, flagged, with the location.
    blind = CODEC.decoder({"encoding-format": encoding, "large-message-handle-compression": "snappy"})
    reduced = _single_row(blind.decode(bootstrap) + blind.decode(message))
    assert reduced.handle_key_only and reduced.after == {"id": 7} and reduced.claim_check_location is not None

    stored.unlink()
    with pytest.raises(StorageError, match=stored.name):
        CODEC.decoder({**common, "large-message-handle-compression": "snappy"}).decode(message)


def test_handle_key_only_rows_are_flagged_or_resolved() -> None:
    encoder = CODEC.encoder({"max-message-bytes": 1024, "large-message-handle-option": "handle-key-only"})
    bootstrap, message = encoder.encode(_row(Op.DELETE, body="y" * 3000))
    doc = json.loads(message.value or b"")
    assert doc["handleKeyOnly"] is True and doc["old"] == {"id": "7"} and "data" not in doc

    plain = CODEC.decoder()
    flagged = _single_row(plain.decode(bootstrap) + plain.decode(message))
    assert flagged.handle_key_only and flagged.before == {"id": 7}

    seen: list[RowChange] = []

    def upstream(row: RowChange) -> RowChange:  # stands in for snapshot reads at commitTs - 1 on TiDB
        seen.append(row)
        assert row.before is not None
        return attrs.evolve(row, before={**row.before, "body": "y" * 3000, "n": 3})

    options = Options([s for s in OPTIONS if s.for_decoder], {}, protocol="simple")
    resolved_decoder = SimpleDecoder(options, resolver=upstream)
    resolved = _single_row(resolved_decoder.decode(bootstrap) + resolved_decoder.decode(message))
    assert resolved.before == {"id": 7, "body": "y" * 3000, "n": 3} and not resolved.handle_key_only
    assert seen[0].commit_ts == 1000 and seen[0].schema is not None


def test_resolver_option_loads_a_callable_and_checks_what_it_returns() -> None:
    encoder = CODEC.encoder({"max-message-bytes": 1024, "large-message-handle-option": "handle-key-only"})
    bootstrap, message = encoder.encode(_row(body="z" * 3000))
    decoder = CODEC.decoder({"handle-key-resolver": "builtins:repr"})
    decoder.decode(bootstrap)
    with pytest.raises(DecodeError, match="not a RowChange"):
        decoder.decode(message)


def _checksum_input(image: dict[str, Any]) -> int:
    """The CRC-32 spelled out by hand: bigint as uint64 LE, text length-prefixed, int as uint64 LE."""
    data = struct.pack("<Q", image["id"]) + struct.pack("<I", len(image["body"])) + image["body"].encode()
    return zlib.crc32(data + struct.pack("<Q", image["n"]))


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_checksums_are_written_and_verified(encoding: str) -> None:
    options = {"encoding-format": encoding, "integrity-check-level": "correctness"}
    encoder = CODEC.encoder(options)
    bootstrap, message = encoder.encode(_row(Op.UPDATE))
    if encoding == "json":
        checksum = json.loads(message.value or b"")["checksum"]
        assert checksum == {
            "version": 1,
            "corrupted": False,
            "current": _checksum_input({"id": 7, "body": "small", "n": 4}),
            "previous": _checksum_input({"id": 7, "body": "small", "n": 3}),
        }
    decoder = CODEC.decoder(options)
    decoder.decode(bootstrap)
    assert _single_row(decoder.decode(message)).after == {"id": 7, "body": "small", "n": 4}


def test_corrupted_rows_are_typed_errors() -> None:
    options = {"integrity-check-level": "correctness"}
    bootstrap, message = CODEC.encoder(options).encode(_row(Op.UPDATE))
    doc = json.loads(message.value or b"")
    doc["data"]["n"] = "5"  # changed in transit
    tampered = Message(value=json.dumps(doc).encode(), topic="t", partition=0, offset=12)
    decoder = CODEC.decoder(options)
    decoder.decode(bootstrap)
    with pytest.raises(ChecksumError, match=r"t\[0\]@12 field checksum.current"):
        decoder.decode(tampered)
    doc["data"]["n"] = "4"
    doc["checksum"]["corrupted"] = True
    with pytest.raises(ChecksumError, match="corrupted"):
        decoder.decode(Message(value=json.dumps(doc).encode()))
    assert CODEC.decoder().decode(bootstrap)  # verification is off by default: the tampered row decodes
    lenient = CODEC.decoder()
    lenient.decode(bootstrap)
    assert _single_row(lenient.decode(tampered)).after == {"id": 7, "body": "small", "n": 5}


def test_large_row_policy_none_fails_and_keyless_tables_cannot_reduce() -> None:
    keyless = attrs.evolve(SCHEMA, indexes=[])
    row = attrs.evolve(_row(body="q" * 3000), schema=keyless)
    encoder = CODEC.encoder({"max-message-bytes": 1024, "large-message-handle-option": "handle-key-only"})
    with pytest.raises(EncodeError, match="handle key"):
        encoder.encode(row)


def test_decoder_refuses_values_over_the_limit(make_decoder: Callable[..., Decoder]) -> None:
    with pytest.raises(LimitExceededError):
        make_decoder(**{"max-message-bytes": 10}).decode(Message(value=b'{"version":1,"type":"WATERMARK"}'))


def test_claim_check_through_fsspec_storage() -> None:
    """Non-file storage (s3://, gs://, ...) goes through fsspec; its in-memory filesystem stands in for them."""
    pytest.importorskip("fsspec")
    uri = "memory://simple-claims"
    encoder = CODEC.encoder(
        {"claim-check-storage-uri": uri, "max-message-bytes": 1024, "large-message-handle-option": "claim-check"}
    )
    bootstrap, message = encoder.encode(_row(body=NOISE))
    location = json.loads(message.value or b"")["claimCheckLocation"]
    assert location.startswith(f"{uri}/") and location.endswith(".json")
    decoder = CODEC.decoder({"claim-check-storage-uri": uri})
    row = _single_row(decoder.decode(bootstrap) + decoder.decode(message))
    assert row.after == {"id": 7, "body": NOISE, "n": 4} and row.claim_check_location == location
