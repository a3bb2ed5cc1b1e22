"""The SCD1 fold as a walk over changes sorted by key (`cdc_spark.merge.jvm_fold`, the project's
`cdc.spark.merge.NewestPerKey`) gives the SQL fold's rows (`cdc_spark.merge.scd1.fold`), column for column.

Batches are drawn at random with a fixed seed: keys changed once and many times, inserts, full and partial updates
(some setting no column, some every column), deletes, equal sequences on one key, metadata columns; keys of one
and of two columns. Where the walk cannot compare keys by their bytes (a double key), the sink keeps the SQL fold.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from typing import Any

import pytest

from cdc_spark.merge.batch import ordered, summarize
from cdc_spark.merge.jvm_fold import fold_in_jvm, foldable
from cdc_spark.merge.scd1 import fold, resolve, state_schema
from cdc_spark.merge.spec import build_spec
from cdc_spark.runtime.java_code import install
from cdc_spark.session_conf import session_conf
from cdc_testing.spark_frames import scanned_frame

pytestmark = pytest.mark.spark

SEQ = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
VALUES = "name string, amount decimal(10,2), seen timestamp"
CHANGES = f"_cdc_op string, _cdc_sequence {SEQ}, _cdc_changed_columns array<string>, _cdc_commit_ts bigint"
COLUMNS = ["name", "amount", "seen"]
NOW = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def _batch(seed: int, keys: list[Any], changes: int) -> list[tuple[Any, ...]]:
    draw = random.Random(seed)
    rows = []
    for _ in range(changes):
        key = draw.choice(keys)
        op = draw.choice(["insert", "update", "update", "update", "delete"])
        ts = draw.randrange(1, 30)  # few sequences: many ties on a key
        values = (
            draw.choice([None, f"n{draw.randrange(100)}"]),
            Decimal(draw.randrange(10_000)) / 100,
            dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=draw.randrange(10**6)),
        )
        changed = None
        if op == "update" and draw.random() < 0.5:
            changed = draw.sample(COLUMNS, draw.randrange(len(COLUMNS) + 1))  # none to all of them
        if op == "delete":
            values = (None, None, None)
        rows.append((*key, *values, op, (ts, 0, ts, draw.randrange(3)), changed, ts * 1000))
    return rows


CASES = {
    "int key": ("id int", [(k,) for k in range(40)]),
    "string and bigint key": ("region string, id bigint", [(r, k) for r in ("eu", "us", "") for k in range(15)]),
}


@pytest.mark.parametrize("partial", [True, False], ids=["partial updates", "full images"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_walk_folds_as_the_window_does(spark: Any, case: str, partial: bool) -> None:
    if not install(spark):
        pytest.skip("the project's Java code is not available here")
    key_schema, keys = CASES[case]
    frame = scanned_frame(spark, _batch(7, keys, 600), f"{key_schema}, {VALUES}, {CHANGES}").repartition(3)
    key_names = [part.split()[0] for part in key_schema.split(", ")]
    spec = build_spec(frame, table="shop.t", keys=key_names, metadata=["_cdc_commit_ts"])
    changes = ordered(frame, spec, summarize(frame, spec, None))
    window = fold(changes, spec, partial)
    walked = fold_in_jvm(changes, spec, partial, 3)
    assert walked.schema == window.schema  # names, types and nullability
    expected = sorted(tuple(row) for row in window.collect())
    assert len(expected) == len(keys)  # every key is changed at least once
    assert sorted(tuple(row) for row in walked.collect()) == expected


def test_the_resolve_joins_the_walked_fold_without_shuffling_it_again(spark: Any) -> None:
    if not install(spark):
        pytest.skip("the project's Java code is not available here")
    frame = scanned_frame(spark, _batch(3, [(k,) for k in range(200)], 1_000), f"id int, {VALUES}, {CHANGES}")
    spec = build_spec(frame, table="shop.t", keys=["id"])
    summary = summarize(frame, spec, None)
    seq_type = frame.schema["_cdc_sequence"].dataType
    # keys 100 to 299 stored, half of them deleted: the batch's keys 0 to 199 meet some, and some are new
    stored = scanned_frame(
        spark,
        [
            ("shop.t", json.dumps({"id": str(k)}), (5, 0, 5, 0), None if k % 2 else NOW, None, None)
            for k in range(100, 300)
        ],
        state_schema(seq_type),
    )
    ordered_changes = ordered(frame, spec, summary)
    with session_conf(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1"}):  # joined as a large batch is
        with_walk = resolve(ordered_changes, spec, stored, summary, NOW, fold_by_walk=True, rows=1_200)
        with_window = resolve(ordered_changes, spec, stored, summary, NOW)
        expected = sorted(map(tuple, with_window.collect()))
        assert len(expected) > 150
        assert sorted(map(tuple, with_walk.collect())) == expected
    shuffles = [line for line in _plan(with_walk).splitlines() if "Exchange" in line]
    assert shuffles and all("__cdc_stored_k0" in line for line in shuffles), shuffles  # the stored keys' alone
    assert any("hashpartitioning(id" in line for line in _plan(with_window).splitlines() if "Exchange" in line)


def _plan(frame: Any) -> str:
    return str(frame._jdf.queryExecution().executedPlan().toString())


def test_keys_compared_as_numbers_not_bytes_keep_the_window(spark: Any) -> None:
    frame = scanned_frame(spark, [], f"id double, {VALUES}, {CHANGES}")
    assert not foldable(frame.schema, build_spec(frame, table="shop.t", keys=["id"]))
    frame = scanned_frame(spark, [], f"id string collate UTF8_LCASE, {VALUES}, {CHANGES}")
    assert not foldable(frame.schema, build_spec(frame, table="shop.t", keys=["id"]))
    frame = scanned_frame(spark, [], f"id string, day date, {VALUES}, {CHANGES}")
    assert foldable(frame.schema, build_spec(frame, table="shop.t", keys=["id", "day"]))
