"""Hadoop's local file system without a process started per file, for the sessions of a local master.

Spark does not ship Hadoop's native library, and without it Hadoop's local file system runs a process for work a
system call does: ``chmod`` for every file it creates with a permission (each Parquet part, each checksum file,
each Delta commit) and ``readlink`` twice for every rename through ``FileContext`` (each Delta commit and checksum,
each streaming checkpoint file). A small batch of three Delta tables started about a hundred such processes, a few
milliseconds each on the driver, and every test of the suite that writes a table paid them too.

A local session (``local``, ``local[N]``) therefore maps the ``file:`` scheme to the classes of ``cdc/spark/fs``
(``spark.hadoop.fs.file.impl``, ``spark.hadoop.fs.AbstractFileSystem.file.impl``): Hadoop's own checksummed local
file system, with those two answers given through ``java.nio`` and the same results (a sticky bit or a path that is
a link still goes through Hadoop's own code). Their jar is on the driver's class path from the JVM's start
(``spark.driver.extraClassPath``): ``spark-submit`` looks ``spark.jars`` up through the file system before any jar
is loaded. The jar holds those three classes only, so the rest of the project's Java is loaded as before
(:mod:`cdc_spark.runtime.java_code`). Nothing changes where the user sets either file-system setting or the
driver's class path, on a cluster (its executors start JVMs of their own), or where the jar cannot be compiled (no
JDK): Hadoop's defaults stay. Measured in ``docs/spark.md`` ("Local files without a process each").
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Final

from cdc_spark.runtime import java_code
from cdc_spark.runtime.class_sharing import DRIVER_CLASS_PATH

FILE_SYSTEM: Final = "spark.hadoop.fs.file.impl"
ABSTRACT_FILE_SYSTEM: Final = "spark.hadoop.fs.AbstractFileSystem.file.impl"
CLASSES: Final = {
    FILE_SYSTEM: "cdc.spark.fs.NoShellLocalFileSystem",
    ABSTRACT_FILE_SYSTEM: "cdc.spark.fs.NoShellLocalFs",
}
PACKAGE: Final = java_code.LOCAL_FILES_PACKAGE
_LOG = logging.getLogger(__name__)


def local_file_settings(given: Mapping[str, str]) -> dict[str, str]:
    """The settings that map ``file:`` to the classes of :data:`PACKAGE` with their jar on the driver's class path;
    empty where the user set any of them or the jar cannot be made here."""
    if FILE_SYSTEM in given or ABSTRACT_FILE_SYSTEM in given or DRIVER_CLASS_PATH in given:
        return {}
    try:
        path = java_code.jar(PACKAGE)  # looked up on the module at each call: tests put a JDK-less jar there
    except java_code.JavaCodeError as exc:
        _LOG.info("Hadoop's local file system is used as it is: %s", exc)
        return {}
    if os.pathsep in str(path):
        return {}  # a class path entry cannot hold its separator
    return {**CLASSES, DRIVER_CLASS_PATH: str(path)}


__all__ = ["ABSTRACT_FILE_SYSTEM", "CLASSES", "DRIVER_CLASS_PATH", "FILE_SYSTEM", "PACKAGE", "local_file_settings"]
