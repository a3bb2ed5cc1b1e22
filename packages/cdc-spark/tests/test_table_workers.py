"""A micro-batch's tables applied side by side (``cdc_spark.table_workers``, option ``table-parallelism``)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from cdc_core.errors import ConfigError
from cdc_spark.job import JobConfig, SourceSpec
from cdc_spark.table_workers import DEFAULT_TABLE_PARALLELISM, in_own_session, run_each


def test_tasks_run_at_the_same_time() -> None:
    both = threading.Barrier(2, timeout=10)  # broken (an error) if the second task only starts after the first

    def meet(name: str) -> str:
        both.wait()
        return name

    assert run_each([("a", lambda: meet("a")), ("b", lambda: meet("b"))], parallelism=2) == {"a": "a", "b": "b"}


def test_one_at_a_time_runs_in_order() -> None:
    seen: list[str] = []
    tasks = [(name, lambda name=name: seen.append(name) or name) for name in ("c", "a", "b")]
    assert run_each(tasks, parallelism=1) == {"c": "c", "a": "a", "b": "b"}
    assert seen == ["c", "a", "b"]


def test_a_failing_table_lets_the_others_finish_then_its_error_is_raised() -> None:
    finished: list[str] = []
    started = threading.Event()

    def fail() -> str:
        started.wait(10)  # the slow neighbour is running when this one fails
        raise ConfigError("table a: no key")

    def slow(name: str) -> str:
        started.set()
        threading.Event().wait(0.3)
        finished.append(name)
        return name

    with pytest.raises(ConfigError, match="table a: no key"):
        run_each([("a", fail), ("b", lambda: slow("b")), ("c", lambda: slow("c"))], parallelism=3)
    assert sorted(finished) == ["b", "c"]


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5", "", "²"])
def test_table_parallelism_must_be_a_whole_number_of_one_or_more(tmp_path: Path, text: str) -> None:
    config = JobConfig(
        protocol="debezium",
        source=SourceSpec.parse(f"file://{tmp_path}"),
        target=str(tmp_path / "t"),
        checkpoint=str(tmp_path / "c"),
        options={"table-parallelism": text},
    )
    with pytest.raises(ConfigError, match="table-parallelism"):
        _ = config.table_parallelism


def test_table_parallelism_defaults_and_is_not_a_codec_option(tmp_path: Path) -> None:
    def make(options: dict[str, str]) -> JobConfig:
        spec = SourceSpec.parse(f"file://{tmp_path}")
        return JobConfig(protocol="debezium", source=spec, target="t", checkpoint="c", options=options)

    assert make({}).table_parallelism == DEFAULT_TABLE_PARALLELISM
    assert make({"table-parallelism": "1"}).table_parallelism == 1
    assert "table-parallelism" not in make({"table-parallelism": "2"}).codec_options()


@pytest.mark.spark
def test_a_frame_in_its_own_session_keeps_its_rows_views_and_settings_apart(spark: Any) -> None:
    key = "spark.databricks.delta.write.txnAppId"  # what the Delta sink marks a commit with: session-wide
    frame = spark.createDataFrame([(1, "a"), (2, "b")], "id int, name string").where("id > 0")
    frame.createOrReplaceTempView("cdc_workers_parent_view")
    try:
        rebound = in_own_session(frame)
        clone = rebound.sparkSession
        assert clone is not spark
        assert sorted(map(tuple, rebound.collect())) == [(1, "a"), (2, "b")]
        # the clone starts with the parent's views and settings ...
        assert clone.table("cdc_workers_parent_view").count() == 2
        assert clone.conf.get("spark.sql.session.timeZone") == spark.conf.get("spark.sql.session.timeZone")
        # ... and what it sets or registers stays its own
        clone.conf.set(key, "table-b")
        rebound.createOrReplaceTempView("cdc_workers_own_view")
        assert clone.sql("SELECT count(*) FROM cdc_workers_own_view").first()[0] == 2
        assert spark.conf.get(key, None) is None
        assert not spark.catalog.tableExists("cdc_workers_own_view")
    finally:
        spark.catalog.dropTempView("cdc_workers_parent_view")


@pytest.mark.spark
def test_the_tables_jobs_carry_the_batchs_job_group(spark: Any) -> None:
    group = "cdc-workers-group"
    context = spark.sparkContext
    context.setJobGroup(group, "a batch")
    try:
        frames = {name: spark.range(10 * (n + 1)) for n, name in enumerate(("a", "b", "c"))}
        counts = run_each([(name, lambda f=frame: f.count()) for name, frame in frames.items()], parallelism=3)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert counts == {"a": 10, "b": 20, "c": 30}
    # every count ran in a worker thread; each one's job is counted under the group (one job each at least)
    assert len(context.statusTracker().getJobIdsForGroup(group)) >= 3
