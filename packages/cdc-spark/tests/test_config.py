"""``cdc apply --config FILE``: every long flag a key, TOML and YAML alike, flags over the file, ${ENV} and
``*-file`` secrets, and the settings object the Python API takes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cdc_core.errors import ConfigError
from cdc_spark.cli import build_parser, settings_from
from cdc_spark.config import KINDS, Settings

TOML = r"""
protocol = "canal-json"
source = "kafka://localhost:9092/shop"
target = "${LAKE}/tables"
once = true
keys = ["shop\\.items=order_id,sku", "id"]
scd = 2
track-columns = { "shop\\.orders" = ["status", "amount"] }
include-tables = ["shop\\..*"]
exclude-tables = "shop\\.audit"
route = ["shard_\\d+\\.orders=shop.orders"]
exclude-columns = ["shop\\.customers=email"]
ddl = "try-evolve"
tombstone-hours = 24
metadata-columns = ["commit_ts", "op"]
progress = "json"

[option]
enable-tidb-extension = true
source.maxOffsetsPerTrigger = 1000
schema-registry-file = "${SECRETS}/registry"

[conf]
"spark.sql.shuffle.partitions" = 4
"""

YAML = r"""
protocol: canal-json
source: kafka://localhost:9092/shop
target: ${LAKE}/tables
once: true
keys: ['shop\.items=order_id,sku', id]
scd: 2
track-columns: {'shop\.orders': [status, amount]}
include-tables: ['shop\..*']
exclude-tables: 'shop\.audit'
route: ['shard_\d+\.orders=shop.orders']
exclude-columns: ['shop\.customers=email']
ddl: try-evolve
tombstone-hours: 24
metadata-columns: [commit_ts, op]
progress: json
option:
  enable-tidb-extension: true
  source.maxOffsetsPerTrigger: 1000
  schema-registry-file: ${SECRETS}/registry
conf:
  spark.sql.shuffle.partitions: 4
