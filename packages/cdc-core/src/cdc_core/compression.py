"""Message compression as TiCDC applies it (``large-message-handle-compression``): snappy block, lz4 frame.

Both are optional extras (``cdc-core[snappy]``, ``cdc-core[lz4]``). Decompression is bounded: the output may not
pass ``max_bytes``, checked before (snappy states its length up front) or while (lz4 frames are read
incrementally) decompressing, so a decompression bomb costs little time and memory.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from cdc_core.errors import ConfigError, DecodeError, LimitExceededError
from cdc_core.limits import DEFAULT_LIMITS


class Compression(StrEnum):
    NONE = "none"
    SNAPPY = "snappy"
    LZ4 = "lz4"


def parse_compression(text: str) -> Compression:
    try:
        return Compression(text.strip().lower())
    except ValueError as exc:
        raise ConfigError(f"compression {text!r}: expected none, snappy or lz4") from exc


def _cramjam() -> Any:
    try:
        import cramjam
    except ImportError as exc:
        raise ConfigError("snappy compression needs the snappy extra: pip install 'cdc-core[snappy]'") from exc
    return cramjam


def _lz4_frame() -> Any:
    try:
        import lz4.frame
    except ImportError as exc:
        raise ConfigError("lz4 compression needs the lz4 extra: pip install 'cdc-core[lz4]'") from exc
    return lz4.frame


def compress(kind: Compression, data: bytes) -> bytes:
    """Compress as TiCDC does: snappy block format (no framing); lz4 frame with independent 4 MiB blocks."""
    if kind is Compression.NONE:
        return data
    if kind is Compression.SNAPPY:
        return bytes(_cramjam().snappy.compress_raw(data))
    frame = _lz4_frame()
    # The streaming compressor keeps the declared 4 MiB block size (BD byte 0x70); the one-shot call would shrink
    # it to fit the input, and the frame header would then differ from TiCDC's.
    compressor = frame.LZ4FrameCompressor(block_size=frame.BLOCKSIZE_MAX4MB, block_linked=False, content_checksum=True)
    return bytes(compressor.begin() + compressor.compress(data) + compressor.flush())


def _varint(data: bytes) -> tuple[int, int]:
    """Snappy's preamble: the uncompressed length as a little-endian base-128 varint; (length, bytes used)."""
    value = shift = 0
    for index, byte in enumerate(data[:10]):
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, index + 1
        shift += 7
    raise ValueError("snappy length preamble is truncated")


def decompress(kind: Compression, data: bytes, *, protocol: str, max_bytes: int | None = None) -> bytes:
    """The original bytes; DecodeError for corrupt input, LimitExceededError past ``max_bytes``."""
    if kind is Compression.NONE:
        return data
    limit = DEFAULT_LIMITS.max_decompressed_bytes if max_bytes is None else max_bytes
    if kind is Compression.SNAPPY:
        cramjam = _cramjam()
        try:
            length, _ = _varint(data)
        except ValueError as exc:
            raise DecodeError(protocol, f"snappy: {exc}") from exc
        if length > limit:
            raise LimitExceededError(f"{protocol}: snappy value expands to {length} bytes, over the limit of {limit}")
        try:
            return bytes(cramjam.snappy.decompress_raw(data))
        except Exception as exc:  # cramjam raises its own DecompressionError
            raise DecodeError(protocol, f"snappy: corrupt block: {exc}") from exc
    frame = _lz4_frame()
    decompressor = frame.LZ4FrameDecompressor()
    try:
        out = decompressor.decompress(data, max_length=limit + 1)
    except RuntimeError as exc:  # lz4 reports corrupt frames as RuntimeError
        raise DecodeError(protocol, f"lz4: corrupt frame: {exc}") from exc
    if len(out) > limit:
        raise LimitExceededError(f"{protocol}: lz4 value expands past the limit of {limit} bytes")
    if not decompressor.eof:
        raise DecodeError(protocol, "lz4: truncated frame")
    return bytes(out)
