"""What every server a test starts (Kafka, Connect, Canal, Apicurio, the databases) does with its process."""

from __future__ import annotations

import subprocess

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


__all__ = ["stop_process"]
