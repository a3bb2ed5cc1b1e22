"""``cdc apply``: run the Spark pipeline from the command line.

    cdc apply --protocol debezium --source kafka://localhost:9092/shop --target ./tables --once
    cdc apply --protocol simple --source file://changes.jsonl --target ./tables --scd 2 --keys id

Also installed as ``cdc-spark apply ...`` (the same parser) for environments without the ``cdc`` command.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence

from cdc_core.cli.arguments import add_sink_uri, codec_choice
from cdc_core.errors import CdcError, ConfigError
from cdc_core.registry import get_codec
from cdc_core.sinkuri import SinkUri
from cdc_spark.job import JobConfig, SourceSpec, describe, parse_keys, run
from cdc_spark.merge.columns import METADATA, metadata_columns

HELP = "apply a changefeed to one table per source table on Spark (Delta Lake by default, or Iceberg)"


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option {text!r}: expected KEY=VALUE")
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", help="codec protocol id, e.g. debezium, simple, canal-json")
    parser.add_argument("--source", help="kafka://HOST:PORT/TOPIC[,TOPIC] or file://PATH")
    add_sink_uri(parser)
    parser.add_argument(
        "--target", required=True, help="directory of the tables (DB/TABLE under it; with -o catalog=NAME: unused)"
    )
    parser.add_argument("--checkpoint", help="checkpoint directory (default: TARGET/_checkpoint)")
    parser.add_argument(
        "--keys", help="key columns: 'id' or 'id,region' for every table, or 'db.t1=id;db.t2=a,b' (default: schema)"
    )
    parser.add_argument("--scd", type=int, choices=(1, 2), default=1, help="SCD type 1 (latest) or 2 (history)")
    parser.add_argument("--track-columns", help="SCD2: comma-separated columns whose changes start a new version")
    parser.add_argument(
        "--tombstone-hours", type=float, default=168.0, help="keep deletes this long against late updates"
    )
    parser.add_argument(
        "--metadata-columns",
        metavar="NAMES",
        help=f"also write these to the targets: {','.join(METADATA)} (as _cdc_commit_ts, _cdc_op, ...)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="apply what the source holds now, then stop (default)")
    mode.add_argument("--continuous", action="store_true", help="keep applying until interrupted")
    parser.add_argument(
        "--option",
        "-o",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="codec option, source.* source option, or table-format=delta|iceberg, catalog=NAME, catalog-name, "
        "watermark=true, trigger-interval, app-id, decode=jvm|python, time-as=interval|string",
    )
    parser.add_argument("--master", default=None, help="Spark master (default: the session's, else local[*])")
    parser.add_argument(
        "--conf",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting (spark.jars.packages, spark.sql.shuffle.partitions, ...); it wins over the defaults",
    )
    parser.add_argument("--quiet", action="store_true", help="no per-batch progress lines")


def config_from(args: argparse.Namespace) -> JobConfig:
    uri: SinkUri | None = args.sink_uri
    protocol, _ = codec_choice(args.protocol, uri, None, flag="--protocol")
    options = dict(args.option)
    if uri is not None:  # the changefeed's sink URI: its brokers and topic are the source, its options the codec's
        options = {**get_codec(protocol).used_options(uri.parameters), **options}
    source = args.source or (f"kafka://{','.join(uri.brokers)}/{uri.topic or ''}" if uri is not None else None)
    if source is None:
        raise ConfigError("give --source or --sink-uri")
    return JobConfig(
        protocol=protocol,
        source=SourceSpec.parse(source),
        target=args.target,
        checkpoint=args.checkpoint or f"{args.target.rstrip('/')}/_checkpoint",
        keys=parse_keys(args.keys),
        scd=args.scd,
        continuous=bool(args.continuous),
        options=options,
        track_columns=tuple(c for c in args.track_columns.split(",") if c) if args.track_columns else None,
        tombstone_retention=dt.timedelta(hours=args.tombstone_hours),
        metadata_columns=metadata_columns(args.metadata_columns),
    )


def execute(args: argparse.Namespace) -> int:
    """Run ``cdc apply`` for parsed arguments; typed errors become one line on stderr and exit status 2."""
    try:
        config = config_from(args)
        from cdc_spark.session import build_session

        spark = build_session(args.master, app_name="cdc-apply", conf=dict(args.conf))

        def progress(report: object) -> None:
            if not args.quiet:
                print(describe(report), flush=True)  # type: ignore[arg-type]

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
