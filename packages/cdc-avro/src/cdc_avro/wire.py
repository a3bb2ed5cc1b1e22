"""Framing of Avro data on Kafka: the Confluent 5-byte header, the AWS Glue 18-byte header, and the two
non-row messages TiCDC writes with its ``avro-enable-watermark`` testing switch."""

from __future__ import annotations

import struct
import uuid
from typing import Final

import attrs

CONFLUENT_MAGIC: Final = 0x00
GLUE_VERSION: Final = 0x03
GLUE_NO_COMPRESSION: Final = 0x00
DDL_MAGIC: Final = 0x01  # followed by the DDL as JSON
WATERMARK_MAGIC: Final = 0x02  # followed by the 8-byte big-endian resolved TSO
DELETE_MAGIC: Final = 0x03  # new TiCDC, testing switch: a delete's value is 0x03 + 8-byte commit TSO
CONFLUENT_HEADER_SIZE: Final = 5
GLUE_HEADER_SIZE: Final = 18
_ID: Final = struct.Struct(">BI")
_TSO: Final = struct.Struct(">BQ")


class FramingError(ValueError):
    """The bytes do not start with a header this codec knows; codecs turn it into a positioned DecodeError."""


@attrs.frozen
class Framed:
    """A datum and what identifies its writer schema: a registry id (Confluent) or a version UUID (Glue)."""

    schema_id: int | None
    glue_version: uuid.UUID | None
    datum: memoryview


def confluent(schema_id: int, datum: bytes) -> bytes:
    return _ID.pack(CONFLUENT_MAGIC, schema_id) + datum


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
        if len(data) < CONFLUENT_HEADER_SIZE:
            raise FramingError(f"Confluent header needs {CONFLUENT_HEADER_SIZE} bytes, got {len(data)}")
        schema_id = _ID.unpack_from(data)[1]
        return Framed(schema_id, None, memoryview(data)[CONFLUENT_HEADER_SIZE:])
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
