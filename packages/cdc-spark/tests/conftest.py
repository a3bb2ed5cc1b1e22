"""One local SparkSession per pytest process, built by the package's own session builder (Spark's Kafka and Avro
connectors, Delta Lake and Iceberg; local[2], UTC, no UI, warehouse in a temporary directory)."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc_core.message import Message


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from cdc_spark.session import build_session

    with tempfile.TemporaryDirectory(prefix="cdc-spark-tests-") as scratch:
        session = build_session(
            os.environ.get("CDC_TEST_SPARK_MASTER", "local[2]"),
            app_name="cdc-spark-tests",
            conf={
                "spark.sql.warehouse.dir": os.path.join(scratch, "warehouse"),
                "spark.driver.extraJavaOptions": f"-Dderby.system.home={scratch}",
            },
            log_level="ERROR",
        )
        yield session
        session.stop()


@pytest.fixture
def kafka_frame(spark: Any) -> Callable[[list[Message]], Any]:
    """Messages as a Kafka-source DataFrame: topic ``shop``, partition = the message's modulo 3, offset = index."""
    from cdc_spark.source.columns import KAFKA_COLUMNS

    def build(messages: list[Message]) -> Any:
        stamp = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
        rows = [(m.key, m.value, "shop", (m.partition or 0) % 3, i, stamp, 0, None) for i, m in enumerate(messages)]
        return spark.createDataFrame(rows, KAFKA_COLUMNS)

    return build


def sorted_changes(frame: Any) -> list[Any]:
    return sorted(
        frame.collect(), key=lambda r: (r["_cdc_partition"], r["_cdc_offset"], r["_cdc_sequence"]["position"])
    )


@pytest.fixture
def change_rows() -> Callable[[Any], list[Any]]:
    """A change frame's rows in the contract's total order (partition, offset, position)."""
    return sorted_changes


@pytest.fixture(scope="session")
def kitchen_sink_canal() -> Callable[[int], list[Message]]:
    """Row changes of every column type (zero dates included) as official Canal writes them, with TiDB's
    extension fields and TIMESTAMPs in Asia/Shanghai, spread over three partitions."""
    from hypothesis import HealthCheck, given, settings

    from cdc_core.events import RowChange
    from cdc_core.registry import get_codec
    from cdc_testing.strategies import kitchen_sink_schema, row_changes

    def build(count: int) -> list[Message]:
        events: list[RowChange] = []

        @settings(max_examples=count, database=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(row_changes(kitchen_sink_schema(), zero_dates=True))
        def draw(change: RowChange) -> None:
            events.append(change)

        draw()
        encoder = get_codec("canal-json").encoder(
            {
                "flavour": "canal",
                "content-compatible": True,
                "enable-tidb-extension": True,
                "time-zone": "Asia/Shanghai",
            }
        )
        return [
            Message(value=m.value, key=m.key, partition=number % 3)
            for number, event in enumerate(events)
            for m in encoder.encode(event)
        ]

    return build
