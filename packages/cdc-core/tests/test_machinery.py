"""Shared protocol machinery: compression with bounds, claim-check storage, partition dispatch, limits."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import pytest

from cdc_core.claimcheck import ClaimCheckStorage, base_name, unwrap, wrap
from cdc_core.compression import Compression, compress, decompress, parse_compression
from cdc_core.dispatch import partition_for_row, partition_for_table, value_text
from cdc_core.errors import (
    CdcError,
    ConfigError,
    DecodeError,
    Fault,
    HeldRowsLimitError,
    LimitExceededError,
    StorageError,
    StorageUnavailableError,
    fault_of,
)
from cdc_core.events import Op, RowChange
from cdc_core.limits import Limits, json_depth
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import parse_type_text

# Realistic CDC batches repeat keys and structure; the row values differ so the payload is not trivially periodic.
PAYLOAD = b"".join(b'{"type":"INSERT","data":[{"id":"%d","name":"customer %d"}]}' % (i, i * 7919) for i in range(40))


@pytest.mark.parametrize("kind", [Compression.SNAPPY, Compression.LZ4])
def test_round_trip(kind: Compression) -> None:
    packed = compress(kind, PAYLOAD)
    assert len(packed) < len(PAYLOAD)
    assert decompress(kind, packed, protocol="simple") == PAYLOAD


def test_lz4_frame_header_is_ticdcs() -> None:
    # Magic, then FLG 0x64 (v01, independent blocks, content checksum, no size) and BD 0x70 (4 MiB blocks).
    assert compress(Compression.LZ4, PAYLOAD)[:6] == bytes.fromhex("04224d186470")


def test_snappy_is_the_block_format_with_its_length_preamble() -> None:
    packed = compress(Compression.SNAPPY, b"abc" * 100)
    assert packed[:2] == bytes([0xAC, 0x02])  # 300 as a varint; no stream identifier chunk
    assert not packed.startswith(b"\xff\x06\x00\x00sNaPpY")


@pytest.mark.parametrize("kind", [Compression.SNAPPY, Compression.LZ4])
def test_a_decompression_bomb_stops_at_the_limit(kind: Compression) -> None:
    bomb = compress(kind, bytes(32 * 1024 * 1024))
    with pytest.raises(LimitExceededError, match="limit"):
        decompress(kind, bomb, protocol="canal-json", max_bytes=1024 * 1024)


@pytest.mark.parametrize("kind", [Compression.SNAPPY, Compression.LZ4])
def test_garbage_is_a_decode_error(kind: Compression) -> None:
    with pytest.raises(DecodeError):
        decompress(kind, b"\x05not compressed at all", protocol="simple")
    with pytest.raises(DecodeError):
        decompress(kind, compress(kind, PAYLOAD)[:-7], protocol="simple")


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cramjam", None)
    with pytest.raises(ConfigError, match=r"cdc-core\[snappy\]"):
        compress(Compression.SNAPPY, b"x")
    with pytest.raises(ConfigError, match="expected none, snappy or lz4"):
        parse_compression("zstd")


def test_claim_check_wrapped_and_raw(tmp_path: Path) -> None:
    storage = ClaimCheckStorage(f"file://{tmp_path}/claims/")
    location = storage.write(None, b"value bytes")
    assert location.startswith(f"file://{tmp_path}/claims/") and location.endswith(".json")
    assert storage.read(location) == (None, b"value bytes")
    stored = (tmp_path / "claims" / base_name(location)).read_bytes()
    assert stored == b'{"key":null,"value":"dmFsdWUgYnl0ZXM="}'

    raw = ClaimCheckStorage(str(tmp_path / "raw"), raw_value=True)
    assert raw.read(raw.write(b"k", b"\x00\x01")) == (None, b"\x00\x01")


def test_claim_check_reads_by_base_name_from_its_own_root(tmp_path: Path) -> None:
    storage = ClaimCheckStorage(f"file://{tmp_path}")
    (tmp_path / "abc.json").write_bytes(wrap(b"k", b"v"))
    # The producer's storage URI does not matter: only the base name is used.
    assert storage.read("s3://producer-bucket/prefix/abc.json") == (b"k", b"v")


@pytest.mark.parametrize("location", ["file:///etc/..", "../../etc/passwd/", "s3://b/x/..", "file:///tmp/a b", ""])
def test_claim_check_refuses_locations_that_are_not_plain_names(tmp_path: Path, location: str) -> None:
    with pytest.raises(StorageError):
        ClaimCheckStorage(str(tmp_path)).read(location)


def test_claim_check_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="is not in file storage") as missing:  # the message's fault
        ClaimCheckStorage(str(tmp_path)).read("missing.json")
    assert fault_of(missing.value) is Fault.DATA
    (tmp_path / "root").write_text("a file where the storage root should be")
    with pytest.raises(StorageUnavailableError, match="cannot be read") as broken:  # the store's fault
        ClaimCheckStorage(str(tmp_path / "root")).read("any.json")
    assert fault_of(broken.value) is Fault.INFRASTRUCTURE
    with pytest.raises(StorageError, match="wrapper"):
        unwrap(b"[1]", location="x.json")
    with pytest.raises(ConfigError):
        ClaimCheckStorage("")


def test_claim_check_through_fsspec_memory_storage() -> None:
    pytest.importorskip("fsspec")
    storage = ClaimCheckStorage("memory://cdc-claims")
    assert storage.read(storage.write(None, b"big")) == (None, b"big")


SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=(
        Column(name="id", data_type=parse_type_text("bigint"), nullable=False),
        Column(name="region", data_type=parse_type_text("varchar(8)")),
    ),
    indexes=(Index(name="PRIMARY", columns=("id",), unique=True, primary=True),),
)


def _row(after: dict[str, object]) -> RowChange:
    return RowChange(op=Op.INSERT, database="shop", table="orders", after=after, schema=SCHEMA, commit_ts=1001)


def test_table_rule_is_crc32_of_schema_and_table() -> None:
    expected = zlib.crc32(b"shoporders") % 7
    assert partition_for_table("shop", "orders", 7) == expected
    assert partition_for_row(_row({"id": 1}), 7) == expected
    assert partition_for_row(_row({"id": 1}), 7, "table") == expected
    assert partition_for_row(_row({"id": 1}), 7, "no-such-rule") == expected


def test_ts_rule() -> None:
    assert partition_for_row(_row({"id": 1}), 7, "ts") == 1001 % 7


def test_index_value_xors_each_key_column_write() -> None:
    expected = (zlib.crc32(b"shoporders") ^ zlib.crc32(b"id42")) % 16
    assert partition_for_row(_row({"id": 42, "region": "eu"}), 16, "index-value") == expected
    by_columns = (zlib.crc32(b"shoporders") ^ zlib.crc32(b"regioneu")) % 16
    assert partition_for_row(_row({"id": 42, "region": "eu"}), 16, "columns", columns=["region"]) == by_columns
    # NULL values are skipped.
    assert partition_for_row(_row({"id": 42, "region": None}), 16, "columns", columns=["region"]) == (
        zlib.crc32(b"shoporders") % 16
    )


def test_value_text_forms() -> None:
    assert [value_text(v) for v in (None, 18446744073709551615, 1.5, 1e21, "é", b"\xff")] == [
        None,
        "18446744073709551615",
        "1.5",
        "1000000000000000000000",
        "é",
        "\xff",
    ]


def test_limits() -> None:
    limits = Limits(max_held_rows=2, max_held_bytes=100)
    limits.check_held(2, 100, protocol="simple")
    with pytest.raises(HeldRowsLimitError, match="3 rows"):
        limits.check_held(3, 10, protocol="simple")
    with pytest.raises(LimitExceededError, match="max_message_bytes"):
        Limits(max_message_bytes=10).check_message(11, protocol="simple")
    with pytest.raises(ValueError):
        Limits(max_nesting_depth=0)
    assert issubclass(HeldRowsLimitError, CdcError)


def test_json_depth_ignores_brackets_in_strings_and_stops_early() -> None:
    assert json_depth(b'{"a": [1, {"b": "[[[["}]}', 100) == 3
    assert json_depth(b"[" * 10_000, 64) == 65
