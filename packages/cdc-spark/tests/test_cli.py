"""`cdc apply` argument handling: source URIs, keys, options, typed errors."""

from __future__ import annotations

import datetime as dt

import attrs
import pytest

from cdc_core.codec import IgnoredOptionsWarning
from cdc_core.errors import CodecNotFoundError, ConfigError
from cdc_spark.cli import build_parser, config_from, main
from cdc_spark.job import (
    JOB_OPTIONS,
    SMALL_BATCH,
    SMALL_BATCH_BYTES,
    BatchReport,
    JobConfig,
    SourceSpec,
    batch_plan,
    describe,
    parse_keys,
    steady_rate,
)


def test_source_uris() -> None:
    assert SourceSpec.parse("kafka://h1:9092,h2:9092/orders,items") == SourceSpec(
        kind="kafka", location="h1:9092,h2:9092", topics=("orders", "items")
    )
    assert SourceSpec.parse("file:///data/changes.jsonl") == SourceSpec(kind="file", location="/data/changes.jsonl")
    assert SourceSpec.parse("file://relative/dir").location == "relative/dir"
    for bad in ("kafka://host:9092", "kafka:///topic", "s3://bucket/x", "file://"):
        with pytest.raises(ConfigError, match="source"):
            SourceSpec.parse(bad)


def test_keys() -> None:
    assert parse_keys("id") == {"*": ("id",)}
    assert parse_keys("shop.orders=id, region;shop.items=sku") == {
        "shop.orders": ("id", "region"),
        "shop.items": ("sku",),
    }
    with pytest.raises(ConfigError, match="no column names"):
        parse_keys("shop.orders=")


def test_arguments_make_the_job_config() -> None:
    args = build_parser().parse_args(
        ["apply", "--protocol", "debezium", "--source", "kafka://localhost:9092/shop", "--target", "out",
         "--scd", "2", "--keys", "id", "--continuous", "-o", "table-format=iceberg", "-o", "watermark=true",
         "-o", "source.maxOffsetsPerTrigger=100", "-o", "decimal.handling.mode=string", "--tombstone-hours", "1",
         "--metadata-columns", "commit_ts,offset"]
    )  # fmt: skip
    config = config_from(args)
    assert (config.continuous, config.checkpoint) == (True, "out/_checkpoint")
    settings = config.routing.settings("shop.orders")
    assert (settings.scd, settings.keys) == (2, ("id",))
    assert config.table_format == "iceberg"
    assert config.metadata_columns == ("_cdc_commit_ts", "_cdc_topic", "_cdc_partition", "_cdc_offset")
    assert config.watermark
    assert config.codec_options() == {"decimal.handling.mode": "string"}
    assert config.source_options() == {"maxOffsetsPerTrigger": "100"}
    assert config.tombstone_retention == dt.timedelta(hours=1)


def test_a_sink_uri_gives_protocol_source_and_codec_options() -> None:
    uri = (
        "kafka://b1:9092,b2:9092/shop?protocol=debezium&enable-tidb-extension=true&kafka-version=2.4.0"
        "&debezium-binary-handling-mode=hex"
    )
    args = build_parser().parse_args(["apply", "--sink-uri", uri, "--target", "out"])
    with pytest.warns(IgnoredOptionsWarning, match="enable-tidb-extension, kafka-version"):
        config = config_from(args)
    assert config.protocol == "debezium"
    assert (config.source.kind, config.source.location, config.source.topics) == ("kafka", "b1:9092,b2:9092", ("shop",))
    assert config.codec_options() == {"binary.handling.mode": "hex"}  # TiCDC's name, Debezium's option
    clash = build_parser().parse_args(["apply", "--sink-uri", uri, "--protocol", "simple", "--target", "out"])
    with pytest.raises(ConfigError, match="contradicts"):
        config_from(clash)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "sink=spark-merge"], "option sink= is no longer supported: use table-format"),
        (["-o", "catalog-prefix=c.db"], "option catalog-prefix= is no longer supported: use catalog=NAME"),
        (["--metadata-columns", "op,lsn"], "metadata column 'lsn': expected some of commit_ts, op, offset"),
    ],
)
def test_replaced_options_and_unknown_metadata_columns_are_config_errors(args: list[str], message: str) -> None:
    parsed = build_parser().parse_args(
        ["apply", "--protocol", "debezium", "--source", "file://x", "--target", "t", *args]
    )
    with pytest.raises(ConfigError, match=message):
        config_from(parsed)


@pytest.mark.parametrize(("option", "value"), [("time-as", "text"), ("decode", "native")])
def test_an_unknown_decode_choice_is_a_config_error(option: str, value: str) -> None:
    config = JobConfig(
        protocol="canal-json", source=SourceSpec.parse("file://x"), target="t", checkpoint="c", options={option: value}
    )
    with pytest.raises(ConfigError, match=f"{option}={value!r}"):
        _ = config.decode_plan, config.time_as
    assert option not in config.codec_options()


@pytest.mark.parametrize(
    ("option", "plan"), [(None, "auto"), ("auto", "auto"), ("jvm", "jvm"), ("python", "python"), ("driver", "driver")]
)
def test_the_decode_option_defaults_to_auto(option: str | None, plan: str) -> None:
    options = {} if option is None else {"decode": option}
    config = JobConfig(
        protocol="debezium", source=SourceSpec.parse("file://x"), target="t", checkpoint="c", options=options
    )
    assert config.decode_plan == plan


