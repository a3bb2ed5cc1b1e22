"""Small parts of the codec: TiDB's DDL action codes, Glue schema files (the Go JSON writer is cdc_core.gojson)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cdc_avro import CODEC
from cdc_avro.ddl import ddl_type_of
from cdc_core.errors import DecodeError
from cdc_core.events import DDLType
from cdc_core.message import Message


def test_ddl_action_codes() -> None:
    assert ddl_type_of(3) is DDLType.CREATE
    assert ddl_type_of(11) is DDLType.TRUNCATE
    assert ddl_type_of(5) is DDLType.ALTER and ddl_type_of(999) is DDLType.ALTER


def test_glue_schema_files_missing(tmp_path: Path) -> None:
    version = uuid.uuid4()
    framed = b"\x03\x00" + version.bytes + b"\x02"
    with pytest.raises(DecodeError, match=r"no \S+\.avsc"):
        CODEC.decoder({"glue-schema-dir": str(tmp_path)}).decode(Message(value=framed, key=framed))
    with pytest.raises(DecodeError, match="glue-schema-dir"):
        CODEC.decoder({"schema-registry": "http://127.0.0.1:9"}).decode(Message(value=framed, key=framed))
