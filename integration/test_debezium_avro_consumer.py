"""What ``cdc convert --to debezium-avro`` writes is read by a real consumer: Kafka Connect's file sink with
Apicurio's Avro converter (Confluent mode) for key and value, against the session's real registry and broker.

The input is what real Debezium (MariaDB connector, JsonConverter) wrote in the captured corpus; the CLI runs as a
subprocess knowing only the registry URL. The converter reads each record's schema id from its framing, fetches
the schema from the registry and gives Connect a Struct, which the sink writes as one line: every record must
arrive, with the values the JSON form had.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cdc_core.messagelines import parse_line
from cdc_testing import kafka
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.connect import ConnectWorker
from cdc_testing.producers import avro_converters

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

CAPTURE = Path(__file__).parents[1] / "packages" / "cdc-debezium" / "tests" / "captures" / "mdb-precise.jsonl"
PREFIX = "consumed"


def _converted(registry: ApicurioRegistry) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cdc_core.cli",
            "convert",
            "--from",
            "debezium",
            "--to",
            "debezium-avro",
            "--to-option",
            f"schema-registry={registry.url}",
            "--to-option",
            f"topic.prefix={PREFIX}",
            str(CAPTURE),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def _sink_records(path: Path, count: int, worker: ConnectWorker, timeout_s: float = 120.0) -> list[str]:
    """The sink's records: each a Struct's text on a line of its own (a DDL's SQL may continue on more lines)."""
    deadline = time.monotonic() + timeout_s
    lines: list[str] = []
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text(encoding="utf-8")
            lines = ["Struct{" + part for part in ("\n" + text).split("\nStruct{")[1:]]
            if len(lines) >= count:
                return lines
        status = worker.status("avro-sink")
        failed = [s for s in [status["connector"], *status.get("tasks", [])] if s.get("state") == "FAILED"]
        assert not failed, failed[0].get("trace", "")[:3000]
        time.sleep(0.5)
    raise AssertionError(f"the sink wrote {len(lines)} of {count} records within {timeout_s:.0f} s")


def test_connects_avro_converter_reads_what_cdc_convert_wrote(
    schema_registry: ApicurioRegistry, connect_worker: ConnectWorker, kafka_bootstrap: str, tmp_path: Path
) -> None:
    lines = _converted(schema_registry)
    messages = [parse_line(line.encode(), line=n) for n, line in enumerate(lines, 1)]
    topics = sorted({m.topic for m in messages if m.topic})
    assert f"{PREFIX}.inventory.types" in topics and PREFIX in topics  # rows, and the schema-change topic
    for topic in topics:
        kafka.create_topic(kafka_bootstrap, topic)
        kafka.produce(kafka_bootstrap, topic, [m for m in messages if m.topic == topic])
    out = tmp_path / "sink.txt"
    config = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "tasks.max": "1",
        "topics": ",".join(topics),
        "file": str(out),
        **{k: v for k, v in avro_converters(schema_registry.registry_api_url).items() if "converter" in k},
    }
    connect_worker.add("avro-sink", config)
    try:
        written = _sink_records(out, len(messages), connect_worker)
    finally:
        connect_worker.remove("avro-sink")
    assert len(written) == len(messages)
    # every record is a Struct of the Envelope (rows) or SchemaChangeValue (DDL) the encoder registered
    ops = Counter(part.split("=", 1)[1] for line in written for part in line.split(",") if part.startswith("op="))
    assert ops == _ops_of_the_capture()
    assert sum("ddl=" in line for line in written) == len(messages) - sum(ops.values())
    assert any("t_varchar=héllo wörld 😀" in line for line in written)
    assert any("ddl=ALTER TABLE types ADD COLUMN t_added" in line for line in written)


def _ops_of_the_capture() -> Counter[str]:
    """The op of every row change in the capture, as TiCDC's Debezium form writes it (snapshot reads as c)."""
    from cdc_core.events import RowChange
    from cdc_core.registry import get_codec

    decoder = get_codec("debezium").decoder({})
    with CAPTURE.open("rb") as stream:
        events = [e for n, line in enumerate(stream, 1) for e in decoder.decode(parse_line(line, line=n))]
    letters = {"insert": "c", "update": "u", "delete": "d"}
    return Counter(letters[e.op.value] for e in events if isinstance(e, RowChange))
