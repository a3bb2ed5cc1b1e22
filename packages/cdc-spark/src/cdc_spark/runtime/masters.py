"""What a Spark master URL says about where the session's JVMs run."""

from __future__ import annotations

import os
import re
from typing import Final

_LOCAL: Final = re.compile(r"local(?:-cluster)?(?:\[(?P<threads>\*|\d+)(?:,\s*\d+)*(?:,\s*\d+)?\])?$")


def local_cores(master: str) -> int | None:
    """Worker threads of a local master (``local``, ``local[4]``, ``local[*]``); None for a cluster master."""
    match = _LOCAL.match(master.strip())
    if match is None or master.startswith("local-cluster"):
        return None
    threads = match.group("threads")
    if threads is None:
        return 1
    return os.cpu_count() or 1 if threads == "*" else int(threads)


def runs_in_driver(master: str) -> bool:
    """Whether the executors of ``master`` are the driver's own JVM (a local master, not ``local-cluster``)."""
    return local_cores(master) is not None


__all__ = ["local_cores", "runs_in_driver"]
