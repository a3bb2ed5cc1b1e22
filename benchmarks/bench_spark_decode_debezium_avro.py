"""Debezium Avro on Spark: ``decode`` plans ``jvm`` and ``python`` against a bare ``from_avro`` of the same records.

The input is the changefeed generator (three tables, an ADD COLUMN half way, updates and deletes) written by the
``debezium-avro`` encoder with ``enable-tidb-extension`` into a real Apicurio registry (fixture
``schema_registry``), as Kafka-shaped rows over three partitions, replicated in the JVM
(``CDC_BENCH_DEBEZIUM_AVRO_COPIES`` copies, default 10) with distinct offsets. The baseline reads each value record
(the Envelope: before, after, source, op) with spark-avro's ``from_avro`` and its writer schema (header cut off, one
``from_avro`` per schema id): no keys, no typing to the contract, no dead letters. ``plan="jvm"`` produces the full
change-frame contract on the same input; ``plan="python"`` (the codec) runs on one copy only. Every run forces each
output through Spark's ``noop`` sink; the ratios printed are rows/s over the baseline's, measured in the same run.

    nox -s bench -- benchmarks/bench_spark_decode_debezium_avro.py -s
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from spark_timing import bench_session, from_avro_baseline, kafka_frames, time_decode_against, value_schemas

from cdc_core.registry import installed_codecs

TRANSACTIONS = 4_000
COPIES = int(os.environ.get("CDC_BENCH_DEBEZIUM_AVRO_COPIES", "10"))

pytestmark = pytest.mark.skipif("debezium-avro" not in installed_codecs(), reason="needs cdc-debezium[avro]")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with bench_session("bench-debezium-avro", driver_memory="2g") as session:
        yield session


def test_debezium_avro_decode_against_from_avro(benchmark: Any, spark: Any, schema_registry: Any) -> None:
    from cdc_core.schema_registry import Registry, RegistrySettings
    from cdc_testing.changefeed import encode, generate

    options = {"schema-registry": schema_registry.url}
    changefeed = generate(seed=11, transactions=TRANSACTIONS)
    messages = encode(changefeed, "debezium-avro", {**options, "enable-tidb-extension": True})
    one, many = kafka_frames(spark, messages, COPIES, partition=lambda position, _message: position % 3)
    large = many.count()
    registry = Registry(RegistrySettings(url=schema_registry.url, protocol="debezium-avro"))
    baseline = from_avro_baseline(many, value_schemas(one, registry))

    jvm_paths = time_decode_against(
        benchmark, baseline, "from_avro", one=one, many=many, protocol="debezium-avro", options=options
    )
    assert jvm_paths.get("jvm", 0) > 0.8 * large, jvm_paths  # the JVM typed the changes (DDLs are the codec's)
    many.unpersist()
    one.unpersist()
