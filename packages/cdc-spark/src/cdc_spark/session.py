"""The Spark session the pipeline runs in: Spark's own connectors, Delta Lake and Iceberg, sane local defaults.

:func:`build_session` is what ``cdc apply``, the demo and the tests use. It adds only what the user has not set:

* **Connectors** pinned in ``cdc_core/jvm.toml`` (Kafka source, Avro, Delta Lake, Iceberg), unless
  ``spark.jars.packages`` or ``spark.jars`` is already configured. With a local master and Maven on the machine,
  Maven resolves them (through ``~/.m2`` and its ``settings.xml``, once, then cached) and Spark gets the jar files
  (``spark.jars``) minus those Spark ships itself; otherwise Spark's Ivy resolves the coordinates
  (``spark.jars.packages``), as ``spark-submit --packages`` does on a cluster.
* **Table formats**: Delta's and Iceberg's SQL extensions, and Delta's catalog as the session catalog, so
  ``MERGE INTO delta.`path``` and Iceberg catalogs work (the Iceberg sink registers its own catalog).
* **Generated code kept between micro-batches**: a codegen cache of 4,000 classes (Spark's default is 100).
* **A local master** (``local[N]``, also the default when nothing names one): shuffle partitions follow the cores,
  adaptive execution on, no UI and no console progress bar, Spark's logs at WARN.
* **Memory pages below G1's humongous size** in a local driver (:mod:`cdc_spark.runtime.memory_pages`): a quarter of the
  heap's G1 region, 256 KB up to a 2 GB driver, where Spark's default is 8-64 MB.
* **A class-sharing archive** for the driver JVM of a local master, once ``python -m cdc_spark.class_archive`` has
  made one for these connectors (:mod:`cdc_spark.runtime.class_sharing`): a cold start maps the classes instead of
  loading them.
* **Local files without a process each** (a local master): Hadoop's local file system, without its native
  library, starts a ``chmod`` or ``readlink`` process for each file a Delta commit or a Parquet write makes; the
  session maps ``file:`` to the project's classes that answer the same through ``java.nio``, their jar on the
  driver's class path (:mod:`cdc_spark.runtime.local_files`).
* **Large generated methods compiled** (``-XX:-DontCompileHugeMethods``) in the JVMs of a local master, unless the
  user sets their options: the decode's typing is one such method per batch (:mod:`cdc_spark.runtime.jit`). A cluster's
  JVM options are the platform's (``spark-defaults.conf``) and are not replaced; add the option there.
* **No file-list rebuild after each Delta commit off UTC**: where the session's or the JVM's time zone is not UTC,
  Delta checks the file list each commit's checksum carries against a full rebuild of the table's state (a Spark
  job) after *every* commit (pre-1883 timestamps in its statistics serialize differently there); in UTC it checks
  at each checkpoint only. The session turns the every-commit check off (``CRC_CHECK_OFF_UTC``), so a driver on a
  machine set to local time pays what one in UTC does: a Spark job less per table and batch (75 jobs to 71 in a
  small batch of 3 tables). The check at each checkpoint stays, and Spark's reads never use that list.
* **Python workers** run this interpreter when ``PYSPARK_PYTHON`` is unset, so a job started by absolute path (cron,
  a scheduler, no virtualenv on ``PATH``) finds its packages in the workers too.

On a cluster (``spark-submit`` or a platform that starts the session), the master and whatever the platform sets
win: nothing here overrides a setting that is already present.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from cdc_core.errors import CdcError
from cdc_core.jvm import classpath, maven_available, spark_packages
from cdc_spark.runtime.class_sharing import DRIVER_OPTIONS, connectors_of, driver_options
from cdc_spark.runtime.java_names import keep_pyspark_names
from cdc_spark.runtime.jit import COMPILE_HUGE_METHODS, EXECUTOR_OPTIONS, with_huge_methods
from cdc_spark.runtime.local_files import local_file_settings
from cdc_spark.runtime.masters import local_cores
from cdc_spark.runtime.memory_pages import DRIVER_MEMORY, DRIVER_MEMORY_ENV, PAGE_SIZE, local_page_size

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final = "local[*]"
EXTENSIONS: Final = (
    "io.delta.sql.DeltaSparkSessionExtension",
    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
)
SESSION_CATALOG: Final = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
CODEGEN_CACHE: Final = "spark.sql.codegen.cache.maxEntries"
CODEGEN_CACHE_ENTRIES: Final = "4000"
DATAFRAME_DEBUGGING: Final = "spark.python.sql.dataFrameDebugging.enabled"
CRC_CHECK_OFF_UTC: Final = "spark.databricks.delta.allFilesInCrc.verificationMode.forceOnNonUTC.enabled"


def session_settings(master: str | None, user: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings :func:`build_session` adds for ``master`` given what the user already set (``user``)."""
    given = dict(user or {})
    settings: dict[str, str] = {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.extensions": ",".join(EXTENSIONS),
        "spark.sql.catalog.spark_catalog": SESSION_CATALOG,
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.showConsoleProgress": "false",
        # Every micro-batch plans the same statements again (resolve, MERGE, Delta's own queries): with Spark's
        # default cache of 100 generated classes they evict each other and each batch spent most of its driver
        # time compiling code it had compiled before (about 75 classes per table and batch).
        CODEGEN_CACHE: CODEGEN_CACHE_ENTRIES,
        # PySpark's call-site capture for error contexts costs five py4j calls around every Column function (a
        # frame walk and a failed IPython import each); apply builds hundreds of columns per table and batch
        DATAFRAME_DEBUGGING: "false",
        # Delta's check of each commit's file list against a state rebuild where the time zone is not UTC
        # (module doc): the check at each checkpoint, as in UTC, is enough
        CRC_CHECK_OFF_UTC: "false",
    }
    if "spark.jars.packages" not in given and "spark.jars" not in given:
        if master is not None and master.startswith("local") and maven_available():
            settings["spark.jars"] = ",".join(connector_jars())
        else:
            settings["spark.jars.packages"] = ",".join(spark_packages())
    if master is not None:
        cores = local_cores(master)
        if cores is not None:
            settings["spark.sql.shuffle.partitions"] = str(cores)
            settings["spark.default.parallelism"] = str(cores)
            settings["spark.ui.enabled"] = "false"
            # Delta rebuilds a table's file list with this many tasks (default 50: one tiny task per core is
            # enough for the tables one machine writes)
            settings["spark.databricks.delta.snapshotPartitions"] = str(cores)
            page = local_page_size(given.get(DRIVER_MEMORY) or os.environ.get(DRIVER_MEMORY_ENV))
            if page is not None:
                settings[PAGE_SIZE] = page
            settings.update(local_file_settings(given))
        elif master.startswith("local-cluster"):
            settings["spark.sql.shuffle.partitions"] = "4"
            settings["spark.databricks.delta.snapshotPartitions"] = "4"
            settings["spark.ui.enabled"] = "false"
    if master is not None and master.startswith("local"):  # JVMs this session starts; a cluster's are its own
        sharing = driver_options(master, given, connectors_of({**settings, **given}))
        settings[DRIVER_OPTIONS] = with_huge_methods(sharing)
        settings[EXECUTOR_OPTIONS] = COMPILE_HUGE_METHODS
    return {k: v for k, v in settings.items() if k not in given}


