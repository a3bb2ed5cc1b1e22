"""Per-batch progress of ``cdc apply``: text lines, or one JSON object per batch for a monitoring system.

``--progress json`` joins what the batch function reports (:class:`cdc_spark.job.BatchReport`: messages, rows by
table and operation, dead letters, decode and apply seconds, what the DDL policy did) with Spark's own progress
of the same batch, which a :class:`StreamingQueryListener` receives once the batch has committed: Spark's input
and processing rates, the source offsets the batch ended at and the latest the source had, and from those the lag
behind the source per topic and partition. ``--progress-file FILE`` appends the objects to FILE instead of stdout.

``python -m cdc_spark.metrics FILE`` prints the last object of such a file in Prometheus' text format, for
node_exporter's textfile collector (docs/spark.md, "Watching a run").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Final

from cdc_core.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_spark.config import Settings
    from cdc_spark.job import BatchReport, JobConfig

PROGRESS_FORMATS: Final = ("text", "json", "none")
TERMINATION_WAIT_S: Final = 10.0  # for Spark's last progress event after the query ended


def source_lag(end: str | None, latest: str | None) -> dict[str, dict[str, int]] | None:
    """Messages behind the source per topic and partition, from a Kafka source's ``endOffset`` and
    ``latestOffset`` (JSON ``{"topic": {"partition": offset}}``); None for a source without such offsets."""
    try:
        ended, newest = json.loads(end or "null"), json.loads(latest or "null")
    except ValueError:
        return None
    if not isinstance(ended, dict) or not isinstance(newest, dict):
        return None
    lag: dict[str, dict[str, int]] = {}
    for topic, partitions in newest.items():
        done = ended.get(topic)
        if not isinstance(partitions, dict) or not isinstance(done, dict):
            return None
        lag[topic] = {p: max(0, int(o) - int(done.get(p, 0))) for p, o in sorted(partitions.items())}
    return lag


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else round(value, 3)


def record(report: BatchReport, progress: Any | None) -> dict[str, Any]:
    """The JSON object of one batch (``progress``: Spark's StreamingQueryProgress of it, if it came)."""
    rate = report.messages / report.seconds if report.seconds > 0 else None
    tables = {
        name: dict(report.changes.get(name) or {"changes": count}) for name, count in sorted(report.applied.items())
    }
    out: dict[str, Any] = {
        "batch": report.batch_id,
        "messages": report.messages,
        "seconds": _number(report.seconds),
        "messages_per_second": _number(rate),
        "rows": sum(report.applied.values()),
        "tables": tables,
        "replayed_tables": list(report.skipped),
        "dead_letters": report.dead_letters,
        "held": report.held,
        "watermark": report.watermark,
        "decoded": dict(report.decoded),
        "decode_seconds": _number(report.decode_seconds),
        "decode_steps": {k: _number(v) for k, v in report.decode_steps.items()},
        "apply_seconds": _number(report.apply_seconds),
        "ddl": list(report.ddl),
    }
    if progress is None:
        return {**out, "time": None, "input_rows_per_second": None, "processed_rows_per_second": None, "lag": None}
    lags = [source_lag(s.endOffset, s.latestOffset) for s in progress.sources]
    known = [lag for lag in lags if lag is not None]
    merged: dict[str, dict[str, int]] = {}
    for lag in known:
        for topic, partitions in lag.items():
            merged.setdefault(topic, {}).update(partitions)
    return {
        **out,
        "time": progress.timestamp,
        "input_rows_per_second": _number(progress.inputRowsPerSecond),
        "processed_rows_per_second": _number(progress.processedRowsPerSecond),
        "trigger_ms": dict(progress.durationMs),
        "lag": merged if known else None,
        "lag_total": sum(n for partitions in merged.values() for n in partitions.values()) if known else None,
    }


class JsonProgress:
    """The ``progress`` callback of a job that writes one JSON object per batch, once Spark's listener has
    reported the same batch (or, for the last batches, when the run ends without it)."""

    def __init__(self, spark: SparkSession, query_name: str, out: IO[str]) -> None:
        from pyspark.sql.streaming.listener import StreamingQueryListener

        self._spark, self._name, self._out = spark, query_name, out
        self._reports: dict[int, BatchReport] = {}
        self._progress: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._ended = threading.Event()
        owner = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                owner._ended.clear()

            def onQueryProgress(self, event: Any) -> None:
                owner.progressed(event.progress)

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                owner._ended.set()

        self._listener = Listener()
        spark.streams.addListener(self._listener)

    def __call__(self, report: BatchReport) -> None:
        with self._lock:
            self._reports[report.batch_id] = report
            self._write_ready()

    def progressed(self, progress: Any) -> None:
        if progress.name != self._name:
            return
        with self._lock:
            if progress.batchId in self._reports:  # the batch function reports before the batch commits
                self._progress[progress.batchId] = progress
            self._write_ready()

    def _write_ready(self) -> None:
        for batch in sorted(set(self._reports) & set(self._progress)):
            self._write(record(self._reports.pop(batch), self._progress.pop(batch)))

    def _write(self, document: Mapping[str, Any]) -> None:
        self._out.write(json.dumps(document, sort_keys=False, separators=(",", ":")) + "\n")
        self._out.flush()

    def close(self, wait_s: float = TERMINATION_WAIT_S) -> None:
        """Wait for the query's last progress (it comes after the run returns), then write what is left."""
        if self._reports:
            self._ended.wait(wait_s)
        with self._lock:
            for batch in sorted(self._reports):
                self._write(record(self._reports.pop(batch), self._progress.pop(batch, None)))
        self._spark.streams.removeListener(self._listener)


@contextlib.contextmanager
def progress_output(
    spark: SparkSession, config: JobConfig, settings: Settings
) -> Iterator[Callable[[BatchReport], None] | None]:
    """The job's progress callback for ``--progress``/``--progress-file``/``--quiet`` (closed at the end)."""
    from cdc_spark.job import describe, query_name

    chosen = "none" if settings.quiet else (settings.progress or "text")
    if chosen not in PROGRESS_FORMATS:
        raise ConfigError(f"progress {chosen!r}: expected one of {', '.join(PROGRESS_FORMATS)}")
    if chosen == "none":
        yield None
        return
    with contextlib.ExitStack() as stack:
        out: IO[str] = sys.stdout
        if settings.progress_file:
            try:
                out = stack.enter_context(open(settings.progress_file, "a", encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(f"progress-file {settings.progress_file!r}: {exc.strerror}") from None
        if chosen == "text":
            yield lambda report: print(describe(report), file=out, flush=True)
            return
        emitter = JsonProgress(spark, query_name(config), out)
        try:
            yield emitter
        finally:
            emitter.close()


def prometheus(document: Mapping[str, Any], prefix: str = "cdc_apply") -> str:
    """One progress object in Prometheus' text exposition format (gauges of the last batch)."""
    lines: list[str] = []

    def gauge(name: str, value: Any, labels: Mapping[str, str] | None = None, help_text: str = "") -> None:
        if value is None:
            return
        metric = f"{prefix}_{name}"
        if help_text and not any(line.startswith(f"# HELP {metric} ") for line in lines):
            lines.extend([f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"])
        rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in (labels or {}).items())
        lines.append(f"{metric}{{{rendered}}} {value}" if rendered else f"{metric} {value}")

    gauge("batch", document.get("batch"), help_text="id of the last batch")
    gauge("batch_messages", document.get("messages"), help_text="messages read by the last batch")
    gauge("batch_seconds", document.get("seconds"), help_text="wall time of the last batch")
    gauge("messages_per_second", document.get("messages_per_second"), help_text="rate of the last batch")
    gauge("decode_seconds", document.get("decode_seconds"), help_text="decode time of the last batch")
    gauge("apply_seconds", document.get("apply_seconds"), help_text="apply time of the last batch")
    gauge("dead_letters", document.get("dead_letters"), help_text="dead letters of the last batch")
    for table, ops in sorted((document.get("tables") or {}).items()):
        for op, count in sorted(ops.items()):
            gauge("batch_rows", count, {"table": table, "op": op}, "rows applied by the last batch")
    for topic, partitions in sorted((document.get("lag") or {}).items()):
        for partition, behind in sorted(partitions.items()):
            gauge("lag_messages", behind, {"topic": topic, "partition": partition}, "messages behind the source")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def last_record(lines: Sequence[str]) -> dict[str, Any] | None:
    for line in reversed(lines):
        if line.strip():
            document: dict[str, Any] = json.loads(line)
            return document
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cdc_spark.metrics FILE``: the last progress object of FILE for Prometheus."""
    parser = argparse.ArgumentParser(prog="python -m cdc_spark.metrics", description=main.__doc__)
    parser.add_argument("file", help="a --progress-file of cdc apply --progress json")
    parser.add_argument("--prefix", default="cdc_apply", help="metric name prefix (default cdc_apply)")
    args = parser.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8") as handle:
            document = last_record(handle.readlines())
    except (OSError, ValueError) as exc:
        print(f"cdc_spark.metrics: {args.file}: {exc}", file=sys.stderr)
        return 2
    if document is not None:
        sys.stdout.write(prometheus(document, args.prefix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
