"""A Python worker's fixed cost per task, the part spent re-reading zip archives, removed.

PySpark's worker calls ``importlib.invalidate_caches()`` before every task, so that a job's shipped files are
seen. On CPython 3.10 to 3.12 that makes every zip importer re-read its archive's whole directory at once (CPython
issue 103200; 3.13 re-reads lazily), and Spark puts three archives on the worker's path: ``pyspark.zip``, py4j's
and spark-core's jar, about 7,000 entries, with an importer for each package imported from them. Measured on two
cores: 150-200 ms a task, half of a small ``mapInArrow`` job. In a worker, the project's modules make a zip
importer re-read its archive only when the file changed on disk (its size or modification time), which keeps what
invalidation is for.
"""

from __future__ import annotations

import functools
import os
import sys
import zipimport
from collections.abc import Callable
from typing import Final

# The stamp an importer last read its archive at, kept on the importer itself: each has its own directory.
STAMP_ATTRIBUTE: Final = "_cdc_archive_stamp"
PATCHED_MARK: Final = "_cdc_rereads_changed_archives_only"


def _stamp(archive: str) -> tuple[int, int] | None:
    try:
        status = os.stat(archive)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _rereading_changed_only(original: Callable[[zipimport.zipimporter], None]) -> Callable[..., None]:
    @functools.wraps(original)  # keeps the original as ``__wrapped__``
    def invalidate_caches(self: zipimport.zipimporter) -> None:
        stamp = _stamp(self.archive)
        if stamp is not None and getattr(self, STAMP_ATTRIBUTE, None) == stamp:
            return
        original(self)
        setattr(self, STAMP_ATTRIBUTE, stamp)

    setattr(invalidate_caches, PATCHED_MARK, True)
    return invalidate_caches


def reread_changed_archives_only() -> bool:
    """Make zip importers re-read an archive on invalidation only when it changed; whether it was done now (not
    before, and not on a Python that already re-reads lazily)."""
    if sys.version_info >= (3, 13):
        return False
    current = zipimport.zipimporter.invalidate_caches
    if getattr(current, PATCHED_MARK, False):
        return False
    zipimport.zipimporter.invalidate_caches = _rereading_changed_only(current)  # type: ignore[method-assign]
    return True


def in_python_worker() -> bool:
    """Whether this process is running a Spark task (a worker unpickling or running a function), not a driver."""
    from pyspark import TaskContext

    return TaskContext.get() is not None


def settle_worker() -> None:
    """Re-read changed archives only, in a Python worker; a driver's imports stay as Python has them."""
    if in_python_worker():
        reread_changed_archives_only()