def test_auto_decodes_small_batches_with_the_codec_and_larger_ones_in_the_jvm() -> None:
    assert batch_plan("auto", 1, 300) == "driver"
    assert batch_plan("auto", SMALL_BATCH - 1, SMALL_BATCH_BYTES) == "driver"
    # few messages of many bytes: the codec in the executors, nothing collected to the driver
    assert batch_plan("auto", SMALL_BATCH - 1, SMALL_BATCH_BYTES + 1) == "python"
    assert batch_plan("auto", 3, 10**9) == "python"
    assert batch_plan("auto", SMALL_BATCH, 0) == "jvm"
    assert batch_plan("auto", 10**6, 10**9) == "jvm"
    for forced in ("jvm", "python", "driver"):  # a plan the user named holds for every batch
        assert {batch_plan(forced, n, n * 10**4) for n in (1, SMALL_BATCH - 1, SMALL_BATCH, 10**6)} == {forced}


def test_bad_option_syntax_exits_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["apply", "--protocol", "x", "--source", "file://a", "--target", "t", "-o", "novalue"])
    assert "KEY=VALUE" in capsys.readouterr().err


def test_config_errors_are_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apply", "--protocol", "debezium", "--source", "ftp://x/y", "--target", "t"]) == 2
    assert capsys.readouterr().err.startswith("cdc apply: source 'ftp://x/y'")


def test_apply_help_lists_every_job_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["apply", "--help"])
    text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at hyphens
    for option in JOB_OPTIONS:
        assert f"{option}=" in text, option
    assert "decode=auto|jvm|python" in text and "table-parallelism=N" in text


def test_apply_is_a_subcommand_of_cdc(capsys: pytest.CaptureFixture[str]) -> None:
    from cdc_core.cli.main import main as cdc

    with pytest.raises(SystemExit) as done:
        cdc(["apply", "--help"])
    assert done.value.code == 0
    assert "--scd" in capsys.readouterr().out


def _report(batch_id: int, messages: int, seconds: float) -> BatchReport:
    return BatchReport(
        batch_id=batch_id, messages=messages, applied={"shop.orders": messages}, skipped=(), held=0, dead_letters=0,
        watermark=None, seconds=seconds,
    )  # fmt: skip


def test_progress_lines_give_each_batch_rate_and_the_steady_rate_leaves_out_the_first_batch() -> None:
    reports = [_report(0, 1000, 10.0), _report(1, 4000, 2.0), _report(2, 0, 0.5), _report(3, 2000, 2.0)]
    assert describe(reports[1]) == "batch 1: 4000 messages -> shop.orders +4000 (2.0 s, 2,000 messages/s)"
    assert describe(_report(0, 10, 21.3)) == "batch 0: 10 messages -> shop.orders +10 (21.3 s, 0.5 messages/s)"
    decoded = attrs.evolve(reports[1], decoded={"jvm": 3990, "codec": 10})
    assert describe(decoded) == (
        "batch 1: 4000 messages -> shop.orders +4000; decoded: 3,990 in the JVM, 10 by the codec"
        " (2.0 s, 2,000 messages/s)"
    )
    timed = attrs.evolve(
        reports[1], decode_seconds=1.24, decode_steps={"shapes": 0.41, "typing": 0.66}, apply_seconds=0.7
    )
    assert describe(timed) == (
        "batch 1: 4000 messages -> shop.orders +4000"
        " (2.0 s, 2,000 messages/s; decode 1.2 s (shapes 0.4, typing 0.7), apply 0.7 s)"
    )
    assert steady_rate(reports) == 1500.0  # 6000 messages over 4 s; the warm-up batch and the empty one left out
    assert steady_rate(reports[:1]) is None


def test_nested_nullability_is_no_type_change_but_a_nested_type_change_is() -> None:
    from pyspark.sql import types as T

    from cdc_spark.merge.evolution import SchemaEvolutionError, evolve

    def table(inner: T.DataType, nullable: bool) -> T.StructType:
        sequence = T.StructType([T.StructField("commit_ts", inner, nullable), T.StructField("offset", T.LongType())])
        return T.StructType([T.StructField("id", T.LongType()), T.StructField("__cdc_sequence", sequence)])

    assert not evolve("shop.orders", table(T.LongType(), True), table(T.LongType(), False))
    with pytest.raises(SchemaEvolutionError, match="__cdc_sequence"):
        evolve("shop.orders", table(T.LongType(), True), table(T.StringType(), True))


def test_the_watermark_gate_is_for_protocols_whose_codec_carries_watermarks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``watermark=true`` asks the codec whether its messages carry TiCDC's watermarks (``Codec.watermarks``); a
    protocol whose codec says no is refused before the job starts. (No installed codec says no: one is made here.)"""
    from cdc_core.registry import get_codec
    from cdc_spark import job

    def config(protocol: str) -> JobConfig:
        source = SourceSpec(kind="file", location="in")
        return JobConfig(protocol=protocol, source=source, target="out", checkpoint="c", options={"watermark": "true"})

    assert config("canal-json").watermark
    with pytest.raises(CodecNotFoundError, match="unknown protocol 'maxwell'"):
        _ = config("maxwell").watermark
    silent = attrs.evolve(get_codec("canal-json"), name="plain-json", watermarks=False)
    monkeypatch.setattr(job, "get_codec", lambda protocol: silent if protocol == "plain-json" else get_codec(protocol))
    with pytest.raises(ConfigError, match="protocol plain-json carries no TiCDC watermarks"):
        _ = config("plain-json").watermark
