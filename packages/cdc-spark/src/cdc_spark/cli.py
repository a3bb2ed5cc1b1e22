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

from cdc_core.cli.arguments import add_sink_uri, codec_choice, count_argument
from cdc_core.cli.failures import DEBUG_HELP, INTERRUPTED, debug_wanted, report
from cdc_core.errors import ConfigError
from cdc_core.registry import get_codec
from cdc_core.sinkuri import SinkUri
from cdc_spark.job import BatchReport, JobConfig, SourceSpec, describe, parse_keys, run
from cdc_spark.merge.columns import METADATA, metadata_columns
from cdc_spark.retries import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, MAX_BACKOFF_S, RetryPolicy
from cdc_spark.run_summary import checkpoint_position, summary_line
from cdc_spark.source.checks import DEFAULT_BROKER_TIMEOUT_S

HELP = "apply a changefeed to one table per source table on Spark (Delta Lake by default, or Iceberg)"
# every job option of -o, as the help lists it (a test holds it to cdc_spark.job.JOB_OPTIONS)
JOB_OPTIONS_HELP = (
    "table-format=delta|iceberg, catalog=NAME, catalog-name=NAME, watermark=true|false, trigger-interval=DURATION, "
    "app-id=ID, decode=auto|jvm|python (auto: the codec below 2,000 messages a batch, the JVM from there), "
    "time-as=interval|string, table-parallelism=N (tables of a batch applied at once, default 4)"
)


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
        "--tombstone-hours", type=float, default=168.0, help="keep deletes this long against late updates (default 168)"
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
        help="a codec option (see `cdc protocols`), source.NAME=VALUE (an option of Spark's Kafka or file source), "
        f"or a job option: {JOB_OPTIONS_HELP}",
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
    parser.add_argument("--quiet", action="store_true", help="no per-batch progress lines (the summary line stays)")
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    parser.add_argument(
        "--max-dead-letters",
        type=count_argument,
        metavar="N",
        help="fail the run (exit code 1) at the batch that takes its dead letters beyond N (0: any dead letter); "
        "nothing of that batch is committed (default: no limit)",
    )
    parser.add_argument(
        "--retries",
        type=count_argument,
        default=DEFAULT_RETRIES,
        metavar="N",
        help="restarts from the checkpoint after a broker, registry or storage fault before the run fails with exit "
        f"code 3 (default {DEFAULT_RETRIES}; a batch that succeeds starts the count anew)",
    )
    parser.add_argument(
        "--retry-backoff",
        type=float,
        default=DEFAULT_BACKOFF_S,
        metavar="S",
        help=f"seconds before the first restart, doubled for each next one up to {MAX_BACKOFF_S:g} "
        f"(default {DEFAULT_BACKOFF_S:g})",
    )
    parser.add_argument(
        "--broker-timeout",
        type=float,
        default=DEFAULT_BROKER_TIMEOUT_S,
        metavar="S",
        help="how long the Kafka brokers may take to answer, at the start and in every request of Spark's source "
        f"(default {DEFAULT_BROKER_TIMEOUT_S:g})",
    )


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
        max_dead_letters=args.max_dead_letters,
        retry=RetryPolicy(retries=args.retries, backoff_s=args.retry_backoff),
        broker_timeout=_positive(args.broker_timeout, "--broker-timeout"),
    )


def _positive(seconds: float, flag: str) -> float:
    if not seconds > 0:
        raise ConfigError(f"{flag} {seconds:g}: expected a number of seconds above 0")
    return seconds


def execute(args: argparse.Namespace) -> int:
    """Run ``cdc apply`` for parsed arguments: progress lines and the summary line on stdout; a failure is raised
    as the project's typed error (``cdc`` prints it as one line with its exit code)."""
    config = config_from(args)
    from cdc_spark.session import build_session
    from cdc_spark.source.checks import quiet_logs

    spark = build_session(args.master, app_name="cdc-apply", conf=dict(args.conf))
    quiet_logs(spark, debug_wanted(getattr(args, "debug", False)))
    reports: list[BatchReport] = []

    def progress(batch: BatchReport) -> None:
        reports.append(batch)
        if not args.quiet:
            print(describe(batch), flush=True)

    def notify(text: str) -> None:
        print(f"cdc apply: {text}", file=sys.stderr, flush=True)

    since = checkpoint_position(config.checkpoint)
    try:
        run(spark, config, progress, notify=notify)
    except BaseException:
        if reports:  # a run that failed after some batches says what they did before its error line
            print(summary_line(reports, since), flush=True)
        raise
    print(summary_line(reports, since), flush=True)
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
    """``cdc-spark apply ...``: the same command as ``cdc apply``, failures reported the same way."""
    args = build_parser().parse_args(argv)
    try:
        return execute(args)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:
        return report("apply", exc, debug=debug_wanted(getattr(args, "debug", False)))


if __name__ == "__main__":
    sys.exit(main())
