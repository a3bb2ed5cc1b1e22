"""``cdc apply``: run the Spark pipeline from the command line.

    cdc apply --protocol debezium --source kafka://localhost:9092/shop --target ./tables --once
    cdc apply --protocol simple --source file://changes.jsonl --target ./tables --scd 2 --keys id
    cdc apply --config pipeline.toml --once

Also installed as ``cdc-spark apply ...`` (the same parser) for environments without the ``cdc`` command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cdc_core.errors import CdcError, ConfigError
from cdc_spark.config import KINDS, Settings
from cdc_spark.ddl_policy import POLICIES
from cdc_spark.job import JobConfig, run
from cdc_spark.merge.columns import METADATA
from cdc_spark.metrics import PROGRESS_FORMATS, progress_output

HELP = "apply a changefeed to one table per source table on Spark (Delta Lake by default, or Iceberg)"


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option {text!r}: expected KEY=VALUE")
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cdc apply``; each long flag is also a key of the config file (cdc_spark.config.KINDS).

    Nothing has a default here: a flag not given leaves the file's setting (or the job's default) in place."""
    parser.add_argument("--config", metavar="FILE", help="settings from a .toml or .yaml file (flags override it)")
    parser.add_argument("--protocol", help="codec protocol id, e.g. debezium, simple, canal-json")
    parser.add_argument("--source", help="kafka://HOST:PORT/TOPIC[,TOPIC] or file://PATH")
    parser.add_argument(
        "--sink-uri",
        metavar="URI",
        help="the changefeed's TiCDC sink URI, kafka://HOST:PORT/TOPIC?protocol=...&...: protocol, topic, brokers "
        "and codec options in one (--option adds or overrides)",
    )
    parser.add_argument("--sink-uri-file", metavar="FILE", help="read --sink-uri from FILE (keeps credentials off ps)")
    parser.add_argument("--target", help="directory of the tables (DB/TABLE under it; with -o catalog=NAME: unused)")
    parser.add_argument("--checkpoint", help="checkpoint directory (default: TARGET/_checkpoint)")
    rules = "repeatable; 'TABLE_REGEX=VALUE' for the targets the pattern matches, or VALUE for every other"
    parser.add_argument(
        "--keys", action="append", help=f"key columns 'id,region' ({rules}; default: the schema's primary key)"
    )
    parser.add_argument("--scd", action="append", help=f"SCD type 1 (latest row) or 2 (history) ({rules})")
    parser.add_argument(
        "--track-columns", action="append", help=f"SCD2: columns whose changes start a new version ({rules})"
    )
    parser.add_argument(
        "--include-tables", action="append", metavar="REGEX", help="apply only tables whose db.table matches"
    )
    parser.add_argument("--exclude-tables", action="append", metavar="REGEX", help="leave out tables that match")
    parser.add_argument(
        "--route",
        action="append",
        metavar="REGEX=TARGET",
        help="write matching tables to TARGET, database.table with {database}, {table} or the pattern's groups",
    )
    parser.add_argument(
        "--include-columns", action="append", metavar="[TABLE_REGEX=]COLS", help=f"write only ({rules})"
    )
    parser.add_argument("--exclude-columns", action="append", metavar="[TABLE_REGEX=]COLS", help=f"leave out ({rules})")
    parser.add_argument("--ddl", choices=POLICIES, help="schema changes: evolve (default), try-evolve, ignore, stop")
    parser.add_argument("--tombstone-hours", type=float, help="keep deletes this long against late updates (168)")
    parser.add_argument(
        "--metadata-columns",
        action="append",
        metavar="NAMES",
        help=f"also write these to the targets: {','.join(METADATA)} (as _cdc_commit_ts, _cdc_op, ...)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--once", action="store_true", default=None, help="apply what the source holds now, then stop (default)"
    )
    mode.add_argument("--continuous", action="store_true", default=None, help="keep applying until interrupted")
    parser.add_argument(
        "--option",
        "-o",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="codec option, source.* source option, or table-format=delta|iceberg, catalog=NAME, catalog-name, "
        "watermark=true, trigger-interval, app-id, decode=jvm|python, time-as=interval|string; KEY-file=PATH reads "
        "KEY's value from PATH",
    )
    parser.add_argument("--master", help="Spark master (default: the session's, else local[*])")
    parser.add_argument(
        "--conf",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="a Spark setting (spark.jars.packages, spark.sql.shuffle.partitions, ...); it wins over the defaults",
    )
    parser.add_argument("--quiet", action="store_true", default=None, help="no per-batch progress")
    parser.add_argument(
        "--progress", choices=PROGRESS_FORMATS, help="per-batch progress: text lines (default), json objects, none"
    )
    parser.add_argument("--progress-file", metavar="FILE", help="append the progress to FILE instead of stdout")


def settings_from(args: argparse.Namespace) -> Settings:
    """The run's settings: the ``--config`` file's, overridden by the flags given."""
    flags: dict[str, object] = {}
    for key in KINDS:
        value = getattr(args, key.replace("-", "_"), None)
        if value is None:
            continue
        if key in ("option", "conf"):
            value = dict(value)
        flags[key] = value
    if args.sink_uri_file is not None:
        if "sink-uri" in flags:
            raise ConfigError("give --sink-uri or --sink-uri-file, not both")
        flags["sink-uri-file"] = args.sink_uri_file
    given = Settings.from_mapping(flags, origin="flags")
    return Settings.load(args.config).overridden_by(given) if args.config else given


def config_from(args: argparse.Namespace) -> JobConfig:
    return settings_from(args).job_config()


def execute(args: argparse.Namespace) -> int:
    """Run ``cdc apply`` for parsed arguments; typed errors become one line on stderr and exit status 2."""
    try:
        settings = settings_from(args)
        config = settings.job_config()
        from cdc_spark.session import build_session

        spark = build_session(settings.master, app_name="cdc-apply", conf=dict(settings.conf or {}))
        with progress_output(spark, config, settings) as progress:
            run(spark, config, progress)
    except CdcError as exc:
        print(f"cdc apply: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``cdc_core.commands`` entry point: adds ``apply`` to the ``cdc`` command."""
    parser = subparsers.add_parser("apply", help=HELP, description=HELP)
    add_arguments(parser)
    parser.set_defaults(handler=execute)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdc-spark", description="cdc pipeline on Spark")
    register(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command != "apply":
        raise ConfigError(f"unknown command {args.command}")
    return execute(args)


if __name__ == "__main__":
    sys.exit(main())