def _artifact_name(jar: str) -> str:
    """``jackson-core-2.13.5.jar`` -> ``jackson-core``: the name without version, to spot a jar Spark ships."""
    stem = jar.removesuffix(".jar")
    parts = stem.split("-")
    for index, part in enumerate(parts):
        if index and part[:1].isdigit():
            return "-".join(parts[:index])
    return stem


def connector_jars() -> list[str]:
    """The connectors' jars with their dependencies, resolved by Maven, minus the libraries Spark ships."""
    import pyspark

    shipped_dir = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    shipped = {_artifact_name(name) for name in os.listdir(shipped_dir)} if os.path.isdir(shipped_dir) else set()
    return [str(jar) for jar in classpath("spark") if _artifact_name(jar.name) not in shipped]


def _submitted() -> bool:
    """Whether this driver was launched by spark-submit (which owns the master and the jars)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


class SparkStartError(CdcError, RuntimeError):
    """The driver JVM exited before the session started (its own reason is on stderr just above)."""


def _start(builder: SparkSession.Builder, master: str | None, user: Mapping[str, str]) -> SparkSession:
    from pyspark.errors import PySparkRuntimeError

    try:
        return builder.getOrCreate()
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        given = sorted(k for k in user if k.startswith(("spark.driver.", "spark.jars")))
        hint = f"; the settings given for it: {', '.join(given)}" if given else ""
        raise SparkStartError(
            f"the Spark driver JVM (master {master or 'from spark-submit'}) exited before the session started; "
            f"its reason is printed above (JAVA_HOME, the java on PATH, driver JVM options){hint}"
        ) from exc


def build_session(
    master: str | None = None,
    app_name: str = "cdc",
    conf: Mapping[str, str] | None = None,
    log_level: str = "WARN",
) -> SparkSession:
    """The active session if there is one, else a new one configured as the module docstring says.

    ``conf`` is the user's own settings; they win over every default here.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master is None and not _submitted():
        master = DEFAULT_MASTER
    user = dict(conf or {})
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in {**session_settings(master, user), **user}.items():
        builder = builder.config(key, value)
    session = _start(builder, master, user)
    session.sparkContext.setLogLevel(log_level)
    keep_pyspark_names(session._jvm)
    return session


__all__ = ["SparkStartError", "build_session", "connector_jars", "local_cores", "session_settings"]
