"""Constant mappings in the decode plans: a CASE, never a map(...) that the optimizer folds
(cdc_spark.decoding.literal_lookup)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_core.message import Message
from cdc_spark.decoding import decode
from cdc_spark.decoding.literal_lookup import key_column, key_text, lookup
from cdc_testing.spark_plans import compiled_classes, created_maps

pytestmark = pytest.mark.spark


def test_a_key_finds_its_value_and_an_absent_or_null_key_finds_null(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([("c",), ("u",), ("x",), (None,)], "k string")
    found = frame.select(lookup({"c": "insert", "u": "update"}, F.col("k")).alias("v"), lookup({}, F.col("k")))
    assert [tuple(r) for r in found.collect()] == [("insert", None), ("update", None), (None, None), (None, None)]
    assert created_maps(found) == []


def test_numbers_that_change_from_batch_to_batch_leave_the_generated_code_the_same(spark: Any) -> None:
    """A partition's clock changes every batch: were it written into the code, each batch's code would be new
    and compiled again. A key after a found one, an absent key and a null key still find null."""
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([("shop/0",), ("shop/1",), (None,), ("shop/2",), ("shop/0",)], "k string")
    one = frame.select(lookup({"shop/0": 448082741820915712, "shop/2": 7}, F.col("k")).alias("v"))
    assert [r["v"] for r in one.collect()] == [448082741820915712, None, None, 7, 448082741820915712]
    compiles = []
    for n in range(1, 4):  # other numbers, the keys in another order
        clock = 448085363260915712 + n
        other = frame.select(lookup({"shop/2": 9 + n, "shop/0": clock}, F.col("k")).alias("v"))
        before = compiled_classes(spark)
        assert [r["v"] for r in other.collect()] == [clock, None, None, 9 + n, clock]
        compiles.append(compiled_classes(spark) - before)
    # a run may compile a class of Spark's own (another thread of the JVM in a long session): one compiling none is
    # the proof; numbers written into the code compile it again at every run
    assert min(compiles) == 0, compiles


def test_a_text_key_is_the_same_made_in_spark_and_in_python_and_tells_null_from_its_text(spark: Any) -> None:
    """The coordinates' keys the driver writes (``key_text``) match the rows' (``key_column``), a null part too; a
    null is not the text "None" nor an empty topic, and the parts cannot run into each other."""
    from pyspark.sql import functions as F

    values = [("orders", 1, 12), (None, 1, 12), ("None", 1, 12), ("", 1, 12), ("orders", None, 12), ("orders1", 1, 2)]
    frame = spark.createDataFrame(values, "topic string, partition int, offset long")
    keys = [
        r["k"]
        for r in frame.select(key_column(F.col("topic"), F.col("partition"), F.col("offset")).alias("k")).collect()
    ]
    assert keys == [key_text(*v) for v in values]
    assert len(set(keys)) == len(values)


def _untimed_canal(partition: int, number: int) -> Message:
    # official Canal-JSON without TiDB's extension carries no commit ts: the change is ordered by its partition's clock
    document = {
        "id": 0, "database": "shop", "table": "days", "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "d": "date"}, "sqlType": {"id": 4, "d": 91},
        "data": [{"id": str(number), "d": "2024-02-28"}],
    }  # fmt: skip
    return Message(value=json.dumps(document).encode(), partition=partition)


@pytest.mark.parametrize("plan", ["jvm", "python"])
def test_changes_without_a_commit_ts_take_their_partitions_seeded_clock(kafka_frame: Any, plan: str) -> None:
    """The previous batch left partition 0 at ts 500 and partition 2 at 900; partition 1 has no clock yet. The
    seed is a constant lookup in the JVM plan, which must not be a map(...) (see the module)."""
    messages = [_untimed_canal(partition, number) for number, partition in enumerate([0, 1, 0, 2])]
    frame = kafka_frame(messages).cache()
    decoded = decode(frame, "canal-json", plan=plan, partition_ts={("shop", 0): 500, ("shop", 2): 900})
    try:
        table = decoded.table("shop", "days")
        rows = table.select("_cdc_partition", "_cdc_offset", "_cdc_sequence.commit_ts").collect()
        assert sorted(tuple(r) for r in rows) == [(0, 0, 500), (0, 2, 500), (1, 1, None), (2, 3, 900)]
        if plan == "jvm":  # the JVM typed the changes: the seed went through its plan
            assert decoded.paths["jvm"] == 4, decoded.paths
        assert created_maps(table) == []
    finally:
        decoded.release()
        frame.unpersist()


_MARK = -0x7E57_0000_0000_0001


def test_a_kept_plan_takes_each_batchs_values_of_its_marked_lookups(spark: Any) -> None:
    """A frame after the shapes' pass looks up each partition's clock; its analyzed plan is kept and given the next
    batch's clocks (``KeptPlans.frame``'s values): the next batch reads its own clocks, not the first one's, over its
    own rows. Small values (ints to Python and py4j) and a null value keep their long type."""
    from pyspark.sql import functions as F

    from cdc_spark.decoding.kept_plans import KeptPlans

    plans = KeptPlans("__batch__")

    def clocked(clock: dict[str, int | None]) -> Any:
        def build(rows: Any) -> Any:
            return rows.select("k", lookup(clock, F.col("k"), _MARK).alias("v"))

        return build

    first = spark.createDataFrame([("p0",), ("p1",), ("p9",)], "k string")
    one = {"p0": 448082741820915712, "p1": 448082741820915999}
    assert [r["v"] for r in plans.frame("clock", first, clocked(one), {_MARK: list(one.values())}).collect()] == [
        *one.values(),
        None,
    ]
    second = spark.createDataFrame([("p1",), ("p0",), (None,)], "k string")
    two = {"p0": 7, "p1": None}
    found = plans.frame("clock", second, clocked(two), {_MARK: list(two.values())})
    assert (plans.built, plans.reused) == (1, 1)
    assert [tuple(r) for r in found.collect()] == [("p1", None), ("p0", 7), (None, None)]
    assert found.schema["v"].dataType.simpleString() == "bigint"


def test_a_kept_plan_whose_marked_lookup_does_not_fit_the_values_is_built_again(spark: Any) -> None:
    """A marker's lookup read twice in the plan, or given another number of values, is not replaced: the frame is
    built anew with this call's values (and its plan kept)."""
    from pyspark.sql import functions as F

    from cdc_spark.decoding.kept_plans import KeptPlans

    plans = KeptPlans("__batch__")
    rows = spark.createDataFrame([("p0",)], "k string")

    def twice(value: int) -> Any:
        def build(source: Any) -> Any:
            looked = lookup({"p0": value}, F.col("k"), _MARK)
            return source.select((looked + looked).alias("v"))

        return build

    plans.frame("twice", rows, twice(1_000_000_000_000), {_MARK: [1_000_000_000_000]})
    assert plans.frame("twice", rows, twice(5), {_MARK: [5]}).collect()[0]["v"] == 10
    assert (plans.built, plans.reused) == (2, 0)

    def once(value: int) -> Any:
        return lambda source: source.select(lookup({"p0": value}, F.col("k"), _MARK).alias("v"))

    plans.frame("once", rows, once(1), {_MARK: [1]})
    assert plans.frame("once", rows, once(2), {_MARK: [2, 3]}).collect()[0]["v"] == 2
    assert (plans.built, plans.reused) == (4, 0)


def test_a_marker_is_a_long_outside_the_ints(spark: Any) -> None:
    from pyspark.sql import functions as F

    with pytest.raises(ValueError, match="marker"):
        lookup({"a": 1}, F.col("k"), 12)
