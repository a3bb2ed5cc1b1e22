"""The `cdc` command line with Avro: ``--option schema-registry=URL`` on encode and decode, through a real
Schema Registry (Apicurio's Confluent-compatible API; the CLI runs as a subprocess and only knows the URL)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

from confluent_kafka.schema_registry import SchemaRegistryClient

from cdc_core import canonical
from cdc_core.events import Op, RowChange
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.strategies import kitchen_sink_schema


def cdc(*args: str, stdin: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "cdc_core.cli", *args], input=stdin, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_encode_then_decode_through_the_registry(schema_registry: ApicurioRegistry) -> None:
    schema = kitchen_sink_schema()
    rows = [
        dict.fromkeys(schema.column_names) | {"id": 1, "c_varchar": "first", "c_bigint_u": 2**64 - 1},
        dict.fromkeys(schema.column_names) | {"id": 2, "c_enum": "green", "c_set": ("x", "z"), "c_bit_12": 4095},
    ]
    events = [
        RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=rows[0], commit_ts=1 << 30, schema=schema),
        RowChange(op=Op.UPDATE, database="test", table="kitchen_sink", after=rows[1], commit_ts=2 << 30, schema=schema),
        RowChange(
            op=Op.DELETE, database="test", table="kitchen_sink", before=rows[0], commit_ts=3 << 30, schema=schema
        ),
    ]
    registry = f"schema-registry={schema_registry.url}"
    lines = "".join(canonical.dumps(e) + "\n" for e in events)
    encoded = cdc("encode", "-p", "avro", "--option", registry, "--option", "enable-tidb-extension=true", stdin=lines)
    messages = [json.loads(line) for line in encoded.splitlines()]
    assert [m["topic"] for m in messages] == ["tidb_test_kitchen_sink"] * 3
    assert "value_b64" not in messages[2] or messages[2]["value_b64"] is None  # the delete is a tombstone
    assert base64.b64decode(messages[0]["value_b64"])[0] == 0  # Confluent magic byte
    client = SchemaRegistryClient({"url": schema_registry.url})
    assert sorted(client.get_subjects()) == ["tidb_test_kitchen_sink-key", "tidb_test_kitchen_sink-value"]
    decoded = cdc("decode", "-p", "avro", "--option", registry, "--option", "time-zone=UTC", stdin=encoded)
    back = [canonical.loads(line) for line in decoded.splitlines()]
    assert [e.op for e in back if isinstance(e, RowChange)] == [Op.INSERT, Op.UPDATE, Op.DELETE]
    first, second, third = back
    assert isinstance(first, RowChange) and isinstance(second, RowChange) and isinstance(third, RowChange)
    assert first.after == rows[0] and first.commit_ts == 1 << 30
    assert second.after == rows[1]
    assert third.before == {"id": 1} and third.commit_ts is None
