"""What every server a test starts (Kafka, Connect, Canal, Apicurio, the databases) does with its process."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

KILL_WAIT_S = 10.0
# The JIT's first tier only and the serial collector: a test's server starts sooner and spends less of two shared
# cores compiling code it runs briefly. A Kafka broker then Kafka Connect with Debezium, started in turn: 3.4-3.8 s
# and 4.5 s against 4.4 s and 6.3-6.6 s, 11 s of CPU against 20-21 s (docs/development.md).
FIRST_TIER_ONLY: Final = "-XX:TieredStopAtLevel=1"
SERVER_JVM_FLAGS: Final = (FIRST_TIER_ONLY, "-XX:+UseSerialGC")
# The variable spark-submit reads a driver's JVM options from: set for the tests' short runs, passed to processes.
SUBMIT_OPTIONS_ENV: Final = "SPARK_SUBMIT_OPTS"


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """Ask ``process`` to stop (SIGTERM, a server's controlled shutdown) and wait up to ``timeout`` seconds, then
    kill it; one that never ran or has already exited is left alone. Files it wrote (logs, data) stay."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=KILL_WAIT_S)


def log_tail(paths: Iterable[Path], chars: int) -> str:
    """The last ``chars`` characters of each log in ``paths`` that exists, for an error message."""
    return "\n".join(p.read_text(errors="replace")[-chars:] for p in paths if p.exists())


class ServerProcess:
    """One server process with a temporary directory of its own (configuration, data, logs).

    :meth:`stop` ends the process and keeps the directory (a server can start again on its data, a failed test
    can read its log); :meth:`close` also removes the directory.
    """

    stop_timeout_s = 30.0  # how long a controlled shutdown may take before the kill

    def __init__(self, prefix: str) -> None:
        self.home = Path(tempfile.mkdtemp(prefix=prefix))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def stderr_log(self) -> Path:
        return self.home / "stderr.log"

    def _spawn(self, command: Sequence[str], **options: Any) -> None:
        """Start ``command`` in the home directory, stdout discarded, stderr appended to :attr:`stderr_log`
        (``options``: more of :class:`subprocess.Popen`'s, such as the user to run as)."""
        with self.stderr_log.open("ab") as stderr:  # the child keeps its own descriptor
            self._process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=stderr, cwd=self.home, **options
            )

    def stop(self) -> None:
        """Stop the process (SIGTERM, then a kill after ``stop_timeout_s``); the directory stays."""
        process, self._process = self._process, None
        stop_process(process, self.stop_timeout_s)

    def close(self) -> None:
        """Stop the process and remove its directory."""
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def serve_until_stopped(
    program: str, server: ServerProcess, start: Callable[[], str], unavailable: type[Exception]
) -> int:
    """A console script's life (``cdc-test-kafka``, ``cdc-test-registry``): start the server, print what ``start``
    returns (where it serves) as the first stdout line, and run until SIGTERM or SIGINT, then stop it and remove its
    data. Exit codes: 0 stopped, 1 the server exited by itself, 2 it could not start (``unavailable``)."""
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    try:
        try:
            first_line = start()
        except unavailable as exc:
            print(f"{program}: {exc}", file=sys.stderr)
            return 2
        print(first_line, flush=True)
        while not stopping.wait(0.5):
            if not server.running:
                print(f"{program}: the server exited", file=sys.stderr)
                return 1
    finally:
        server.close()
    return 0


__all__ = ["ServerProcess", "log_tail", "serve_until_stopped", "stop_process"]
