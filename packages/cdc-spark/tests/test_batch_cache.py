"""The decode's caches are computed once, carry no lineage into the plans that read them, and are freed by release.

A frame stamped with ``current_timestamp()`` (taken anew by every query) tells a kept frame, the same stamp at every
read, from one computed again. The RDD
ids the Spark context stores tell what a release freed: other tests' caches in the shared session are left out by
comparing the ids before and after.
"""

from __future__ import annotations

import json
from typing import Any

from cdc_spark.batch_cache import persist_batch, release
from cdc_spark.decoding import Decoder
from cdc_spark.source.columns import KAFKA_COLUMNS


def _stored_rdds(spark: Any) -> set[int]:
    return {info.id() for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()}


def _canal(number: int, table: str) -> bytes:
    document = {
        "id": number, "database": "shop", "table": table, "pkNames": ["id"], "isDdl": False, "type": "INSERT",
        "es": 1700000000000, "ts": 1700000000123, "sql": "", "old": None,
        "mysqlType": {"id": "int(11)", "v": "varchar(20)"}, "sqlType": {"id": 4, "v": 12},
        "data": [{"id": str(number), "v": f"value {number}"}], "_tidb": {"commitTs": 100 + number},
    }  # fmt: skip
    return json.dumps(document).encode()


def test_a_kept_frame_is_computed_once_and_read_without_its_plan(spark: Any) -> None:
    source = spark.range(50).selectExpr("id", "unix_micros(current_timestamp()) AS stamp")
    kept = persist_batch(source)
    first = sorted(tuple(row) for row in kept.collect())
    again = sorted(tuple(row) for row in kept.where("id >= 0").collect())
    assert first == again  # the stamp is not taken again
    assert sorted(tuple(row) for row in source.where("id >= 0").collect()) != first  # as it is by a new query
    derived = kept.where("id > 10")._jdf.queryExecution().executedPlan().toString()
    assert "Range" not in derived  # the plan starts from the kept rows
    release(kept)


def test_release_frees_a_kept_frame_and_a_persisted_one(spark: Any) -> None:
    before = _stored_rdds(spark)
    kept = persist_batch(spark.range(20).selectExpr("id * 2 AS doubled"))
    assert kept.count() == 20
    assert _stored_rdds(spark) - before, "the kept rows are stored"
    persisted = spark.range(5).persist()
    assert persisted.count() == 5
    release(kept)
    release(persisted)
    assert _stored_rdds(spark) - before == set()
    assert not persisted.is_cached


def test_a_decoded_batch_releases_every_cache_it_made(spark: Any) -> None:
    rows = [
        (None, _canal(number, table), "shop", 0, index, None, 0, None)
        for index, (number, table) in enumerate((n, t) for n in range(1, 6) for t in ("orders", "users"))
    ]
    frame = spark.createDataFrame(rows, KAFKA_COLUMNS)
    before = _stored_rdds(spark)
    decoded = Decoder().decode(frame, "canal-json", {})
    assert decoded.paths == {"jvm": 10, "codec": 0}
    values = {table: sorted(r["v"] for r in decoded.table("shop", table).collect()) for table in ("orders", "users")}
    assert values == {table: [f"value {n}" for n in range(1, 6)] for table in ("orders", "users")}
    assert _stored_rdds(spark) - before, "the decode keeps its rows for the batch"
    decoded.release()
    assert _stored_rdds(spark) - before == set()
