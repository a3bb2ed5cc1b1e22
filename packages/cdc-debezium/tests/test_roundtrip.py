"""decode(encode(event)) == event over the kitchen-sink schema (every column type), schema on and off.

What the protocol itself cannot carry is normalized on the expected side, and only that: DECIMAL travels as
a float64 (TiCDC's fixed ``decimal.handling.mode=double``), and Debezium has no table ID or schema version.
Typing comes from ``tidb_type`` (schema on with the TiDB extension) or from the user's TableSchema.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_core.codec import Options
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_debezium import OPTIONS, DebeziumDecoder, DebeziumEncoder
from cdc_testing.expectations import through_debezium
from cdc_testing.strategies import kitchen_sink_schema, row_changes, table_schemas

KITCHEN_SINK = kitchen_sink_schema()
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _options(for_encoder: bool, raw: dict[str, object]) -> Options:
    specs = [s for s in OPTIONS if (s.for_encoder if for_encoder else s.for_decoder)]
    return Options(specs, raw, protocol="debezium")


expected = through_debezium


def round_trip(event: RowChange, encode: dict[str, object], *, user_schema: bool) -> RowChange:
    (message,) = DebeziumEncoder(_options(True, encode)).encode(event)
    assert event.schema is not None
    schemas = [event.schema] if user_schema else []
    decoder = DebeziumDecoder(_options(False, {}), schemas=schemas)
    (decoded,) = decoder.decode(Message(key=message.key, value=message.value, topic="t", partition=0, offset=1))
    assert isinstance(decoded, RowChange)
    return decoded


@SETTINGS
@given(row_changes(KITCHEN_SINK))
def test_schema_on_with_tidb_extension(event: RowChange) -> None:
    decoded = round_trip(event, {"enable-tidb-extension": True}, user_schema=False)
    assert decoded == expected(event)
    assert decoded.schema is not None and decoded.schema.primary_key == ("id",)


@SETTINGS
@given(row_changes(KITCHEN_SINK))
def test_schema_off_with_user_schema(event: RowChange) -> None:
    decoded = round_trip(event, {"debezium-disable-schema": True}, user_schema=True)
    assert decoded == expected(event)


@SETTINGS
@given(row_changes(KITCHEN_SINK))
def test_plain_debezium_schema_with_user_schema(event: RowChange) -> None:
    decoded = round_trip(event, {}, user_schema=True)
    assert decoded == expected(event)


@SETTINGS
@given(row_changes(KITCHEN_SINK), st.booleans())
def test_output_old_value_off(event: RowChange, with_schema: bool) -> None:
    options = {"output-old-value": False, "debezium-disable-schema": not with_schema, "enable-tidb-extension": True}
    decoded = round_trip(event, options, user_schema=not with_schema)
    assert decoded == expected(event, old_value=False)


@SETTINGS
@given(st.data())
def test_random_tables(data: st.DataObject) -> None:
    schema = data.draw(table_schemas())
    event = data.draw(row_changes(schema))
    assert round_trip(event, {"enable-tidb-extension": True}, user_schema=False) == expected(event)
