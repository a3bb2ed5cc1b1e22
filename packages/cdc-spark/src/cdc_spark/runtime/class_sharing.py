"""A class-data-sharing archive for the driver JVM of a local session: a cold ``cdc apply`` starts faster.

A Spark driver with Delta, Iceberg, Kafka and Avro loads tens of thousands of classes before its first batch is
written; most of a 10-message ``cdc apply --once`` is that. The JDK can map those classes, already parsed and
verified, from an archive made by an earlier JVM with the same class path (dynamic CDS, JDK 13+).

``python -m cdc_spark.class_archive`` makes the archive once per install: a throwaway session on the connectors
:func:`cdc_spark.session.build_session` configures runs a small apply (a Delta table created, then merged into)
and dumps the classes it loaded when its JVM exits; the archive is moved into place only when that JVM is gone,
so a session never maps a half-written one. From then on :func:`cdc_spark.session.session_settings` starts every
local driver JVM with it (``spark.driver.extraJavaOptions``), unless the user sets that option, or
``CDC_CLASS_SHARING=off``. The archive's name is a digest of the pyspark installation's directory, then of the
Java executable, the pyspark version and the connector jars, so another environment, a new JDK, Spark or
connector set is never matched with an old archive (the JVM would refuse an archive whose class path differs and
start without it, silently). Archives live in ``<CDC_JVM_CACHE or ~/.cache/cdc-jvm>/class-sharing`` (about 200 MB
each); making one replaces the others of the same installation.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from cdc_core.jvm import JvmUnavailableError, cache_root, java_executable

SWITCH_ENV: Final = "CDC_CLASS_SHARING"  # "off" disables the archive
DRIVER_OPTIONS: Final = "spark.driver.extraJavaOptions"
DRIVER_CLASS_PATH: Final = "spark.driver.extraClassPath"
QUIET: Final = "-Xlog:cds*=off"  # an archive the JVM cannot use is skipped without a warning on stderr


def archive_dir() -> Path:
    return cache_root() / "class-sharing"


def _digest(text: str, size: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:size]


def install_prefix() -> str:
    """The start of the archive names of this pyspark installation: the JVM maps an archive only with the class
    path it was made with, and Spark's own jars are on that path from the installation's directory."""
    import pyspark

    return f"driver-{_digest(str(Path(pyspark.__file__).resolve().parent), 8)}-"


def archive_path(connectors: str) -> Path:
    """Where the archive for ``connectors`` (the session's ``spark.jars`` or ``spark.jars.packages``) lives."""
    import pyspark

    java = Path(java_executable()).resolve()
    stat = java.stat()
    identity = "|".join((str(java), str(stat.st_size), str(stat.st_mtime_ns), pyspark.__version__, connectors))
    return archive_dir() / f"{install_prefix()}{_digest(identity, 16)}.jsa"


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in ("off", "false", "0", "no")


def driver_options(master: str | None, given: Mapping[str, str], connectors: str) -> str | None:
    """The driver JVM options that map the archive, or None: not a local master, the user's own driver options,
    sharing switched off, or no archive made for these connectors yet."""
    if master is None or not master.startswith("local") or DRIVER_OPTIONS in given or not enabled() or not connectors:
        return None
    try:
        path = archive_path(connectors)
    except JvmUnavailableError:
        return None  # the session will say what is missing
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.is_file() else None


def connectors_of(settings: Mapping[str, str]) -> str:
    """What the archive is made for: the session's connector jars (``spark.jars``) or coordinates, and the driver's
    class path where it has entries of its own (the JVM maps an archive only with the class path it was made with;
    a local session's starts with the jar of :mod:`cdc_spark.runtime.local_files`)."""
    connectors = settings.get("spark.jars") or settings.get("spark.jars.packages") or ""
    class_path = settings.get(DRIVER_CLASS_PATH)
    return f"{connectors}|{class_path}" if connectors and class_path else connectors


__all__ = [
    "DRIVER_OPTIONS",
    "QUIET",
    "SWITCH_ENV",
    "archive_path",
    "connectors_of",
    "driver_options",
    "enabled",
    "install_prefix",
]
