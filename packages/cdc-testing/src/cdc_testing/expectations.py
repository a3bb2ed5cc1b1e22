"""What a protocol cannot carry, normalized on the expected side of a round-trip test, and only that."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import attrs

from cdc_core import canonical
from cdc_core.events import Event, Op, RowChange
from cdc_core.schema import TableSchema
from cdc_core.types import LogicalType


def _through_double(image: dict[str, Any] | None, schema: TableSchema) -> dict[str, Any] | None:
    if image is None:
        return None
    out = dict(image)
    for column in schema.columns:
        value = out.get(column.name)
        if column.data_type.logical is LogicalType.DECIMAL and value is not None:
            out[column.name] = Decimal(repr(float(value)))
    return out


def through_debezium(event: RowChange, *, old_value: bool = True) -> RowChange:
    """``event`` as TiCDC's Debezium form carries it (JSON or Avro): DECIMAL as a float64 (its fixed
    ``decimal.handling.mode=double``), no table ID or schema version, and without ``output-old-value`` no before
    image of updates."""
    schema = event.schema
    assert schema is not None
    before = event.before if old_value or event.op is Op.DELETE else None
    return attrs.evolve(
        event,
        before=_through_double(before, schema),
        after=_through_double(event.after, schema),
        table_id=None,
        schema_version=None,
    )


# What differs between two encodings of one change, whichever producer wrote them: the time each encoded it (for
# a connector's snapshot, the time each read the row) and the producer's own name (its topic prefix); for a
# snapshot read also the log position each connector's snapshot started at (a PostgreSQL slot's own LSN).
_PRODUCER_META = frozenset({"ts_ms", "source_ts_ms", "ts_us", "ts_ns", "cluster"})
_SNAPSHOT_POSITION = frozenset({"lsn", "txId", "sequence", "file", "pos", "gtid", "xmin"})


def same_change(event: Event) -> dict[str, Any]:
    """``event``'s canonical document less what two encodings of its change (JSON and Avro, two connectors) may
    differ in: where it was read, when and by which producer it was written."""
    document = canonical.to_canonical(attrs.evolve(event, source=None))
    meta = document.get("meta")
    if isinstance(meta, dict):
        dropped = _PRODUCER_META | _SNAPSHOT_POSITION if meta.get("snapshot_read") else _PRODUCER_META
        document["meta"] = {k: v for k, v in meta.items() if k not in dropped}
    return document


_SPATIAL_SUBTYPES = frozenset(
    {"point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection"}
)


def with_generic_geometry(document: dict[str, Any]) -> dict[str, Any]:
    """A canonical event whose table schema has GEOMETRY for every spatial subtype but POINT: what Kafka Connect's
    Avro converter leaves of propagated source types when several columns share Debezium's Geometry record (the
    Avro schema defines it once, with the first column's parameters; the others only name it)."""
    schema = document.get("schema")
    if not isinstance(schema, dict):
        return document
    return {**document, "schema": {**schema, "columns": [_generic(c) for c in schema.get("columns", [])]}}


def _generic(column: dict[str, Any]) -> dict[str, Any]:
    kind = column.get("data_type", {}).get("mysql_type")
    if kind not in _SPATIAL_SUBTYPES or kind == "point":
        return column
    return {**column, "data_type": {**column["data_type"], "mysql_type": "geometry"}}


def assert_same_changes(avro: list[Event], json_form: list[Event], *, propagated_types: bool) -> None:
    """Two encodings of one stream (Kafka Connect's Avro and JSON converters, the same connector settings) decode
    to the same events, one for one; with propagated source types (``column.propagate.source.type``) the Avro
    form's spatial columns after the first are GEOMETRY (:func:`with_generic_geometry`)."""
    assert len(avro) == len(json_form), (len(avro), len(json_form))
    for got, want in zip(avro, json_form, strict=True):
        expected = same_change(want)
        assert same_change(got) == (with_generic_geometry(expected) if propagated_types else expected), (
            got.source,
            want.source,
        )


__all__ = ["assert_same_changes", "same_change", "through_debezium", "with_generic_geometry"]
