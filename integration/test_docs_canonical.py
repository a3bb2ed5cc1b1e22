"""The examples on docs/canonical-json.md are what the converter really reads and writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cdc_core import canonical

PAGE = Path(__file__).resolve().parents[1] / "docs" / "canonical-json.md"


def _blocks() -> list[dict[str, object]]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", PAGE.read_text(), flags=re.S)]


def test_every_example_round_trips_through_the_converter() -> None:
    blocks = _blocks()
    schema_doc = next(b for b in blocks if "columns" in b)
    schema = canonical.schema_from_json(schema_doc)
    assert canonical.schema_to_json(schema) == schema_doc
    events = [b for b in blocks if "kind" in b]
    assert {e["kind"] for e in events} == {"row", "ddl", "watermark", "message"}
    for document in events:
        event = canonical.from_canonical(document, schema=schema)
        assert canonical.to_canonical(event, include_schema=False) == document


def test_the_row_example_is_typed_exactly() -> None:
    import datetime as dt
    from decimal import Decimal

    blocks = _blocks()
    schema = canonical.schema_from_json(next(b for b in blocks if "columns" in b))
    row = canonical.from_canonical(next(b for b in blocks if b.get("kind") == "row"), schema=schema)
    after = row.after  # type: ignore[union-attr]
    assert after is not None
    assert after["id"] == 2**64 - 1
    assert after["price"] == Decimal("12.50")
    assert after["placed"] == dt.datetime(2024, 5, 1, 8, 30, 0, 125000, tzinfo=dt.UTC)
    assert after["tags"] == ("gift", "rush")
    assert after["photo"] == b"\x89PNG"
    assert after["wait"] == -dt.timedelta(hours=30)
