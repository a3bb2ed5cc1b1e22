"""The JVM artifacts the project runs, pinned in one file (``jvm.toml`` beside this module), and their resolution.

``jvm.toml`` names Spark's connectors (Kafka source, Avro, Delta Lake, Iceberg) and the bundles that tests and the
demo run (Apache Kafka, Apicurio Registry, ...). :func:`classpath` resolves a bundle with the machine's own Maven:
a generated POM in the cache directory (``CDC_JVM_CACHE``, default ``~/.cache/cdc-jvm``),
``mvn dependency:build-classpath`` fetching what is missing into the local Maven repository, the classpath reused
until the bundle's artifacts change. A bundle published as one archive (an application with its own ``lib/``)
names it as ``archive`` instead: :func:`unpacked` fetches it with ``mvn dependency:copy`` and unpacks it into the
cache once. ``python -m cdc_core.jvm warm`` resolves every bundle up front and prints what each weighs.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import IO, Any, Final
from xml.sax.saxutils import escape

import attrs

from cdc_core.errors import CdcError, ConfigError

ARTIFACTS_FILE: Final = "jvm.toml"
CACHE_ENV: Final = "CDC_JVM_CACHE"
RESOLVE_TIMEOUT_S: Final = 1800.0


class JvmUnavailableError(CdcError, RuntimeError):
    """Java or Maven is missing, or Maven could not resolve a bundle (the message says which and why)."""


@attrs.frozen
class Coordinate:
    """A Maven coordinate ``group:artifact[:packaging[:classifier]]:version``."""

    group: str
    artifact: str
    version: str
    packaging: str = "jar"
    classifier: str | None = None

    @classmethod
    def parse(cls, text: str) -> Coordinate:
        parts = text.split(":")
        if len(parts) == 3:
            return cls(parts[0], parts[1], parts[2])
        if len(parts) == 4:
            return cls(parts[0], parts[1], parts[3], packaging=parts[2])
        if len(parts) == 5:
            return cls(parts[0], parts[1], parts[4], packaging=parts[2], classifier=parts[3])
        raise ConfigError(f"{ARTIFACTS_FILE}: {text!r} is not group:artifact[:packaging[:classifier]]:version")

    def __str__(self) -> str:
        middle = "" if self.packaging == "jar" and self.classifier is None else f":{self.packaging}"
        middle += f":{self.classifier}" if self.classifier else ""
        return f"{self.group}:{self.artifact}{middle}:{self.version}"

    @property
    def dependency_plugin_form(self) -> str:
        """``group:artifact:version[:packaging[:classifier]]``, the order ``mvn dependency:copy -Dartifact`` takes."""
        tail = f":{self.packaging}" + (f":{self.classifier}" if self.classifier else "")
        return f"{self.group}:{self.artifact}:{self.version}{tail}"


@attrs.frozen(kw_only=True)
class Bundle:
    """Artifacts resolved together into one classpath, and the class to run if the bundle is a program; or one
    ``archive`` to unpack (an application laid out with its own libraries)."""

    name: str
    artifacts: tuple[Coordinate, ...] = ()
    archive: Coordinate | None = None
    main: str | None = None
    options: dict[str, Any] = attrs.field(factory=dict)  # bundle-specific settings (e.g. the jar to run in an archive)


@functools.cache
def _document() -> dict[str, Any]:
    text = resources.files("cdc_core").joinpath(ARTIFACTS_FILE).read_text(encoding="utf-8")
    document: dict[str, Any] = tomllib.loads(text)
    return document


def spark_version() -> str:
    """The Spark version the connectors are built for (pyspark is pinned to it)."""
    version: str = _document()["spark"]["version"]
    return version


def bundle_names() -> tuple[str, ...]:
    return tuple(_document().get("bundles", {}))


def bundle(name: str) -> Bundle:
    """One bundle of ``jvm.toml``; an unknown name is a :class:`ConfigError` listing the known ones."""
    bundles: dict[str, dict[str, Any]] = _document().get("bundles", {})
    entry = bundles.get(name)
    if entry is None:
        raise ConfigError(f"no JVM bundle {name!r} in {ARTIFACTS_FILE}; known: {', '.join(sorted(bundles))}")
    if ("artifacts" in entry) == ("archive" in entry):
        raise ConfigError(f"{ARTIFACTS_FILE}: bundle {name!r} needs either artifacts or an archive")
    options = {k: v for k, v in entry.items() if k not in ("artifacts", "archive", "main")}
    return Bundle(
        name=name,
        artifacts=tuple(Coordinate.parse(a) for a in entry.get("artifacts", ())),
        archive=Coordinate.parse(entry["archive"]) if "archive" in entry else None,
        main=entry.get("main"),
        options=options,
    )


def spark_packages() -> tuple[str, ...]:
    """Spark's connectors (Kafka, Avro, Delta Lake, Iceberg) as ``spark.jars.packages`` takes them."""
    return tuple(str(c) for c in bundle("spark").artifacts)


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "cdc-jvm"


