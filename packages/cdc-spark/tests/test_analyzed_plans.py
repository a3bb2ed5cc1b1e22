"""A statement analyzed once and reused over other frames of the same schemas: the rows of those frames, not the
first ones, and a statement planned anew wherever the plan cannot be reused."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cdc_spark.merge import analyzed_plans
from cdc_spark.merge.analyzed_plans import AnalyzedPlans
from cdc_spark.table_workers import own_session
from cdc_testing.spark_frames import scanned_frame

pytestmark = pytest.mark.spark

CHANGES = "id INT NOT NULL, op STRING, seq BIGINT, note STRING"
STORED = "id INT NOT NULL, seq BIGINT"


def _newest_against_stored(changes: str, stored: str) -> str:
    """Each key's newest change (a window), joined to its stored sequence: a resolve in small."""
    newest = (
        f"SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq DESC) AS rank FROM {changes})"
        " WHERE rank = 1"
    )
    return (
        f"SELECT n.id, n.op, n.note, n.seq > coalesce(o.seq, -1) AS newer FROM ({newest}) n"
        f" LEFT JOIN {stored} o ON n.id = o.id"
    )


def _frames(spark: Any, table: int) -> tuple[Any, Any]:
    """One table's changes and stored keys: rows of its own, the same schemas as every other table's."""
    changes = scanned_frame(spark,
        [(1, "update", 10 * table + 1, f"t{table} old"), (1, "update", 10 * table + 2, f"t{table} new"),
         (table + 1, "insert", 5, f"t{table} only")],
        CHANGES,
    )  # fmt: skip
    stored = scanned_frame(spark, [(1, 10 * table + 1), (table + 1, 100)], STORED)
    return changes.where("seq > 0"), stored


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in frame.collect())


def _fresh(spark: Any, frames: tuple[Any, Any]) -> list[tuple[Any, ...]]:
    return _rows(AnalyzedPlans().sql(frames, _newest_against_stored, prefix="fresh"))


def test_the_second_table_reuses_the_first_ones_plan_and_gets_its_own_rows(spark: Any) -> None:
    plans = AnalyzedPlans()
    first = plans.sql(_frames(spark, 1), _newest_against_stored, prefix="t")
    second_frames = _frames(spark, 2)
    second = plans.sql(second_frames, _newest_against_stored, prefix="t")
    assert (plans.analyzed, plans.reused) == (1, 1)
    assert second._jdf.queryExecution().analyzed().analyzed()  # marked: Spark does not analyze it again
    assert _rows(second) == [(1, "update", "t2 new", True), (3, "insert", "t2 only", False)]
    assert _rows(second) == _fresh(spark, second_frames)
    assert _rows(first) == [(1, "update", "t1 new", True), (2, "insert", "t1 only", False)]  # still its own


def test_a_plan_is_reused_in_another_session_and_from_other_threads(spark: Any) -> None:
    plans = AnalyzedPlans()
    plans.sql(_frames(spark, 1), _newest_against_stored, prefix="t")
    results: dict[int, list[tuple[Any, ...]]] = {}

    def table(number: int) -> None:
        session = own_session(spark)
        results[number] = _rows(plans.sql(_frames(session, number), _newest_against_stored, prefix="t"))

    threads = [threading.Thread(target=table, args=(number,)) for number in (2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert plans.reused == 3
    assert results == {n: [(1, "update", f"t{n} new", True), (n + 1, "insert", f"t{n} only", False)] for n in (2, 3, 4)}


def test_tables_started_at_once_wait_for_one_planning(spark: Any) -> None:
    plans = AnalyzedPlans()
    start = threading.Barrier(3)
    results: dict[int, list[tuple[Any, ...]]] = {}

    def table(number: int) -> None:
        frames = _frames(own_session(spark), number)
        start.wait()
        results[number] = _rows(plans.sql(frames, _newest_against_stored, prefix="t"))

    threads = [threading.Thread(target=table, args=(number,)) for number in (1, 2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (plans.analyzed, plans.reused) == (1, 2)
    assert results == {n: [(1, "update", f"t{n} new", True), (n + 1, "insert", f"t{n} only", False)] for n in (1, 2, 3)}


def test_a_planning_that_fails_leaves_the_next_one_to_plan(spark: Any) -> None:
    from pyspark.errors import AnalysisException

    def unknown_column(changes: str, stored: str) -> str:
        return f"SELECT n.no_such_column FROM {changes} n JOIN {stored} o ON n.id = o.id"

    plans = AnalyzedPlans()
    for _ in range(2):  # the second is planned again, not left waiting for the first
        with pytest.raises(AnalysisException, match="no_such_column"):
            plans.sql(_frames(spark, 1), unknown_column, prefix="t")
    assert _rows(plans.sql(_frames(spark, 2), _newest_against_stored, prefix="t"))[0] == (1, "update", "t2 new", True)


def test_other_schemas_or_text_are_planned_anew(spark: Any) -> None:
    plans = AnalyzedPlans()
    plans.sql(_frames(spark, 1), _newest_against_stored, prefix="t")
    changes, stored = _frames(spark, 2)
    wider = changes.selectExpr("*", "CAST(seq AS DECIMAL(20, 0)) AS seq_decimal")
    nullable = changes.selectExpr("nullif(id, -1) AS id", "op", "seq", "note")  # id may be null here
    assert nullable.schema["id"].nullable
    plans.sql((wider, stored), _newest_against_stored, prefix="t")
    plans.sql((nullable, stored), _newest_against_stored, prefix="t")
    other = plans.sql((changes, stored), lambda c, s: _newest_against_stored(c, s) + " WHERE n.id > 1", prefix="t")
    assert (plans.analyzed, plans.reused) == (4, 0)
    assert _rows(other) == [(3, "insert", "t2 only", False)]


def test_a_view_read_twice_is_planned_anew(spark: Any) -> None:
    def self_join(changes: str, stored: str) -> str:
        pairs = f"{changes} a JOIN {changes} b ON a.seq + 1 = b.seq"
        return f"SELECT a.id, b.note FROM {pairs} JOIN {stored} s ON a.id = s.id"

    plans = AnalyzedPlans()
    plans.sql(_frames(spark, 1), self_join, prefix="t")
    second = plans.sql(_frames(spark, 2), self_join, prefix="t")
    assert (plans.analyzed, plans.reused) == (2, 0)
    assert _rows(second) == [(1, "t2 new")]


def test_switched_off_every_statement_is_planned(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(analyzed_plans.SWITCH_ENV, "off")
    plans = AnalyzedPlans()
    plans.sql(_frames(spark, 1), _newest_against_stored, prefix="t")
    second = plans.sql(_frames(spark, 2), _newest_against_stored, prefix="t")
    assert (plans.analyzed, plans.reused) == (2, 0)
    assert _rows(second) == [(1, "update", "t2 new", True), (3, "insert", "t2 only", False)]
