"""What every server a test starts (Kafka, Connect, Canal, Apicurio, the databases) does with its process."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

KILL_WAIT_S = 10.0


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


__all__ = ["log_tail", "stop_process"]