def jdk_executable(name: str) -> str:
    """``$JAVA_HOME/bin/<name>``, else ``<name>`` on PATH (``java``, ``javac``...)."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / name if home else None
    if candidate is not None and candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise JvmUnavailableError(f"no {name} on PATH (and JAVA_HOME unset): install a JDK 17")
    return found


def java_executable() -> str:
    """``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    return jdk_executable("java")


def maven_available() -> bool:
    return shutil.which("mvn") is not None


def _pom(resolved: Bundle) -> str:
    dependencies = []
    for c in resolved.artifacts:
        extra = "" if c.packaging == "jar" else f"<type>{escape(c.packaging)}</type>"
        extra += f"<classifier>{escape(c.classifier)}</classifier>" if c.classifier else ""
        dependencies.append(
            f"    <dependency><groupId>{escape(c.group)}</groupId><artifactId>{escape(c.artifact)}</artifactId>"
            f"<version>{escape(c.version)}</version>{extra}</dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        f"  <groupId>cdc.jvm</groupId><artifactId>{escape(resolved.name)}</artifactId><version>0</version>\n"
        "  <dependencies>\n" + "\n".join(dependencies) + "\n  </dependencies>\n</project>\n"
    )


def bundle_dir(resolved: Bundle) -> Path:
    """The bundle's cache directory, named by a digest of its POM and archive (a version change gets a new one)."""
    digest = hashlib.sha256((_pom(resolved) + str(resolved.archive or "")).encode()).hexdigest()[:16]
    return cache_root() / f"{resolved.name}-{digest}"


def run_maven(pom_dir: Path, goals: Sequence[str], what: str) -> None:
    """Run Maven on ``pom_dir/pom.xml``; a failure is a :class:`JvmUnavailableError` with Maven's last lines."""
    maven = shutil.which("mvn")
    if maven is None:
        raise JvmUnavailableError("no mvn on PATH: install Maven 3.8+ to fetch the JVM parts from Maven Central")
    command = [maven, "-q", "-B", "-f", str(pom_dir / "pom.xml"), *goals]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RESOLVE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise JvmUnavailableError(f"Maven did not resolve {what} within {RESOLVE_TIMEOUT_S:.0f} s") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise JvmUnavailableError(f"Maven could not resolve {what} (exit {done.returncode}):\n{tail}")


