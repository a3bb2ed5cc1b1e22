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

from cdc_core.cli.arguments import count_argument
from cdc_core.cli.failures import DEBUG_HELP, INTERRUPTED, debug_wanted, report
from cdc_core.errors import ConfigError
from cdc_spark.config import KINDS, Settings
from cdc_spark.ddl_policy import POLICIES
from cdc_spark.job import BatchReport, JobConfig, run
from cdc_spark.merge.columns import METADATA
from cdc_spark.metrics import PROGRESS_FORMATS, progress_output
from cdc_spark.retries import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, MAX_BACKOFF_S
from cdc_spark.run_summary import checkpoint_position, summary_line
from cdc_spark.source.checks import DEFAULT_BROKER_TIMEOUT_S

HELP = "apply a changefeed to one table per source table on Spark (Delta Lake by default, or Iceberg)"
# every job option of -o, as the help lists it (a test holds it to cdc_spark.job.JOB_OPTIONS)
JOB_OPTIONS_HELP = (
    "table-format=delta|iceberg, catalog=NAME, catalog-name=NAME, watermark=true|false, trigger-interval=DURATION, "
    "app-id=ID, decode=auto|jvm|python|driver (auto: the codec on the driver below 2,000 messages a batch, the JVM "
    "from there), "
    "time-as=interval|string, table-parallelism=N (tables of a batch applied at once, default 4)"
)


def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option {text!r}: expected KEY=VALUE")
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``cdc apply``; each long flag is also a key of the config file (cdc_spark.config.KINDS).

    Nothing has a default here: a flag not given leaves the file's setting (or the job's default) in place."""
    _add_endpoint_arguments(parser)
    _add_table_arguments(parser)
    _add_run_arguments(parser)
    _add_fault_arguments(parser)


def _add_endpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the changes come from (a config file, the protocol, the source or sink URI) and where they go."""
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


def _add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """What the tables get: keys, SCD type, which tables (and their targets) and columns, schema changes, metadata."""
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


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How the job runs: once or continuously, codec/job options, Spark's master and settings, its progress."""
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
        help="a codec option (see `cdc protocols`), source.NAME=VALUE (an option of Spark's Kafka or file source), "
        f"or a job option: {JOB_OPTIONS_HELP}; KEY-file=PATH reads KEY's value from PATH",
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
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)


def _add_fault_arguments(parser: argparse.ArgumentParser) -> None:
    """What the run tolerates: dead letters, and restarts after an infrastructure fault."""
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
        metavar="N",
        help="restarts from the checkpoint after a broker, registry or storage fault before the run fails with exit "
        f"code 3 (default {DEFAULT_RETRIES}; a batch that succeeds starts the count anew)",
    )
    parser.add_argument(
        "--retry-backoff",
        type=float,
        metavar="S",
        help=f"seconds before the first restart, doubled for each next one up to {MAX_BACKOFF_S:g} "
        f"(default {DEFAULT_BACKOFF_S:g})",
    )
    parser.add_argument(
        "--broker-timeout",
        type=float,
        metavar="S",
        help="how long the Kafka brokers may take to answer, at the start and in every request of Spark's source "
        f"(default {DEFAULT_BROKER_TIMEOUT_S:g})",
    )


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
    """Run ``cdc apply`` for parsed arguments: progress lines and the summary line on stdout; a failure is raised
    as the project's typed error (``cdc`` prints it as one line with its exit code)."""
    settings = settings_from(args)
    config = settings.job_config()
    from cdc_spark.session import build_session
    from cdc_spark.source.checks import quiet_logs

    spark = build_session(settings.master, app_name="cdc-apply", conf=dict(settings.conf or {}))
    quiet_logs(spark, debug_wanted(getattr(args, "debug", False)))
    reports: list[BatchReport] = []

    def notify(text: str) -> None:
        print(f"cdc apply: {text}", file=sys.stderr, flush=True)

    since = checkpoint_position(config.checkpoint)
    # the summary line goes where the progress lines go, unless those are JSON objects on stdout
    summary_out = sys.stderr if settings.progress == "json" and not settings.progress_file else sys.stdout
    try:
        with progress_output(spark, config, settings) as shown:

            def progress(batch: BatchReport) -> None:
                reports.append(batch)
                if shown is not None:
                    shown(batch)

            run(spark, config, progress, notify=notify)
    except BaseException:
        if reports:  # a run that failed after some batches says what they did before its error line
            print(summary_line(reports, since), file=summary_out, flush=True)
        raise
    print(summary_line(reports, since), file=summary_out, flush=True)
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
