"""The project's own Java code (``cdc_spark/java``), compiled on this machine against the running Spark's jars.

The sources ship inside the package; ``javac`` (a JDK's) compiles them against the jars pyspark ships, so the classes
always match the Spark they run in, and the jar is kept under ``<CDC_JVM_CACHE or ~/.cache/cdc-jvm>/java`` by a
digest of the sources, the pyspark version and the compiler, so it is made once per installation. :func:`install`
adds it to a session (``ADD JAR``: the driver's and the executors' class path) and says whether it could. The
classes of ``cdc/spark/fs`` make a jar of their own, which a local session starts with
(:mod:`cdc_spark.runtime.local_files`); the main jar leaves them out.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import tempfile
import threading
import weakref
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cdc_core.errors import CdcError
from cdc_core.jvm import JvmUnavailableError, cache_root, jdk_executable
from cdc_spark.runtime.java_names import static_method

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

SOURCES: Final = Path(__file__).parent.parent / "java"
COMPILE_TIMEOUT_S: Final = 300.0
_LOG = logging.getLogger(__name__)
# Per SparkContext (gone with its application): whether the jar is on its class path
_INSTALLED: Final[weakref.WeakKeyDictionary[SparkContext, bool]] = weakref.WeakKeyDictionary()
# per Python thread: the Spark contexts whose class loader its JVM thread has (jar_on_this_thread)
_THREAD: Final = threading.local()


class JavaCodeError(CdcError, RuntimeError):
    """The project's Java code could not be compiled (the message says why: no JDK, or the compiler's own words)."""


def javac() -> str:
    """``$JAVA_HOME/bin/javac``, else ``javac`` on PATH."""
    try:
        return jdk_executable("javac")
    except JvmUnavailableError as exc:
        raise JavaCodeError(f"{exc} (compiling cdc's Java code needs a JDK, not a JRE)") from exc


def _spark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


# Packages with a jar of their own, left out of the main one: the local file system's classes build on Hadoop
# internals, and a Hadoop that changed them must not take the decode's Java code down with them
LOCAL_FILES_PACKAGE: Final = "cdc/spark/fs"  # cdc_spark.runtime.local_files
OWN_JARS: Final = (LOCAL_FILES_PACKAGE,)


def _sources(package: str | None) -> list[Path]:
    if package:
        return sorted((SOURCES / package).rglob("*.java"))
    apart = [SOURCES / own for own in OWN_JARS]
    return sorted(s for s in SOURCES.rglob("*.java") if not any(s.is_relative_to(own) for own in apart))


def jar_path(compiler: str, package: str | None = None) -> Path:
    """Where the jar of these sources (only ``package``'s, e.g. ``cdc/spark/fs``, if named), this pyspark and
    ``compiler`` is kept."""
    import pyspark

    digest = hashlib.sha256(f"{pyspark.__version__}|{Path(compiler).resolve()}".encode())
    for source in _sources(package):
        digest.update(source.relative_to(SOURCES).as_posix().encode())
        digest.update(source.read_bytes())
    name = "-".join(("cdc-spark", *(package.split("/")[-1:] if package else ()), digest.hexdigest()[:16]))
    return cache_root() / "java" / f"{name}.jar"


def jar(package: str | None = None) -> Path:
    """The compiled jar (of ``package``'s sources only, if named), made now if this installation has none yet."""
    compiler = javac()
    target = jar_path(compiler, package)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cdc-java-", dir=target.parent) as scratch:
        classes = Path(scratch) / "classes"
        sources = [str(source) for source in _sources(package)]
        command = [compiler, "-nowarn", "-cp", f"{_spark_jars()}/*", "-d", str(classes), *sources]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise JavaCodeError(f"javac did not finish in {COMPILE_TIMEOUT_S:.0f} s") from exc
        if done.returncode != 0:
            raise JavaCodeError(f"javac failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
        partial = Path(scratch) / target.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for compiled in sorted(classes.rglob("*.class")):
                archive.write(compiled, compiled.relative_to(classes).as_posix())
        os.replace(partial, target)  # whole or not at all, for a session started meanwhile
    return target


def install(spark: SparkSession) -> bool:
    """Whether the session has the jar on its class path, added now if not (once per application); False, with
    one warning, where it cannot be compiled here."""
    context = spark.sparkContext
    if (known := _INSTALLED.get(context)) is not None:
        return known
    try:
        path = jar()
        if "'" in str(path):
            raise JavaCodeError(f"the jar's path {path} has a quote, which ADD JAR cannot take")
    except JavaCodeError as exc:
        _LOG.warning("cdc's Java code is not used: %s", exc)
        _INSTALLED[context] = False
        return False
    spark.sql(f"ADD JAR '{path}'")
    _INSTALLED[context] = True
    return True


def jar_on_this_thread(spark: SparkSession) -> None:
    """Make the session's class loader (which has the jar) this thread's in the JVM: the jar was added on the thread
    that installed it, and this one (a stream's batch callback, a table's worker) finds the classes through it.
    Done once per Python thread and Spark context where PySpark pins each Python thread to a JVM thread of its own
    (its default): five py4j calls, a decode made them about ten times a batch."""
    context = spark.sparkContext
    pinned = os.environ.get("PYSPARK_PIN_THREAD", "true").lower() != "false"
    done: weakref.WeakSet[SparkContext] | None = getattr(_THREAD, "contexts", None) if pinned else None
    if done is not None and context in done:
        return
    jvm = context._jvm
    assert jvm is not None
    static_method(jvm, "java.lang.Thread", "currentThread")().setContextClassLoader(
        spark._jsparkSession.sharedState().jarClassLoader()
    )
    if pinned:
        if done is None:
            done = _THREAD.contexts = weakref.WeakSet()
        done.add(context)


def callable_here(spark: SparkSession) -> bool:
    """Whether this thread can call the project's Java code in ``spark``: the jar installed (:func:`install`), then
    the session's class loader made this thread's (:func:`jar_on_this_thread`). False where the jar cannot be had."""
    if not install(spark):
        return False
    jar_on_this_thread(spark)
    return True


__all__ = [
    "LOCAL_FILES_PACKAGE",
    "OWN_JARS",
    "JavaCodeError",
    "callable_here",
    "install",
    "jar",
    "jar_on_this_thread",
    "jar_path",
    "javac",
]