def classpath(name: str) -> list[Path]:
    """The jars of bundle ``name`` with all their dependencies, resolved once and then read from the cache."""
    resolved = bundle(name)
    if resolved.archive is not None:
        raise ConfigError(f"JVM bundle {name!r} is an archive, not a classpath: use unpacked({name!r})")
    folder = bundle_dir(resolved)
    listing = folder / "classpath.txt"
    if not listing.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "pom.xml").write_text(_pom(resolved), encoding="utf-8")
        partial = folder / f"classpath.{os.getpid()}.tmp"
        run_maven(folder, ["dependency:build-classpath", f"-Dmdep.outputFile={partial}"], f"bundle {name}")
        partial.replace(listing)  # atomic: a concurrent resolver sees no list or the whole list
    jars = [Path(p) for p in listing.read_text(encoding="utf-8").strip().split(os.pathsep) if p]
    if any(not j.exists() for j in jars):  # the local repository was cleaned since: resolve again
        listing.unlink()
        return classpath(name)
    return jars


def unpacked(name: str) -> Path:
    """The directory holding bundle ``name``'s archive unpacked: fetched with Maven and unpacked once, then reused.

    Maven copies the archive (``dependency:copy``, no dependencies: the archive carries its own) into a staging
    directory beside the target; it is unpacked there (tar formats, members confined to the directory) and
    renamed into place, so a concurrent caller sees no directory or the whole one. The copy is removed after
    unpacking (the local Maven repository keeps the original).
    """
    resolved = bundle(name)
    if resolved.archive is None:
        raise ConfigError(f"JVM bundle {name!r} is a classpath, not an archive: use classpath({name!r})")
    folder = bundle_dir(resolved)
    target = folder / "unpacked"
    if target.is_dir():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pom.xml").write_text(_pom(resolved), encoding="utf-8")  # a project for Maven to run in
    staging = Path(tempfile.mkdtemp(prefix="staging-", dir=folder))
    try:
        goals = [
            "dependency:copy",
            f"-Dartifact={resolved.archive.dependency_plugin_form}",
            f"-DoutputDirectory={staging}",
        ]
        run_maven(folder, goals, f"bundle {name} ({resolved.archive})")
        (archive,) = staging.iterdir()
        content = staging / "content"
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(content, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise JvmUnavailableError(f"cannot unpack {resolved.archive} ({archive.name}): {exc}") from exc
        archive.unlink()
        try:
            content.rename(target)
        except OSError:
            if not target.is_dir():  # not a concurrent unpacker that finished first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def warm(names: Sequence[str] | None = None, out: IO[str] | None = None) -> dict[str, tuple[int, int]]:
    """Resolve bundles (default: all); returns and prints ``name -> (files, bytes)``."""
    figures: dict[str, tuple[int, int]] = {}
    for name in names or bundle_names():
        started = time.monotonic()
        if bundle(name).archive is not None:
            files = [f for f in unpacked(name).rglob("*") if f.is_file()]
            what = "files unpacked"
        else:
            files = classpath(name)
            what = "jars"
        size = sum(f.stat().st_size for f in files)
        figures[name] = (len(files), size)
        print(
            f"jvm bundle {name}: {len(files)} {what}, {size / 2**20:.1f} MiB ({time.monotonic() - started:.1f} s)",
            file=out or sys.stdout,
            flush=True,
        )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdc_core.jvm", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    warm_parser = commands.add_parser("warm", help="resolve bundles into the local Maven repository")
    warm_parser.add_argument("bundles", nargs="*", help="bundle names (default: every bundle)")
    commands.add_parser("classpath", help="print one bundle's classpath").add_argument("bundle")
    commands.add_parser("unpacked", help="print where an archive bundle is unpacked").add_argument("bundle")
    args = parser.parse_args(argv)
    try:
        if args.command == "warm":
            warm(args.bundles)
        elif args.command == "unpacked":
            print(unpacked(args.bundle))
        else:
            print(os.pathsep.join(str(j) for j in classpath(args.bundle)))
    except CdcError as exc:
        print(f"cdc_core.jvm: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "Bundle",
    "Coordinate",
    "JvmUnavailableError",
    "bundle",
    "bundle_names",
    "classpath",
    "java_executable",
    "jdk_executable",
    "maven_available",
    "spark_packages",
    "spark_version",
    "unpacked",
    "warm",
]
