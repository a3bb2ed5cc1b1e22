"""Small parts of the codec: the Go JSON writer, TiDB's DDL action codes, Glue schema files."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cdc_avro import CODEC, gojson
from cdc_avro.ddl import ddl_type_of
from cdc_core.errors import DecodeError
from cdc_core.events import DDLType
from cdc_core.message import Message


def test_go_json_writer() -> None:
    assert gojson.dumps({"a": "<x&y>\u2028é", "b": [1, 2.5, 1e-7, 1e21, None, True]}) == (
        '{"a":"\\u003cx\\u0026y\\u003e\\u2028é","b":[1,2.5,1e-7,1e+21,null,true]}'
    )


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
