"""Java probes of the benchmarks (``java/``), compiled here with ``javac`` against the running Spark's jars."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest


def probe_jar(sources: Path, into: Path, name: str, classpath: Sequence[str] = ()) -> Path:
    """The ``*.java`` files of ``sources`` compiled against the jars pyspark ships and ``classpath``, as the jar
    ``into/name``; the benchmark is skipped where no JDK is at hand."""
    import pyspark

    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac (a JDK) is needed to compile the probes")
    classes = into / "classes"
    spark_jars = Path(pyspark.__file__).parent / "jars"
    path = os.pathsep.join([f"{spark_jars}/*", *classpath])
    files = [str(source) for source in sorted(sources.glob("*.java"))]
    subprocess.run([javac, "-nowarn", "-cp", path, "-d", str(classes), *files], check=True)
    jar = into / name
    with zipfile.ZipFile(jar, "w") as archive:
        for compiled in classes.rglob("*.class"):
            archive.write(compiled, compiled.relative_to(classes).as_posix())
    return jar
