"""Routing and filtering rules: which tables a run applies, where each lands, each target's settings."""

from __future__ import annotations

import pytest

from cdc_core.errors import ConfigError
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.types import parse_type_text
from cdc_spark.routing import Routing, TableSettings, target_keys


def test_include_and_exclude_match_the_whole_database_dot_table_name() -> None:
    routing = Routing(include_tables=[r"shop\..*", r"crm\.customers"], exclude_tables=[r".*_tmp", r"shop\.audit"])
    chosen = [
        name
        for name in ("shop.orders", "shop.orders_tmp", "shop.audit", "shop.auditlog", "crm.customers", "crm.leads")
        if routing.selected(*name.split("."))
    ]
    assert chosen == ["shop.orders", "shop.auditlog", "crm.customers"]
    assert not Routing(include_tables=["shop"]).selected("shop", "orders")  # not a substring search
    assert Routing().selected("any", "table") and not Routing().filters_tables


def test_routes_fill_in_placeholders_and_groups_and_the_first_match_wins() -> None:
    routing = Routing(
        routes=[
            r"shard_\d+\.orders=shop.orders",
            r"(?P<db>legacy)_(\w+)\.(.*)={db}.{2}_{table}",
            r"raw\..*=staging.{table}",
            r"raw\.special=never.used",
        ]
    )
    assert routing.target("shard_1", "orders") == "shop.orders"
    assert routing.target("shard_22", "orders") == "shop.orders"
    assert routing.target("legacy_eu", "items") == "legacy.eu_items"
    assert routing.target("raw", "special") == "staging.special"
    assert routing.target("shop", "items") == "shop.items"  # no route: its own name
    assert routing.targets([("shard_2", "orders"), ("shard_1", "orders"), ("shop", "items")]) == {
        "shop.items": (("shop", "items"),),
        "shop.orders": (("shard_1", "orders"), ("shard_2", "orders")),
    }
    filtered = Routing(routes=[r"shard_\d+\.orders=shop.orders"], exclude_tables=[r"shard_2\..*"])
    assert filtered.targets([("shard_1", "orders"), ("shard_2", "orders")]) == {"shop.orders": (("shard_1", "orders"),)}


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ("shop.orders", "expected REGEX=TARGET"),
        ("=shop.orders", "expected REGEX=TARGET"),
        (r"shop\.(orders=x.{2}", "not a regular expression"),
        (r"shop\.orders=x.{schema}", r"\{schema\} is neither"),
        (r"shop\.(orders)=x.{2}", r"\{2\} is neither"),
    ],
)
def test_bad_routes_are_config_errors_when_the_rules_are_made(route: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Routing(routes=[route])


@pytest.mark.parametrize(
    "target", ["orders", "a.b.c", "../x.y", "_cdc_state.orders", "_cdc_keys.orders", "shop/x.y", "shop."]
)
def test_a_route_target_is_database_dot_table_and_no_path(target: str) -> None:
    routing = Routing(routes=[f"shop\\.orders={target}"])
    with pytest.raises(ConfigError, match=r"a target is database\.table"):
        routing.target("shop", "orders")


def test_per_table_settings_take_the_first_matching_rule_then_the_bare_value_then_the_defaults() -> None:
    routing = Routing(
        keys=["id", r"shop\.items=order_id, sku"],
        scd=[r"shop\.history_.*=2", "1"],
        track_columns=[r"shop\.history_.*=price,qty"],
        include_columns=[r"shop\.orders=id,amount", r"shop\..*=id"],
        exclude_columns=["secret"],
    )
    assert routing.settings("shop.items") == TableSettings(
        keys=("order_id", "sku"), include_columns=("id",), exclude_columns=("secret",)
    )
    assert routing.settings("shop.history_prices") == TableSettings(
        keys=("id",), scd=2, track_columns=("price", "qty"), include_columns=("id",), exclude_columns=("secret",)
    )
    assert routing.settings("shop.orders").include_columns == ("id", "amount")  # the first rule that matches
    defaults = TableSettings(keys=("k",), scd=2, track_columns=("t",))
    assert Routing().settings("x.y", defaults) == defaults
    assert Routing(scd=["1"]).settings("x.y", defaults).scd == 1  # a rule wins over the defaults


def test_the_keys_flag_keeps_its_semicolon_form() -> None:
    routing = Routing(keys=["shop.orders=id, region;shop.items=sku"])
    assert routing.settings("shop.orders").keys == ("id", "region")
    assert routing.settings("shop.items").keys == ("sku",)
    assert routing.settings("shop.other").keys is None


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"scd": ["3"]}, "the SCD type is 1 or 2"),
        ({"scd": [r"shop\..*=two"]}, "the SCD type is 1 or 2"),
        ({"keys": ["id", "uuid"]}, "two values for every table"),
        ({"keys": [r"shop\.orders="]}, "no column names"),
        ({"include_columns": ["=a,b"]}, "no table pattern"),
        ({"exclude_tables": ["("]}, "exclude-tables '\\(': not a regular expression"),
    ],
)
def test_bad_rules_are_config_errors(rules: dict[str, list[str]], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Routing(**rules)  # type: ignore[arg-type]


def _schema(database: str, table: str, key: str) -> TableSchema:
    columns = [Column(name=n, data_type=parse_type_text("int"), nullable=n != key) for n in ("id", "order_id", "v")]
    return TableSchema(
        database=database,
        table=table,
        columns=columns,
        indexes=[Index(name="PRIMARY", columns=(key,), unique=True, primary=True)],
    )


def test_a_target_of_several_sources_takes_their_shared_key_or_the_keys_given() -> None:
    same = {("s1", "orders"): _schema("s1", "orders", "id"), ("s2", "orders"): _schema("s2", "orders", "id")}
    assert target_keys("shop.orders", None, same) == ("id",)
    differ = {**same, ("s3", "orders"): _schema("s3", "orders", "order_id")}
    with pytest.raises(ConfigError, match=r"routed from tables with different keys .*s3.orders key \(order_id\)"):
        target_keys("shop.orders", None, differ)
    assert target_keys("shop.orders", ("id", "v"), differ) == ("id", "v")
    with pytest.raises(ConfigError, match=r"has no primary or unique key.*--keys 'shop\\.orders=COLUMNS'"):
        target_keys("shop.orders", None, {("s1", "orders"): None})
    with pytest.raises(ConfigError, match="not known to this run"):
        target_keys("shop.orders", None, {})
