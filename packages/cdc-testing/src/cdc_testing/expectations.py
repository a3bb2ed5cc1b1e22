"""What a protocol cannot carry, normalized on the expected side of a round-trip test, and only that."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import attrs

from cdc_core.events import Op, RowChange
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


__all__ = ["through_debezium"]
