"""The SQL text apply runs, without a Spark session: identifiers and literals quoted, Spark types as DDL, the
CREATE/ALTER/DELETE statements, and the MERGE rules of SCD1 and SCD2 targets and their state tables, compared
as whole statements. The merge rules' effect on real tables is in ``test_apply.py`` (Spark); these run in well
under a second, so ``nox -s mutate -- cdc_spark.merge.statements`` can afford them for every mutant."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from zoneinfo import ZoneInfo

import pytest
from pyspark.sql import types as T

from cdc_core.errors import ConfigError
from cdc_spark.merge.columns import metadata_columns
from cdc_spark.merge.spec import ApplySpec
from cdc_spark.merge.statements import (
    Merge,
    add_columns,
    alter_type,
    columns_ddl,
    create_table,
    key_state_merge,
    literal,
    merges,
    properties_sql,
    purge_tombstones,
    quote,
    set_properties,
    sql_type,
    timestamp,
)

SHANGHAI = ZoneInfo("Asia/Shanghai")
ORDER = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("unit price", T.DecimalType(10, 2)),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("attrs", T.MapType(T.StringType(), T.StructType([T.StructField("a`b", T.IntegerType())]))),
    ]
)


def test_identifiers_and_literals_are_quoted() -> None:
    assert quote("id") == "`id`"
    assert quote("a`b") == "`a``b`"
    assert quote("") == "``"
    assert literal("plain") == "'plain'"
    assert literal("it's") == "'it\\'s'"
    assert literal("C:\\dir\\") == "'C:\\\\dir\\\\'"
    assert literal("\\'") == "'\\\\\\''"


def test_timestamps_are_utc_literals_with_microseconds(host_zone: Callable[[str], None]) -> None:
    host_zone("Asia/Tokyo")  # the driver's clock in another zone than UTC
    assert timestamp(dt.datetime(2024, 1, 2, 8, 30, 0, 5, tzinfo=SHANGHAI)) == (
        "TIMESTAMP '2024-01-02 00:30:00.000005+00:00'"
    )
    assert timestamp(dt.datetime(2024, 1, 2, tzinfo=dt.UTC)) == "TIMESTAMP '2024-01-02 00:00:00.000000+00:00'"


def test_spark_types_as_ddl_text() -> None:
    assert sql_type(T.LongType()) == "bigint"
    assert sql_type(T.DecimalType(38, 10)) == "decimal(38,10)"
    assert sql_type(T.ArrayType(T.DateType())) == "array<date>"
    assert sql_type(T.MapType(T.StringType(), T.ArrayType(T.DoubleType()))) == "map<string, array<double>>"
    assert sql_type(ORDER) == (
        "struct<`id`: bigint, `unit price`: decimal(10,2), `tags`: array<string>, "
        "`attrs`: map<string, struct<`a``b`: int>>>"
    )
    assert columns_ddl(ORDER.fields[:2]) == "`id` bigint, `unit price` decimal(10,2)"
    assert columns_ddl([]) == ""


def test_table_statements() -> None:
    properties = {"delta.enableChangeDataFeed": "true", "cdc.source": "shop's"}
    assert properties_sql(properties) == "'cdc.source' = 'shop\\'s', 'delta.enableChangeDataFeed' = 'true'"
    assert create_table("delta.`/t/orders`", ORDER, "delta", properties) == (
        "CREATE TABLE IF NOT EXISTS delta.`/t/orders` (`id` bigint, `unit price` decimal(10,2), `tags` array<string>, "
        "`attrs` map<string, struct<`a``b`: int>>) USING delta "
        "TBLPROPERTIES ('cdc.source' = 'shop\\'s', 'delta.enableChangeDataFeed' = 'true')"
    )
    assert create_table("cat.shop.orders", T.StructType(ORDER.fields[:1]), "iceberg", {}) == (
        "CREATE TABLE IF NOT EXISTS cat.shop.orders (`id` bigint) USING iceberg"
    )
    assert create_table("cat.k", T.StructType(ORDER.fields[:1]), "iceberg", {"a": "b"}, ("id",)) == (
        "CREATE TABLE IF NOT EXISTS cat.k (`id` bigint) USING iceberg PARTITIONED BY (`id`) TBLPROPERTIES ('a' = 'b')"
    )
    assert add_columns("cat.shop.orders", ORDER.fields[1:3]) == (
        "ALTER TABLE cat.shop.orders ADD COLUMNS (`unit price` decimal(10,2), `tags` array<string>)"
    )
    assert alter_type("cat.shop.orders", T.StructField("id", T.LongType())) == (
        "ALTER TABLE cat.shop.orders ALTER COLUMN `id` TYPE bigint"
    )
    assert set_properties("cat.shop.orders", {"cdc.truncated-before": '{"v": 7}'}) == (
        "ALTER TABLE cat.shop.orders SET TBLPROPERTIES ('cdc.truncated-before' = '{\"v\": 7}')"
    )
    assert purge_tombstones("cat.shop.orders_state", dt.datetime(2024, 1, 8, tzinfo=dt.UTC)) == (
        "DELETE FROM cat.shop.orders_state WHERE `__cdc_deleted_at` < TIMESTAMP '2024-01-08 00:00:00.000000+00:00'"
    )


def test_scd1_merge_rules() -> None:
    spec = ApplySpec(table="shop.orders", keys=("id", "region"), columns=("id", "region", "qty"), metadata=("_cdc_op",))
    rules = merges(spec)
    assert rules.target.sql("delta.`/t`", "changes") == (
        "MERGE INTO delta.`/t` t USING changes s ON t.`id` = s.`id` AND t.`region` = s.`region`\n"
        "WHEN MATCHED AND s.`__cdc_action` = 'delete' THEN DELETE\n"
        "WHEN MATCHED THEN UPDATE SET "
        "t.`qty` = CASE WHEN s.`__cdc_write__qty` THEN s.`qty` ELSE t.`qty` END, "
        "t.`_cdc_op` = CASE WHEN s.`__cdc_write___cdc_op` THEN s.`_cdc_op` ELSE t.`_cdc_op` END\n"
        "WHEN NOT MATCHED AND s.`__cdc_action` = 'upsert' THEN INSERT (`id`, `region`, `qty`, `_cdc_op`) "
        "VALUES (s.`id`, s.`region`, s.`qty`, s.`_cdc_op`)"
    )
    # the key state of every table at once: matched by table and key text, reading only the batch's tables
    assert rules.state == key_state_merge(["shop.orders"])
    state = "`__cdc_sequence`, `__cdc_deleted_at`, `__cdc_image_sequence`, `__cdc_column_sequences`"
    assert key_state_merge(["shop.o'rders", "shop.items"]).sql("ks", "rows") == (
        "MERGE INTO ks t USING rows s ON t.`__cdc_table` = s.`__cdc_table` AND t.`__cdc_key` = s.`__cdc_key` "
        "AND t.`__cdc_table` IN ('shop.items', 'shop.o\\'rders')\n"
        "WHEN MATCHED THEN UPDATE SET t.`__cdc_sequence` = s.`__cdc_sequence`, "
        "t.`__cdc_deleted_at` = s.`__cdc_deleted_at`, t.`__cdc_image_sequence` = s.`__cdc_image_sequence`, "
        "t.`__cdc_column_sequences` = s.`__cdc_column_sequences`\n"
        f"WHEN NOT MATCHED THEN INSERT (`__cdc_table`, `__cdc_key`, {state}) VALUES (s.`__cdc_table`, "
        "s.`__cdc_key`, s.`__cdc_sequence`, s.`__cdc_deleted_at`, s.`__cdc_image_sequence`, "
        "s.`__cdc_column_sequences`)"
    )


def test_scd2_merge_rules() -> None:
    rules = merges(ApplySpec(table="shop.orders", keys=("id",), columns=("id", "qty"), scd=2))
    assert rules.target.sql("tt", "versions") == (
        "MERGE INTO tt t USING versions s ON t.`id` = s.`id` AND t.`__start_at` <=> s.`__start_at`\n"
        "WHEN MATCHED AND s.`__cdc_drop` THEN DELETE\n"
        "WHEN MATCHED THEN UPDATE SET t.`qty` = s.`qty`, t.`__end_at` = s.`__end_at`\n"
        "WHEN NOT MATCHED AND NOT s.`__cdc_drop` THEN INSERT (`id`, `qty`, `__start_at`, `__end_at`) "
        "VALUES (s.`id`, s.`qty`, s.`__start_at`, s.`__end_at`)"
    )
    assert rules.state.sql("st", "versions") == (
        "MERGE INTO st t USING versions s "
        "ON t.`id` = s.`id` AND t.`__cdc_start_sequence` <=> s.`__cdc_start_sequence`\n"
        "WHEN MATCHED AND s.`__cdc_drop` THEN DELETE\n"
        "WHEN MATCHED THEN UPDATE SET t.`qty` = s.`qty`, t.`__start_at` = s.`__start_at`, "
        "t.`__end_at` = s.`__end_at`, t.`__cdc_end_sequence` = s.`__cdc_end_sequence`\n"
        "WHEN NOT MATCHED AND NOT s.`__cdc_drop` THEN INSERT "
        "(`id`, `qty`, `__start_at`, `__end_at`, `__cdc_start_sequence`, `__cdc_end_sequence`) "
        "VALUES (s.`id`, s.`qty`, s.`__start_at`, s.`__end_at`, s.`__cdc_start_sequence`, s.`__cdc_end_sequence`)"
    )


def test_a_rule_without_updates_only_inserts() -> None:
    rule = Merge(on=("k",), update=(), insert=("k", "v"))
    assert rule.sql("t1", "s1") == (
        "MERGE INTO t1 t USING s1 s ON t.`k` = s.`k`\nWHEN NOT MATCHED THEN INSERT (`k`, `v`) VALUES (s.`k`, s.`v`)"
    )


@pytest.mark.parametrize(
    ("names", "columns"),
    [
        (None, ()),
        ("", ()),
        ([], ()),
        ("op", ("_cdc_op",)),
        ("commit_ts, op,,offset", ("_cdc_commit_ts", "_cdc_op", "_cdc_topic", "_cdc_partition", "_cdc_offset")),
        (["schema_version", "op", "op"], ("_cdc_schema_version", "_cdc_op")),
        (("offset", "commit_ts"), ("_cdc_topic", "_cdc_partition", "_cdc_offset", "_cdc_commit_ts")),
    ],
)
def test_metadata_columns(names: str | list[str] | tuple[str, ...] | None, columns: tuple[str, ...]) -> None:
    assert metadata_columns(names) == columns


def test_unknown_metadata_column_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        metadata_columns("op,partition")
    assert str(caught.value) == "metadata column 'partition': expected some of commit_ts, op, offset, schema_version"


def test_a_key_that_is_not_a_column_of_the_change_frame_is_named_in_the_error() -> None:
    from types import SimpleNamespace

    from cdc_spark.merge.spec import data_columns

    changes = SimpleNamespace(columns=["id", "name", "_cdc_op", "__cdc_order"])  # data_columns reads only .columns
    assert data_columns(changes, ["id"]) == ("id", "name")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError, match=r"key columns \['region'\] are not columns of the change frame \['id', 'name'\]"
    ):
        data_columns(changes, ["id", "region"])  # type: ignore[arg-type]
