"""decode(encode(event)) over the kitchen-sink schema, for every option combination and both flavours.

Expected events are the input with what the protocol loses taken out, spelled here explicitly: without
member lists (plain mysqlType) ENUM/SET come back as `EnumIndex`/`SetBits`; without the TiDB extension there
is no commitTs; Canal-JSON carries no table id or schema version; partial ``old`` records changed columns.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdc_canal.encoder import CanalEncoder
from cdc_canal.outbound import make_formatter
from cdc_core.codec import Options
from cdc_core.events import DDLEvent, DDLType, Op, RowChange, Watermark
from cdc_core.registry import get_codec
from cdc_core.textual import UTC, enum_index, resolve_zone, set_bits
from cdc_core.types import LogicalType
from cdc_core.values import EnumIndex, SetBits, Value
from cdc_testing.strategies import kitchen_sink_schema, row_changes, table_schemas

SCHEMA = kitchen_sink_schema()
OPTION_NAMES = (
    "enable-tidb-extension",
    "content-compatible",
    "only-output-updated-columns",
    "delete-only-output-handle-key-columns",
)
COMBINATIONS = [
    {"flavour": flavour, **dict(zip(OPTION_NAMES, flags, strict=True))}
    for flavour in ("ticdc", "canal")
    for flags in itertools.product((False, True), repeat=len(OPTION_NAMES))
]
ZONES = ("UTC", "Asia/Shanghai", "America/New_York")


def _encoder(options: dict[str, Any]) -> CanalEncoder:
    specs = [s for s in get_codec("canal-json").options if s.for_encoder]
    return CanalEncoder(Options(specs, options, protocol="canal-json"), clock=lambda: 1)


def _lossy(value: Value, column_type: Any, names_known: bool) -> Value:
    if value is None or names_known:
        return value
    if column_type.logical is LogicalType.ENUM:
        index = enum_index(value, column_type)
        return "" if index == 0 else EnumIndex(index)
    if column_type.logical is LogicalType.SET:
        return SetBits(set_bits(value, column_type))
    return value


def expected_after_round_trip(event: RowChange, options: dict[str, Any], zone: str) -> RowChange:
    schema = event.schema
    assert schema is not None
    canal = options["flavour"] == "canal"
    names_known = canal or options["content-compatible"]
    extension = options["enable-tidb-extension"] and not canal
    only_updated = options["only-output-updated-columns"] or names_known
    types = {c.name: c.data_type for c in schema.columns}

    def image(row: dict[str, Value] | None, keys: tuple[str, ...] | None = None) -> dict[str, Value] | None:
        if row is None:
            return None
        return {k: _lossy(v, types[k], names_known) for k, v in row.items() if keys is None or k in keys}

    before, after, changed = event.before, event.after, None
    if event.op is Op.DELETE and options["delete-only-output-handle-key-columns"]:
        before = image(before, schema.handle_key)
    if event.op is Op.UPDATE and only_updated:
        assert before is not None and after is not None
        formatters = {n: make_formatter(t, resolve_zone(zone), member_names=canal) for n, t in types.items()}

        def text(value: Value, name: str) -> str | None:
            return None if value is None else formatters[name](value)

        diff = tuple(n for n in after if text(before[n], n) != text(after[n], n))
        changed = None if len(diff) == len(after) else diff
    return attrs.evolve(
        event,
        before=image(before),
        after=image(after),
        commit_ts=event.commit_ts if extension else None,
        table_id=None,
        schema_version=None,
        changed_columns=changed,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), options=st.sampled_from(COMBINATIONS), zone=st.sampled_from(ZONES))
def test_kitchen_sink_round_trip_every_option_combination(
    data: st.DataObject, options: dict[str, Any], zone: str
) -> None:
    event = data.draw(row_changes(SCHEMA))
    (message,) = _encoder({**options, "time-zone": zone}).encode(event)
    (decoded,) = get_codec("canal-json").decoder({"time-zone": zone}).decode(message)
    assert decoded == expected_after_round_trip(event, options, zone)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=row_changes(), options=st.sampled_from(COMBINATIONS))
def test_random_tables_round_trip(event: RowChange, options: dict[str, Any]) -> None:
    (message,) = _encoder(options).encode(event)
    (decoded,) = get_codec("canal-json").decoder().decode(message)
    assert decoded == expected_after_round_trip(event, options, "UTC")
    assert decoded.schema is not None and decoded.schema.primary_key == ("id",)


def test_every_combination_is_covered() -> None:
    assert len(COMBINATIONS) == 2 * 2 ** len(OPTION_NAMES)
    assert {o["flavour"] for o in COMBINATIONS} == {"ticdc", "canal"}
    assert SCHEMA.column("c_timestamp").data_type.logical is LogicalType.TIMESTAMP
    assert UTC is not None and table_schemas is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=row_changes(SCHEMA), claim=st.booleans())
def test_reduced_rows_round_trip(event: RowChange, claim: bool) -> None:
    location = "file:///claims/4f7d2c1e.json" if claim else None
    reduced = attrs.evolve(event, handle_key_only=not claim, claim_check_location=location)
    (message,) = _encoder({"enable-tidb-extension": True}).encode(reduced)
    (decoded,) = get_codec("canal-json").decoder().decode(message)
    keys = SCHEMA.handle_key

    def only_keys(image: dict[str, Value] | None) -> dict[str, Value] | None:
        return None if image is None else {k: image[k] for k in keys}

    expected_before = only_keys(event.before)
    if event.op is Op.UPDATE:  # old is complete for the key columns, so nothing is flagged as changed
        assert decoded.changed_columns is None
    assert decoded.before == expected_before and decoded.after == only_keys(event.after)
    assert decoded.handle_key_only and decoded.claim_check_location == location


DDL_EVENTS = st.builds(
    DDLEvent,
    ddl_type=st.sampled_from(list(DDLType)),
    sql=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=80),
    database=st.sampled_from(["shop", "test"]),
    table=st.none() | st.sampled_from(["t", "orders"]),
    commit_ts=st.integers(1 << 18, (1 << 63) - 1),
)


@settings(max_examples=60, deadline=None)
@given(event=DDL_EVENTS | st.builds(Watermark, ts=st.integers(1 << 18, (1 << 64) - 1)))
def test_ddl_and_watermark_round_trip(event: DDLEvent | Watermark) -> None:
    messages = _encoder({"enable-tidb-extension": True, "partition-num": 2}).encode(event)
    decoded = [e for m in messages for e in get_codec("canal-json").decoder().decode(m)]
    assert decoded == [event] * len(messages)
    assert [m.partition for m in messages] == ([0] if isinstance(event, DDLEvent) else [0, 1])
