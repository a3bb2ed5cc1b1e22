"""``python -m cdc_spark.class_archive``: make the driver JVM's class-sharing archive (see
:mod:`cdc_spark.runtime.class_sharing`, which finds and uses it).

A throwaway session with the connectors :func:`cdc_spark.session.build_session` gives a local master runs what a
first batch runs (JSON parsed, a Delta table created by an apply, then merged into); its JVM dumps the classes it
loaded as it exits, after the Python side is gone, so the archive is moved into place only once that JVM has
exited: no session maps a half-written archive. This installation's archives of other JDKs, Spark versions or
connector sets are removed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cdc_core.errors import CdcError
from cdc_spark.runtime.class_sharing import (
    DRIVER_OPTIONS,
    QUIET,
    SWITCH_ENV,
    archive_path,
    connectors_of,
    install_prefix,
)
from cdc_spark.session import build_session, session_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DUMP_TIMEOUT_S: Final = 600.0


class ClassSharingError(CdcError, RuntimeError):
    """The archive could not be made (the message says which step failed and why)."""


def _workload(spark: SparkSession, scratch: str) -> None:
    """What a first batch runs: JSON parsed, a Delta table created by an apply, then merged into by the next."""
    from pyspark.sql import functions as F

    from cdc_spark.apply import apply_changes
    from cdc_spark.sinks import BatchInfo

    seq = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
    schema = f"id int, name string, _cdc_op string, _cdc_sequence {seq}"
    parsed = spark.createDataFrame([('{"id": 1}',)], "j string").select(F.from_json("j", "id int").alias("d"))
    parsed.collect()
    for batch, rows in enumerate(([(1, "a", "insert", (1, 0, 0, 0))], [(1, "b", "update", (2, 0, 1, 0))])):
        frame = spark.createDataFrame(rows, schema)
        apply_changes(frame, scratch, keys=["id"], table="warm.t", batch=BatchInfo(app_id="warm", batch_id=batch))


def _dump(partial: Path, master: str) -> None:
    """In a child process: a session whose JVM dumps its classes to ``partial`` when it exits; prints its pid."""
    options = f"-XX:ArchiveClassesAtExit={partial} {QUIET}"
    spark = build_session(master, app_name="cdc-class-sharing", conf={DRIVER_OPTIONS: options}, log_level="ERROR")
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    with tempfile.TemporaryDirectory(prefix="cdc-class-sharing-") as scratch:
        _workload(spark, scratch)
    spark.stop()
    print(f"jvm-pid={pid}", flush=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def create(master: str = "local[2]") -> Path:
    """Make the archive for the connectors a local session gets (see the module doc); returns its path."""
    if not master.startswith("local"):
        raise ClassSharingError(f"master {master!r}: the archive is for drivers of a local master (local[N])")
    connectors = connectors_of(session_settings(master, {}))
    if not connectors:
        raise ClassSharingError("no connector jars to archive: the session builder found none")
    target = archive_path(connectors)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.stem}.{os.getpid()}.part")
    command = [sys.executable, "-m", "cdc_spark.class_archive", "--dump", str(partial), "--master", master]
    environment = {**os.environ, SWITCH_ENV: "off"}
    try:
        try:
            done = subprocess.run(
                command, check=False, capture_output=True, text=True, timeout=DUMP_TIMEOUT_S, env=environment
            )
        except subprocess.TimeoutExpired as exc:
            raise ClassSharingError(f"the archiving session did not end in {DUMP_TIMEOUT_S:.0f} s") from exc
        if done.returncode != 0:
            raise ClassSharingError(f"the archiving session failed ({done.returncode}): {done.stderr[-2000:]}")
        pids = [line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith("jvm-pid=")]
        if not pids:
            raise ClassSharingError(f"the archiving session did not report its JVM: {done.stdout[-2000:]}")
        pid, deadline = int(pids[-1]), time.monotonic() + DUMP_TIMEOUT_S
        while _alive(pid):  # the JVM writes the archive as it exits, after the Python side is gone
            if time.monotonic() > deadline:
                raise ClassSharingError(f"the archiving JVM (pid {pid}) did not exit in {DUMP_TIMEOUT_S:.0f} s")
            time.sleep(0.2)
        if not partial.is_file() or partial.stat().st_size == 0:
            raise ClassSharingError(f"the archiving JVM exited without writing {partial}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    for other in target.parent.glob(f"{install_prefix()}*.jsa"):  # this installation's older archives
        if other != target:
            other.unlink(missing_ok=True)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_spark.class_archive", description="Make the driver JVM's class-sharing archive."
    )
    parser.add_argument("--master", default="local[2]", help="the local master the archive is made with")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)  # the child process's own step
    args = parser.parse_args(argv)
    if args.dump is not None:
        _dump(args.dump, args.master)
        return 0
    started = time.monotonic()
    try:
        path = create(args.master)
    except CdcError as exc:
        print(f"class sharing: {exc}", file=sys.stderr)
        return 2
    size = path.stat().st_size / 2**20
    print(f"{path}: {size:,.0f} MiB in {time.monotonic() - started:.0f} s; local sessions start with it from now on")
    return 0


if __name__ == "__main__":
    sys.exit(main())
