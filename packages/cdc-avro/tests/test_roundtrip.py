"""encode -> registry (Apicurio) -> decode gives equal typed values, for every mode combination."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

import attrs
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_avro import CODEC
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.textual import format_text
from cdc_core.values import ZeroTemporal
from cdc_testing.apicurio import ApicurioRegistry
from cdc_testing.strategies import kitchen_sink_schema, row_changes

MODES = list(itertools.product(["precise", "string"], ["long", "string"], [False, True], [False, True]))


def expected(event: RowChange, *, extension: bool) -> RowChange:
    """What Avro can carry: no before image of updates, key-only deletes without commit ts, op only with the
    extension (an update without it is indistinguishable from an insert)."""
    schema = event.schema
    assert schema is not None
    if event.op is Op.DELETE:
        assert event.before is not None
        key = {name: event.before[name] for name in schema.handle_key}
        return RowChange(op=Op.DELETE, database=event.database, table=event.table, before=key)
    return RowChange(
        op=event.op if extension else Op.INSERT,
        database=event.database,
        table=event.table,
        after=_zero_dates_as_written(schema, event.after),
        commit_ts=event.commit_ts if extension else None,
    )


def _zero_dates_as_written(schema: TableSchema, image: dict[str, Any] | None) -> dict[str, Any] | None:
    """A zero date as its column's fsp writes it (``0000-00-00 00:00:00.000``): the writer schema has no fsp, so the
    decoder keeps the whole text, to write it back as read."""
    if image is None:
        return None
    types = {c.name: c.data_type for c in schema.columns}
    return {
        name: ZeroTemporal(format_text(value, types[name])) if isinstance(value, ZeroTemporal) else value
        for name, value in image.items()
    }


def _roundtrip(registry: ApicurioRegistry, options: dict[str, str], events: list[RowChange]) -> None:
    encoder = CODEC.encoder({"schema-registry": registry.url, **options})
    decoder = CODEC.decoder({"schema-registry": registry.url})
    extension = options.get("enable-tidb-extension") == "true"
    for offset, event in enumerate(events):
        (message,) = encoder.encode(event)
        received = Message(value=message.value, key=message.key, topic=message.topic, partition=0, offset=offset)
        (decoded,) = decoder.decode(received)
        assert isinstance(decoded, RowChange)
        assert attrs.evolve(decoded, source=None) == expected(event, extension=extension)


@pytest.mark.parametrize(("decimal", "bigint", "extension", "nullable"), MODES)
def test_every_column_type_round_trips(
    schema_registry: ApicurioRegistry, decimal: str, bigint: str, extension: bool, nullable: bool
) -> None:
    schema = kitchen_sink_schema(nullable=nullable)
    options = {
        "avro-decimal-handling-mode": decimal,
        "avro-bigint-unsigned-handling-mode": bigint,
        "enable-tidb-extension": str(extension).lower(),
    }
    batches: list[list[RowChange]] = []

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.lists(row_changes(schema), min_size=1, max_size=4))
    def collect(events: list[RowChange]) -> None:
        batches.append(events)

    collect()
    _roundtrip(schema_registry, options, [e for batch in batches for e in batch])
    # one key and one value schema per mode, registered once however many rows went through
    assert len([r for r in schema_registry.requests() if r[0] == "POST"]) == 2


def test_extreme_values_round_trip(schema_registry: ApicurioRegistry) -> None:
    schema: TableSchema = kitchen_sink_schema(nullable=False)
    row = {
        "id": 1,
        "c_tinyint": -128,
        "c_tinyint_u": 255,
        "c_smallint": -32768,
        "c_smallint_u": 65535,
        "c_mediumint": -8388608,
        "c_mediumint_u": 16777215,
        "c_int": -2147483648,
        "c_int_u": 4294967295,
        "c_bigint": -(2**63),
        "c_bigint_u": 2**64 - 1,
        "c_float": 0.0,
        "c_double": -1.5e300,
        "c_decimal": Decimal("-999999.9999"),
        "c_decimal_wide": Decimal("0.0000000000"),
        "c_decimal_int": Decimal("99999999999999999999"),
        "c_date": dt.date(1000, 1, 1),
        "c_datetime": dt.datetime(9999, 12, 31, 23, 59, 59),
        "c_datetime_3": dt.datetime(2020, 2, 29, 1, 2, 3, 456000),
        "c_datetime_6": dt.datetime(2020, 2, 29, 1, 2, 3, 456789),
        "c_timestamp": dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=dt.UTC),
        "c_timestamp_6": dt.datetime(1970, 1, 1, 0, 0, 1, 1, tzinfo=dt.UTC),
        "c_time": -dt.timedelta(hours=838, minutes=59, seconds=59),
        "c_time_3": dt.timedelta(milliseconds=1),
        "c_year": 2155,
        "c_char": "中文",
        "c_varchar": "<&>\u2028",
        "c_text": "",
        "c_binary": b"\x00" * 8,
        "c_varbinary": b"",
        "c_blob": bytes(range(256)),
        "c_enum": "blue",
        "c_set": (),
        "c_bit_1": 1,
        "c_bit_12": 0,
        "c_bit_64": 2**64 - 1,
        "c_json": {"a": [1, "x", None, True], "b": {}},
    }
    # the four modes register four different schemas for one table (on Apicurio only the global level lifts it)
    SchemaRegistryClient({"url": schema_registry.url}).set_compatibility(level="NONE")
    event = RowChange(op=Op.INSERT, database="test", table="kitchen_sink", after=row, commit_ts=1 << 62, schema=schema)
    for decimal, bigint in itertools.product(["precise", "string"], ["long", "string"]):
        options = {
            "avro-decimal-handling-mode": decimal,
            "avro-bigint-unsigned-handling-mode": bigint,
            "enable-tidb-extension": "true",
        }
        _roundtrip(schema_registry, options, [event])


def test_zero_dates_and_vectors_round_trip(schema_registry: ApicurioRegistry) -> None:
    from cdc_core.schema import Column
    from cdc_core.types import DataType, MySQLType
    from cdc_testing.strategies import values_for

    base = kitchen_sink_schema(table="zero_and_vector")
    vector = Column(name="c_vector", data_type=DataType(mysql_type=MySQLType.VECTOR))
    schema = attrs.evolve(base, columns=[*base.columns, vector])
    batches: list[RowChange] = []

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(row_changes(schema, zero_dates=True, ops=(Op.INSERT,)), values_for(vector.data_type))
    def collect(event: RowChange, vector_value: list[float]) -> None:
        assert event.after is not None
        batches.append(attrs.evolve(event, after={**event.after, "c_vector": vector_value}))

    collect()
    assert any(isinstance(v, ZeroTemporal) for e in batches for v in (e.after or {}).values())
    _roundtrip(schema_registry, {"enable-tidb-extension": "true"}, batches)
