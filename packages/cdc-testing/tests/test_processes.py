"""``stop_process``: a server that honours SIGTERM stops at once, one that ignores it is killed after the wait."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from cdc_testing.processes import ServerProcess, log_tail, stop_process

_IGNORES_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
)


def test_terminated_process_stops_within_the_timeout() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop_process(process, timeout=10)
    assert process.returncode == -signal.SIGTERM


def test_process_ignoring_sigterm_is_killed_after_the_timeout() -> None:
    process = subprocess.Popen([sys.executable, "-c", _IGNORES_TERM], stdout=subprocess.PIPE)
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"  # the handler is in place before we signal
    started = time.monotonic()
    stop_process(process, timeout=0.5)
    assert process.returncode == -signal.SIGKILL
    assert time.monotonic() - started >= 0.5
    process.stdout.close()


def test_no_process_or_an_exited_one_is_left_alone() -> None:
    stop_process(None, timeout=1)
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait()
    stop_process(process, timeout=1)
    assert process.returncode == 3


def test_log_tail_reads_the_ends_of_existing_logs(tmp_path: Path) -> None:
    first, missing, second = tmp_path / "a.log", tmp_path / "none.log", tmp_path / "b.log"
    first.write_text("x" * 10 + "END-A")
    second.write_text("END-B")
    assert log_tail([first, missing, second], chars=5) == "END-A\nEND-B"


class _Sleeper(ServerProcess):
    stop_timeout_s = 10.0

    def start(self) -> None:
        script = "import os, sys, time; print('in', os.getcwd(), file=sys.stderr, flush=True); time.sleep(60)"
        self._spawn([sys.executable, "-c", script])


def test_server_process_stop_keeps_its_directory_and_close_removes_it() -> None:
    server = _Sleeper("cdc-test-sleeper-")
    server.start()
    assert server.running and server.home.is_dir()
    (server.home / "server.log").write_text("kept")
    deadline = time.monotonic() + 30
    while not server.stderr_log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.stderr_log.read_text() == f"in {server.home}\n"  # run in its home, stderr to its log
    server.stop()
    assert not server.running and (server.home / "server.log").read_text() == "kept"
    server.start()  # again, on the same directory
    assert server.running
    server.close()
    assert not server.running and not server.home.exists()
