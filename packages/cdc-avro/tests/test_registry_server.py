"""What the codec relies on from a Confluent-compatible registry, checked on a real one (Apicurio Registry's
ccompat API) through confluent-kafka's own client: ids, versions, look-ups, compatibility answers, error codes.
Where Apicurio differs from Confluent, the test says so (docs/protocols/avro.md lists the differences)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from cdc_avro.registry import describe_change
from cdc_testing.apicurio import ApicurioRegistry

V1 = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})
V2 = json.dumps(
    {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}],
    }
)
BAD = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"}]})
NO_DEFAULT = json.dumps(
    {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, {"name": "c", "type": "int"}]}
)


def _error(call: object) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as caught:
        assert callable(call)
        call()
    return caught.value


def test_ids_versions_and_look_ups(schema_registry: ApicurioRegistry) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    first = client.register_schema("s-value", Schema(V1, "AVRO"))
    assert client.register_schema("other-value", Schema(V1, "AVRO")) == first  # one id per schema, across subjects
    assert client.register_schema("s-value", Schema(V1, "AVRO")) == first  # registering again is idempotent
    second = client.register_schema("s-value", Schema(V2, "AVRO"))
    assert second != first  # ids are not dense on Apicurio: compare with what it answers, never with numbers
    assert client.register_schema("s-value", Schema(V1, "AVRO")) == first  # an earlier version: no new version
    assert client.get_versions("s-value") == [1, 2]
    latest = client.get_latest_version("s-value")
    assert (latest.schema_id, latest.version) == (second, 2)
    assert client.lookup_schema("s-value", Schema(V1, "AVRO")).version == 1
    assert json.loads(client.get_schema(first).schema_str or "") == json.loads(V1)
    assert client.get_schema(second).schema_str == V2  # the text as registered
    assert sorted(client.get_subjects()) == ["other-value", "s-value"]


def test_subject_names_with_dots_and_slashes(schema_registry: ApicurioRegistry) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    for subject in ("tidb_a.b-value", "a/b-key", "tidb___-value"):
        schema_id = client.register_schema(subject, Schema(V1, "AVRO"))
        assert client.get_latest_version(subject).schema_id == schema_id
    assert sorted(client.get_subjects()) == ["a/b-key", "tidb___-value", "tidb_a.b-value"]


def test_backward_compatibility_answers(schema_registry: ApicurioRegistry) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    assert client.get_compatibility() == "BACKWARD"  # set by the fixture, as a Confluent registry starts
    client.register_schema("s-value", Schema(V1, "AVRO"))
    assert client.test_compatibility("s-value", Schema(V2, "AVRO")) is True
    assert client.test_compatibility("s-value", Schema(BAD, "AVRO")) is False
    for schema in (BAD, NO_DEFAULT):
        rejected = _error(lambda schema=schema: client.register_schema("s-value", Schema(schema, "AVRO")))
        assert (rejected.http_status_code, rejected.error_code) == (409, 409)
        assert "Incompatible" in rejected.error_message
    client.set_compatibility(level="NONE")
    assert client.register_schema("s-value", Schema(BAD, "AVRO")) > 0
    assert client.get_versions("s-value") == [1, 2]


def test_a_subject_level_does_not_lift_the_global_check_on_apicurio(schema_registry: ApicurioRegistry) -> None:
    # Confluent: the subject's NONE overrides the global BACKWARD. Apicurio 3.0.9 stores and reports the
    # subject's level but still applies the global rule, so a registry operator relaxes it globally there.
    client = SchemaRegistryClient({"url": schema_registry.url})
    client.register_schema("s-value", Schema(V1, "AVRO"))
    client.set_compatibility("s-value", "NONE")
    assert client.get_compatibility("s-value") == "NONE"
    assert _error(lambda: client.register_schema("s-value", Schema(BAD, "AVRO"))).http_status_code == 409


def test_error_codes(schema_registry: ApicurioRegistry) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    for schema_id in (0, 12345, 2**32 - 1):
        missing = _error(lambda schema_id=schema_id: client.get_schema(schema_id))
        assert (missing.http_status_code, missing.error_code) == (404, 40403)
    unknown = _error(lambda: client.get_latest_version("nope-value"))
    assert (unknown.http_status_code, unknown.error_code) == (404, 40401)
    for text in ('{"type": "record"}', "not json"):
        invalid = _error(lambda text=text: client.register_schema("x-value", Schema(text, "AVRO")))
        assert (invalid.http_status_code, invalid.error_code) == (422, 42201)


def test_reset_empties_the_registry(schema_registry: ApicurioRegistry) -> None:
    client = SchemaRegistryClient({"url": schema_registry.url})
    client.register_schema("s-value", Schema(V1, "AVRO"))
    client.set_compatibility(level="NONE")
    schema_registry.reset()
    assert schema_registry.requests() == []  # the reset's own calls are not listed
    assert client.get_subjects() == []
    assert client.get_compatibility() == "BACKWARD"
    client.register_schema("s-value", Schema(V2, "AVRO"))
    assert client.get_versions("s-value") == [1]
    assert schema_registry.requests() == [
        ("GET", "/subjects"),
        ("GET", "/config"),
        ("POST", "/subjects/s-value/versions"),
        ("GET", "/subjects/s-value/versions"),
    ]


def test_describe_change_names_each_change() -> None:
    assert describe_change(None, V1) == "first version of the subject"
    assert describe_change(V1, V2) == "adds column b with default"
    assert describe_change(V2, BAD) == "changes the type of column a; drops column b"
    assert describe_change(V1, V1) == "changes schema attributes"
    assert describe_change("not json", V1) == "schema replaced"
