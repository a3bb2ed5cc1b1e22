"""The Schema Registry test double answers confluent-kafka's real client as a Confluent registry does
(the subset the codec and its tests rely on), and the codec's helpers around it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from cdc_avro import CODEC, gojson
from cdc_avro.ddl import ddl_type_of
from cdc_avro.registry import describe_change
from cdc_core.errors import DecodeError
from cdc_core.events import DDLType
from cdc_core.message import Message
from cdc_testing.registry import SchemaRegistryDouble, backward_problems

V1 = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})
V2 = json.dumps(
    {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}],
    }
)
BAD = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"}]})


def test_client_operations_against_the_double(schema_registry: SchemaRegistryDouble) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    first = client.register_schema("s-value", Schema(V1, "AVRO"))
    assert client.register_schema("other-value", Schema(V1, "AVRO")) == first  # ids are global per schema
    second = client.register_schema("s-value", Schema(V2, "AVRO"))
    assert second != first
    assert client.get_versions("s-value") == [1, 2]
    assert client.get_latest_version("s-value").schema_id == second
    assert client.lookup_schema("s-value", Schema(V1, "AVRO")).version == 1
    assert json.loads(client.get_schema(first).schema_str or "") == json.loads(V1)
    assert client.test_compatibility("s-value", Schema(BAD, "AVRO")) is False
    assert sorted(client.get_subjects()) == ["other-value", "s-value"]
    client.set_compatibility("s-value", "NONE")
    assert client.get_compatibility("s-value") == "NONE"
    assert client.register_schema("s-value", Schema(BAD, "AVRO")) not in (first, second)
    with pytest.raises(SchemaRegistryError) as caught:
        client.get_schema(12345)
    assert caught.value.http_status_code == 404 and caught.value.error_code == 40403


def test_backward_rules() -> None:
    assert backward_problems(V1, V2) == []
    assert backward_problems(V1, BAD) == ["TYPE_MISMATCH: a"]
    no_default = json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "c", "type": "int"}]}
    )
    assert backward_problems(V1, no_default) == ["READER_FIELD_MISSING_DEFAULT_VALUE: c"]


def test_describe_change_names_each_change() -> None:
    assert describe_change(None, V1) == "first version of the subject"
    assert describe_change(V1, V2) == "adds column b with default"
    assert describe_change(V2, BAD) == "changes the type of column a; drops column b"
    assert describe_change(V1, V1) == "changes schema attributes"
    assert describe_change("not json", V1) == "schema replaced"


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