"""


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "registry").write_text("http://user:s3cret@registry:8081\n")
    monkeypatch.setenv("LAKE", "/data/lake")
    monkeypatch.setenv("SECRETS", str(secrets))
    return tmp_path


@pytest.mark.parametrize(("name", "text"), [("pipeline.toml", TOML), ("pipeline.yaml", YAML)])
def test_a_file_gives_every_kind_of_setting(environment: Path, name: str, text: str) -> None:
    path = environment / name
    path.write_text(text)
    settings = Settings.load(path)
    assert settings.target == "/data/lake/tables"
    assert settings.keys == (r"shop\.items=order_id,sku", "id")
    assert settings.track_columns == (r"shop\.orders=status,amount",)
    assert settings.exclude_tables == (r"shop\.audit",)
    assert settings.option == {
        "enable-tidb-extension": "true",
        "source.maxOffsetsPerTrigger": "1000",  # TOML's dotted key is a nested table: flattened again
        "schema-registry": "http://user:s3cret@registry:8081",  # read from the -file, newline dropped
    }
    assert settings.conf == {"spark.sql.shuffle.partitions": "4"}
    assert "s3cret" not in repr(settings)
    config = settings.job_config()
    assert (config.protocol, config.source.topics, config.continuous, config.ddl) == (
        "canal-json",
        ("shop",),
        False,
        "try-evolve",
    )
    assert config.tombstone_retention == dt.timedelta(hours=24)
    assert config.metadata_columns == ("_cdc_commit_ts", "_cdc_op")
    assert config.source_options() == {"maxOffsetsPerTrigger": "1000"}
    routing = config.routing
    assert routing.selected("shop", "orders") and not routing.selected("shop", "audit")
    assert routing.target("shard_7", "orders") == "shop.orders"
    orders = routing.settings("shop.orders")
    assert (orders.keys, orders.scd, orders.track_columns) == (("id",), 2, ("status", "amount"))
    assert routing.settings("shop.items").keys == ("order_id", "sku")
    assert routing.settings("shop.customers").exclude_columns == ("email",)


def test_toml_and_yaml_files_give_equal_settings(environment: Path) -> None:
    (environment / "a.toml").write_text(TOML)
    (environment / "a.yml").write_text(YAML)
    assert Settings.load(environment / "a.toml") == Settings.load(environment / "a.yml")


def test_every_long_flag_of_cdc_apply_is_a_file_key_of_the_same_name() -> None:
    apply = build_parser()._subparsers._group_actions[0].choices["apply"]  # type: ignore[union-attr]
    flags = {s[2:] for action in apply._actions for s in action.option_strings if s.startswith("--")}
    # --debug is the process's (as CDC_DEBUG=1), not a setting of the run
    assert flags - {"help", "config", "sink-uri-file", "debug"} == set(KINDS)


def _args(config: Path | None, *flags: str) -> Settings:
    given = ["--config", str(config)] if config is not None else []
    return settings_from(build_parser().parse_args(["apply", *given, *flags]))


def test_flags_override_the_file_tables_key_by_key_and_lists_whole(environment: Path) -> None:
    path = environment / "pipeline.toml"
    path.write_text(TOML)
    settings = _args(
        path, "--continuous", "--keys", "uuid", "-o", "enable-tidb-extension=false", "-o", "x=1", "--scd", "1"
    )
    assert (settings.once, settings.continuous) == (None, True)
    assert settings.keys == ("uuid",)
    assert settings.scd == ("1",)
    assert settings.option is not None
    assert settings.option["enable-tidb-extension"] == "false"
    assert settings.option["x"] == "1" and settings.option["source.maxOffsetsPerTrigger"] == "1000"
    assert settings.include_tables == (r"shop\..*",)  # not given as a flag: the file's
    assert _args(path).job_config().continuous is False


def test_secrets_come_from_files_on_the_command_line_too(tmp_path: Path) -> None:
    uri = tmp_path / "uri"
    uri.write_text("kafka://b:9092/shop?protocol=canal-json&sasl-password=hunter2\n")
    password = tmp_path / "password"
    password.write_text("s3cret")
    settings = _args(None, "--sink-uri-file", str(uri), "--target", "t", "-o", f"sasl-password-file={password}")
    assert settings.sink_uri == "kafka://b:9092/shop?protocol=canal-json&sasl-password=hunter2"
    assert settings.option == {"sasl-password": "s3cret"}
    assert "hunter2" not in repr(settings) and "s3cret" not in repr(settings)
    with pytest.raises(ConfigError, match="not both"):
        _args(None, "--sink-uri-file", str(uri), "--sink-uri", "kafka://b:9092/x?protocol=debezium")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('protocl = "debezium"', r"unknown setting 'protocl' \(did you mean protocol\?\)"),
        ('target = "${NOT_SET_ANYWHERE}"', "target: the environment variable NOT_SET_ANYWHERE is not set"),
        ("once = 1", "once: expected true or false"),
        ('tombstone-hours = "soon"', "tombstone-hours: expected a number"),
        ('option = "x"', "option: expected a table"),
        ("keys = [[1]]", "keys: expected text"),
        ('sink-uri = "a"\nsink-uri-file = "b"', "both sink-uri and sink-uri-file"),
        ('option = { a = "1", a-file = "f" }', "option: both a and a-file"),
        ('target-file = "/no/such/file"', "target-file '/no/such/file': cannot read it"),
        ("once = true\ncontinuous = true", "once and continuous are both set"),
        ("= broken", "not TOML"),
    ],
)
def test_bad_files_are_one_config_error_naming_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        Settings.load(path)


def test_dollars_expand_only_as_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOPIC", "shop")
    path = tmp_path / "p.toml"
    path.write_text('source = "kafka://h:9092/${TOPIC}"\ninclude-tables = ["shop\\\\.orders$", "a$$b"]\n')
    settings = Settings.load(path)
    assert settings.source == "kafka://h:9092/shop"
    assert settings.include_tables == (r"shop\.orders$", "a$b")


def test_files_of_other_kinds_and_missing_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"expected a \.toml, \.yaml or \.yml file"):
        Settings.load(tmp_path / "p.json")
    with pytest.raises(ConfigError, match="cannot read it"):
        Settings.load(tmp_path / "missing.toml")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected settings"):
        Settings.load(tmp_path / "list.yaml")


def test_the_python_api_takes_the_same_settings() -> None:
    settings = Settings(
        protocol="debezium",
        source="file://changes.jsonl",
        target="out",
        route=r"shop\.orders_\d+=shop.orders",
        scd=2,  # a bare value, as in a file
        option={"decode": "python"},
    )
    config = settings.job_config()
    assert config.routing.target("shop", "orders_3") == "shop.orders"
    assert config.routing.settings("shop.orders").scd == 2
    assert config.options == {"decode": "python"}
    with pytest.raises(ConfigError, match="give target"):
        Settings(protocol="debezium", source="file://x").job_config()
    with pytest.raises(ConfigError, match="ddl 'lenient': expected one of evolve, try-evolve, ignore, stop"):
        Settings(protocol="debezium", source="file://x", target="t", ddl="lenient").job_config()


@pytest.mark.filterwarnings("ignore::cdc_core.codec.IgnoredOptionsWarning")  # kafka-version: the producer's
def test_a_sink_uri_without_protocol_takes_the_protocol_option() -> None:
    uri = "kafka://b1:9092,b2:9092/shop?kafka-version=2.4.0&max-message-bytes=1048576"
    config = Settings(protocol="simple", sink_uri=uri, target="t").job_config()
    assert (config.protocol, config.source.location, config.source.topics) == ("simple", "b1:9092,b2:9092", ("shop",))
    assert config.options["max-message-bytes"] == "1048576"
    with pytest.raises(ConfigError, match="the sink URI names no protocol: give protocol"):
        Settings(sink_uri=uri, target="t").job_config()
    with pytest.raises(ConfigError, match="protocol debezium contradicts the sink URI's protocol=simple"):
        Settings(protocol="debezium", sink_uri=uri + "&protocol=simple", target="t").job_config()


@pytest.mark.filterwarnings("ignore::cdc_core.codec.IgnoredOptionsWarning")  # the sink URI's producer-only parameter
def test_the_documented_config_files_are_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```toml and ```yaml block of docs/spark.md loads and makes a job configuration (the secret files
    they name made under tmp_path)."""
    import re

    doc = Path(__file__).resolve().parents[3] / "docs" / "spark.md"
    blocks = re.findall(r"```(toml|yaml)\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert sorted(kind for kind, _ in blocks) == ["toml", "toml", "yaml", "yaml"]
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "jaas").write_text("org.apache.kafka.common.security.plain.PlainLoginModule required;\n")
    monkeypatch.setenv("KAFKA", "b:9092")
    monkeypatch.setenv("REGISTRY_PASSWORD", "p")
    protocols = []
    for number, (kind, text) in enumerate(blocks):
        path = tmp_path / f"{number}.{kind}"
        path.write_text(text.replace("/run/secrets/", f"{secrets}/"))
        config = Settings.load(path).job_config()
        protocols.append(config.protocol)
    assert protocols == ["debezium", "canal-json", "simple", "avro"]
