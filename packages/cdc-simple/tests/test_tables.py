"""Completeness of the protocol tables, the shipped Avro schema, and the codec registration."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_core.events import DDLType, Op
from cdc_core.registry import get_codec
from cdc_simple import CODEC, avro
from cdc_simple.names import AVRO_NAMESPACE, AVRO_PAYLOADS, DDL_TYPES, DML_NAMES, DML_TYPES
from cdc_testing.corpus import corpus_files


def _named(schema: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {f"{AVRO_NAMESPACE}.{t['name']}": t for t in schema}


def test_shipped_avro_schema_is_tiflows() -> None:
    (tiflow,) = corpus_files("tiflow/pkg/sink/codec/simple/message.json")
    assert avro.schema_document() == json.loads(tiflow.read_text(encoding="utf-8"))
    assert len(avro.schema_document()) == 12


def test_type_tables_cover_the_schema_enums() -> None:
    types = _named(avro.schema_document())
    ddl_enum = next(f for f in types[f"{AVRO_NAMESPACE}.DDL"]["fields"] if f["name"] == "type")  # type: ignore[attr-defined]
    assert set(ddl_enum["type"]["symbols"]) == set(DDL_TYPES) == {t.value for t in DDLType}
    dml_enum = next(f for f in types[f"{AVRO_NAMESPACE}.DML"]["fields"] if f["name"] == "type")  # type: ignore[attr-defined]
    assert dml_enum["type"]["symbols"] == list(DML_TYPES)
    assert set(DML_NAMES) == set(Op) and all(DML_TYPES[DML_NAMES[op]] is op for op in Op)
    message: Any = types[f"{AVRO_NAMESPACE}.Message"]["fields"]
    kinds, payloads = message
    assert kinds["type"]["symbols"] == list(AVRO_PAYLOADS)
    assert payloads["type"] == list(AVRO_PAYLOADS.values())


def test_codec_is_registered_with_ticdc_option_names() -> None:
    assert get_codec("simple") is CODEC
    names = {spec.name for spec in CODEC.options}
    assert {
        "encoding-format",
        "send-bootstrap-interval-in-sec",
        "send-bootstrap-in-msg-count",
        "send-bootstrap-to-all-partition",
        "large-message-handle-option",
        "large-message-handle-compression",
        "claim-check-storage-uri",
        "claim-check-raw-value",
        "max-message-bytes",
    } <= names


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="encoding-format"):
        CODEC.decoder({"encoding-format": "protobuf"})
    with pytest.raises(ConfigError, match="claim-check-storage-uri"):
        CODEC.encoder({"large-message-handle-option": "claim-check"})
    with pytest.raises(ConfigError, match="handle-key-resolver"):
        CODEC.decoder({"handle-key-resolver": "no_such_module_xyz:f"})
    with pytest.raises(ConfigError, match="partition-num"):
        CODEC.encoder({"partition-num": 0})
