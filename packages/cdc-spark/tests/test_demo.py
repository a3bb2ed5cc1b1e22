"""The demo end to end (broker, encoder, job, check), and that its check does catch a wrong table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.demo import differences, main
from cdc_testing.changefeed import generate

pytestmark = [pytest.mark.spark, pytest.mark.kafka]


def test_demo_ends_with_tables_equal_to_the_source(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "tables"
    assert main(["--transactions", "40", "--rows", "2", "--target", str(target)]) == 0
    out = capsys.readouterr().out
    assert "CHECK PASSED" in out and "batch 0:" in out

    # the check is real: a changed value, a lost row and an extra row are all reported
    from deltalake import DeltaTable

    feed = generate(seed=1, transactions=40)
    orders = DeltaTable(str(target / "shop" / "orders"))
    first = next(iter(feed.state["orders"]))[0]
    orders.update(updates={"status": "'tampered'"}, predicate=f"order_id = {first}")
    customers = DeltaTable(str(target / "shop" / "customers"))
    gone = next(iter(feed.state["customers"]))[0]
    customers.delete(f"id = {gone}")
    problems = differences(str(target), feed, limit=50)
    assert any("orders" in p and "status: expected" in p and "tampered" in p for p in problems)
    assert any("customers" in p and p.endswith("missing") for p in problems)
