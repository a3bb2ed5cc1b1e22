"""A small Delta table rewritten whole in the sink's own transaction instead of MERGEd
(:mod:`cdc_spark.sinks.delta_rewrite`): the same rows as Delta's MERGE of the same rule, the batch's marks in the
commit, and the tables it leaves to the MERGE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.merge.statements import Merge, sql_type
from cdc_spark.session_conf import session_conf
from cdc_spark.sinks import BatchInfo
from cdc_spark.sinks.delta import DeltaFormat, path_identifier
from cdc_testing.spark_frames import scanned_frame
from cdc_testing.spark_plans import jobs_started

pytestmark = pytest.mark.spark

# An SCD1-like rule: delete where the source says so, update only the columns the source writes, insert upserts.
RULE = Merge(
    on=("id",),
    delete_when="s.action = 'delete'",
    update=(
        ("name", "CASE WHEN s.w_name THEN s.name ELSE t.name END"),
        ("amount", "CASE WHEN s.w_amount THEN s.amount ELSE t.amount END"),
    ),
    insert=("id", "name", "amount"),
    insert_when="s.action = 'upsert'",
)
STORED = [(1, "one", "1.50"), (2, "two", "2.50"), (3, "three", "3.50"), (4, "four", None)]
SOURCE = [
    (1, "upsert", "uno", True, "9.99", False),  # a partial update: the name only
    (2, "upsert", "dos", True, "20.00", True),  # every column
    (3, "delete", None, False, None, False),  # a delete of a stored row
    (5, "delete", None, False, None, False),  # a delete of a row never stored: nothing
    (6, "upsert", "six", True, "6.00", True),  # an insert
    (7, None, "seven", True, "7.00", True),  # a null action: neither deleted nor inserted (MERGE's null is false)
    (4, None, "cuatro", True, "4.00", False),  # a matched row, null action: updated, not deleted
]


def stored_table(spark: Any, location: str, **properties: str) -> None:
    frame = scanned_frame(spark, STORED, "id int, name string, amount string").selectExpr(
        "id", "name", "CAST(amount AS DECIMAL(10, 2)) AS amount"
    )
    writer = frame.coalesce(1).write.format("delta")
    for key, value in properties.items():
        writer = writer.option(key, value)
    writer.save(location)


def source(spark: Any) -> Any:
    schema = "id int, action string, name string, w_name boolean, amount string, w_amount boolean"
    frame = scanned_frame(spark, SOURCE, schema)
    return frame.selectExpr("id", "action", "name", "w_name", "CAST(amount AS DECIMAL(10, 2)) AS amount", "w_amount")


def rows(spark: Any, location: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.read.format("delta").load(location).collect())


def last_commit(location: str) -> dict[str, Any]:
    log = sorted((Path(location) / "_delta_log").glob("*.json"))[-1]
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    return {key: value for action in actions for key, value in action.items() if key in ("commitInfo", "txn")}


def merged_and_stored(spark: Any, tmp_path: Path) -> tuple[str, str]:
    """Two tables of the stored rows: the first MERGEd by Delta with the source by the rule, the second left for a
    rewrite to be compared with it."""
    merged, rewritten = str(tmp_path / "merged"), str(tmp_path / "rewritten")
    stored_table(spark, merged)
    stored_table(spark, rewritten)
    source(spark).createOrReplaceTempView("rewrite_source")
    try:
        spark.sql(RULE.sql(path_identifier(merged), "rewrite_source"))
    finally:
        spark.catalog.dropTempView("rewrite_source")  # the session is shared: other tests list its tables
    return merged, rewritten


def test_a_rewrite_leaves_the_rows_delta_merge_leaves_and_marks_the_batch(spark: Any, tmp_path: Path) -> None:
    merged, rewritten = merged_and_stored(spark, tmp_path)
    delta = DeltaFormat(spark, root=str(tmp_path))
    batch = BatchInfo(app_id="job-1", batch_id=7, offsets=json.dumps({"t": {"0": 12}}))
    assert delta.rewrite(path_identifier(rewritten), source(spark), RULE, batch)
    assert rows(spark, rewritten) == rows(spark, merged)
    assert {row[0] for row in rows(spark, rewritten)} == {1, 2, 4, 6}  # the test checks something: 3 gone, 6 in
    commit = last_commit(rewritten)
    assert commit["commitInfo"]["operation"] == "WRITE"
    assert json.loads(commit["commitInfo"]["userMetadata"])["cdc.batchId"] == 7
    assert commit["txn"]["appId"] == "job-1" and commit["txn"]["version"] == 7
    info = delta.describe(path_identifier(rewritten), "job-1")
    assert info is not None and info.last_batch == 7  # a replay of batch 7 is skipped
    # the checksum still lists the table's files: the next batch rewrites without a log replay
    log = spark._jvm.org.apache.spark.sql.delta.DeltaLog
    checksum = log.forTableWithSnapshot(spark._jsparkSession, rewritten)._2().checksumOpt()
    assert checksum.isDefined() and checksum.get().allFiles().isDefined()


@pytest.mark.parametrize("one_task", [False, True])
def test_a_rewrite_of_few_rows_in_one_task_is_one_spark_job(spark: Any, tmp_path: Path, one_task: bool) -> None:
    # the table's rows and the source read by one task: the full outer join shuffles neither side, so the write is
    # the rewrite's only Spark job (each shuffle stage is a job of its own under adaptive execution); same rows
    merged, rewritten = merged_and_stored(spark, tmp_path)
    delta = DeltaFormat(spark, root=str(tmp_path))
    given = source(spark)
    done: list[bool] = []

    def rewrite() -> None:
        done.append(delta.rewrite(path_identifier(rewritten), given, RULE, None, one_task=one_task))

    jobs = len(jobs_started(spark, f"rewrite-one-task-{one_task}", rewrite))
    assert done == [True]
    assert (jobs == 1) == one_task, jobs
    assert rows(spark, rewritten) == rows(spark, merged)


@pytest.mark.parametrize(
    "case",
    ["change data feed", "partitioned", "files not in the checksum", "deletion vector"],
)
def test_a_table_a_rewrite_would_not_carry_over_is_left_to_the_merge(spark: Any, tmp_path: Path, case: str) -> None:
    location = str(tmp_path / "t")
    settings = {}
    if case == "change data feed":
        stored_table(spark, location, **{"delta.enableChangeDataFeed": "true"})
    elif case == "deletion vector":  # a file with rows marked deleted: a plain Parquet read would bring them back
        stored_table(spark, location, **{"delta.enableDeletionVectors": "true"})
        spark.sql(f"DELETE FROM {path_identifier(location)} WHERE id = 4")
    elif case == "partitioned":
        frame = scanned_frame(spark, STORED, "id int, name string, amount string")
        frame.selectExpr("id", "name", "CAST(amount AS DECIMAL(10, 2)) AS amount").write.format("delta").partitionBy(
            "name"
        ).save(location)
    else:
        settings = {"spark.databricks.delta.allFilesInCrc.enabled": "false"}
        with session_conf(spark, settings):
            stored_table(spark, location)
    before = rows(spark, location)
    versions = len(list((Path(location) / "_delta_log").glob("*.json")))
    with session_conf(spark, settings):
        assert not DeltaFormat(spark, root=str(tmp_path)).rewrite(path_identifier(location), source(spark), RULE, None)
    assert rows(spark, location) == before
    assert len(list((Path(location) / "_delta_log").glob("*.json"))) == versions


def test_a_rewrite_checks_the_tables_constraints(spark: Any, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    stored_table(spark, location)
    spark.sql(f"ALTER TABLE {path_identifier(location)} ADD CONSTRAINT positive CHECK (amount IS NULL OR amount > 0)")
    before = rows(spark, location)
    negative = source(spark).selectExpr("id", "action", "name", "w_name", "-amount AS amount", "w_amount")
    with pytest.raises(Exception, match=r"(?i)constraint"):
        DeltaFormat(spark, root=str(tmp_path)).rewrite(path_identifier(location), negative, RULE, None)
    assert rows(spark, location) == before


WIDE = (
    "id int, d decimal(38, 10), b binary, ts timestamp, tsn timestamp_ntz, dt date, "
    "arr array<string>, m map<string, int>, st struct<a: int, `b-c`: string>, f double, flag boolean"
)
WIDE_ROWS = """SELECT * FROM VALUES
  (1, 1.5BD, X'00FF', TIMESTAMP'2024-01-02 03:04:05.123456', TIMESTAMP_NTZ'2024-01-02 03:04:05', DATE'0001-01-01',
   array('a', NULL), map('k', 1), named_struct('a', 1, 'b-c', 'x'),
   double('NaN'), true),
  (2, -99999999999999999999999999.9999999999BD, X'', NULL, NULL, DATE'9999-12-31', array(),
   map(), NULL, -0.0D, NULL),
  (3, NULL, NULL, TIMESTAMP'1970-01-01 00:00:00', TIMESTAMP_NTZ'1970-01-01 00:00:00', NULL, NULL, NULL,
   named_struct('a', NULL, 'b-c', NULL), 1e308D, false)
