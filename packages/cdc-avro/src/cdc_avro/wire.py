"""Framing of Avro data on Kafka: the Confluent 5-byte header, the AWS Glue 18-byte header, and the two
non-row messages TiCDC writes with its ``avro-enable-watermark`` testing switch."""

from __future__ import annotations

import struct
import uuid
from typing import Final

import attrs

from cdc_core.schema_registry import CONFLUENT_MAGIC, FramingError, confluent_frame
from cdc_core.schema_registry import confluent_unframe as _confluent_unframe

GLUE_VERSION: Final = 0x03
GLUE_NO_COMPRESSION: Final = 0x00
DDL_MAGIC: Final = 0x01  # followed by the DDL as JSON
WATERMARK_MAGIC: Final = 0x02  # followed by the 8-byte big-endian resolved TSO
DELETE_MAGIC: Final = 0x03  # new TiCDC, testing switch: a delete's value is 0x03 + 8-byte commit TSO
GLUE_HEADER_SIZE: Final = 18
_TSO: Final = struct.Struct(">BQ")


@attrs.frozen
class Framed:
    """A datum and what identifies its writer schema: a registry id (Confluent) or a version UUID (Glue)."""

    schema_id: int | None
    glue_version: uuid.UUID | None
    datum: memoryview


confluent: Final = confluent_frame


def glue(version: uuid.UUID, datum: bytes) -> bytes:
    return bytes((GLUE_VERSION, GLUE_NO_COMPRESSION)) + version.bytes + datum


def watermark(ts: int) -> bytes:
    return _TSO.pack(WATERMARK_MAGIC, ts)


def delete_marker(commit_ts: int) -> bytes:
    return _TSO.pack(DELETE_MAGIC, commit_ts)


def unframe(data: bytes) -> Framed:
    """Split a Confluent- or Glue-framed value into schema identity and datum."""
    if not data:
        raise FramingError("empty payload has no schema header")
    magic = data[0]
    if magic == CONFLUENT_MAGIC:
        schema_id, datum = _confluent_unframe(data)
        return Framed(schema_id, None, datum)
    if magic == GLUE_VERSION:
        if len(data) < GLUE_HEADER_SIZE:
            raise FramingError(f"Glue header needs {GLUE_HEADER_SIZE} bytes, got {len(data)}")
        if data[1] != GLUE_NO_COMPRESSION:
            raise FramingError(f"Glue compression byte {data[1]:#04x} is not supported (only 0x00, none)")
        return Framed(None, uuid.UUID(bytes=bytes(data[2:GLUE_HEADER_SIZE])), memoryview(data)[GLUE_HEADER_SIZE:])
    raise FramingError(f"unknown magic byte {magic:#04x} (expected 0x00 Confluent or 0x03 Glue)")


def is_delete_marker(data: bytes) -> bool:
    """0x03 + 8-byte TSO: too short to be a Glue header, so the two cannot be confused."""
    return len(data) == _TSO.size and data[0] == DELETE_MAGIC


def read_tso(data: bytes) -> int:
    if len(data) != _TSO.size:
        raise FramingError(f"a TSO message (watermark or delete marker) must be {_TSO.size} bytes, got {len(data)}")
    ts: int = _TSO.unpack(data)[1]
    return ts