AS v(id, d, b, ts, tsn, dt, arr, m, st, f, flag)"""


def test_a_rewrite_carries_every_column_type_as_the_merge_does(spark: Any, tmp_path: Path) -> None:
    """Values of every kind a target holds (extreme decimals, binary, both timestamps, dates at both ends, nested
    types, NaN and -0.0) kept, updated and inserted by the rewrite exactly as Delta's MERGE does."""
    typed = _columns(WIDE)
    columns = [c for c, _ in typed]
    stored = spark.sql(WIDE_ROWS).selectExpr(*[f"CAST({c} AS {t})" for c, t in typed])
    changes = stored.where(
        "id <> 3"
    ).selectExpr(
        "CASE WHEN id = 2 THEN 1 ELSE 4 END AS id",  # 1 updated to row 2's values, 4 inserted with row 1's
        *columns[1:],
        "'upsert' AS action",
    )
    rule = Merge(
        on=("id",),
        delete_when="s.action = 'delete'",
        update=tuple((c, f"s.`{c}`") for c in columns[1:]),
        insert=tuple(columns),
        insert_when="s.action = 'upsert'",
    )
    merged, rewritten = str(tmp_path / "merged"), str(tmp_path / "rewritten")
    for location in (merged, rewritten):
        stored.coalesce(1).write.format("delta").save(location)
    source = changes.localCheckpoint()
    source.createOrReplaceTempView("rewrite_wide")
    try:
        spark.sql(rule.sql(path_identifier(merged), "rewrite_wide"))
    finally:
        spark.catalog.dropTempView("rewrite_wide")
    assert DeltaFormat(spark, root=str(tmp_path)).rewrite(path_identifier(rewritten), source, rule, None)
    expected, got = _wide(spark, merged), _wide(spark, rewritten)
    assert got == expected
    assert len(got) == 4  # 1 updated, 2 and 3 kept, 4 inserted


def _columns(ddl: str) -> list[tuple[str, str]]:
    from pyspark.sql.types import _parse_datatype_string

    return [(f.name, sql_type(f.dataType)) for f in _parse_datatype_string(ddl).fields]


def _wide(spark: Any, location: str) -> list[str]:
    """Rows as text that tells NaN, -0.0 and nulls apart (rows compared as tuples would not: NaN != NaN)."""
    frame = spark.read.format("delta").load(location)
    return sorted(str(row) for row in frame.selectExpr("id", "to_json(struct(*)) AS j", "hex(b) AS b").collect())
