"""Install what the tests run besides Python packages: a JDK 17 and Maven (the broker, the registry, Spark's
connectors and the project's Java code come from Maven Central through them), and the MariaDB and PostgreSQL
servers (with contrib) that the real-producer tests start from their binaries.

Run by ``nox`` before the sessions that need them (``nox -s tests`` all of it, ``demo`` and ``bench`` the JDK and
Maven), so that the README's test command works on a fresh Debian or Ubuntu machine. Only what is missing is
installed, with apt-get, as root or through ``sudo -n``; where that cannot be done (another system, no root) it
says what is missing and what provides it, and the run goes on: the tests that need a missing part are skipped,
or fail under ``CI=true``. ``CDC_PROVISION=off`` turns it off.

Usage: python .ci/provision.py [--for tests|jvm] [--dry-run]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Need:
    """A part the tests run, how to tell it is here, and the Debian package that provides it."""

    what: str
    package: str
    commands: tuple[str, ...] = ()  # each on PATH (or in ``places``)
    places: tuple[str, ...] = ()  # directories (globs) searched besides PATH
    files: tuple[str, ...] = ()  # globs that must match a file
    jvm: bool = False  # needed by every session that starts a JVM
    java_home: bool = False  # the commands may also be in $JAVA_HOME/bin


NEEDS = (
    Need("a JDK 17 (java, javac)", "openjdk-17-jdk-headless", ("java", "javac"), jvm=True, java_home=True),
    Need("Maven", "maven", ("mvn",), jvm=True),
    Need("the MariaDB server", "mariadb-server", ("mariadbd", "mariadb-install-db"), ("/usr/sbin", "/usr/bin")),
    Need("the PostgreSQL server", "postgresql", ("initdb", "postgres"), ("/usr/lib/postgresql/*/bin",)),
    Need(
        "PostgreSQL's contrib (hstore, ltree)",
        "postgresql-contrib",
        files=("/usr/share/postgresql/*/extension/hstore.control",),
    ),
)


def _root() -> str:
    """Where the system's files are looked for (tests point it at a fake tree)."""
    return os.environ.get("CDC_PROVISION_ROOT", "/")


def _under_root(pattern: str) -> list[str]:
    return glob.glob(os.path.join(_root(), pattern.lstrip("/")))


def present(need: Need) -> bool:
    for command in need.commands:
        places = [d for pattern in need.places for d in _under_root(pattern)]
        if need.java_home and os.environ.get("JAVA_HOME"):
            places.append(os.path.join(os.environ["JAVA_HOME"], "bin"))
        found = shutil.which(command) or any(os.access(Path(d) / command, os.X_OK) for d in places)
        if not found:
            return False
    return all(_under_root(pattern) for pattern in need.files)


def missing(purpose: str) -> list[Need]:
    return [n for n in NEEDS if (purpose == "tests" or n.jvm) and not present(n)]


def install_command() -> list[str] | None:
    """``apt-get`` as root, or through ``sudo -n``; None where neither can run."""
    if shutil.which("apt-get") is None:
        return None
    if os.geteuid() == 0:
        return ["apt-get"]
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], capture_output=True, check=False).returncode == 0:
        return ["sudo", "-n", "apt-get"]
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="provision", description=__doc__.split("\n\n")[0])
    parser.add_argument("--for", dest="purpose", choices=("tests", "jvm"), default="tests")
    parser.add_argument("--dry-run", action="store_true", help="print what would be installed, install nothing")
    args = parser.parse_args(argv)
    needs = missing(args.purpose)
    if not needs:
        return 0
    packages = sorted({n.package for n in needs})
    listed = "; ".join(f"{n.what} ({n.package})" for n in needs)
    if os.environ.get("CDC_PROVISION", "").lower() in ("off", "0", "false"):
        print(f"provision: CDC_PROVISION=off; missing: {listed}", file=sys.stderr)
        return 0
    apt = install_command()
    if apt is None:
        print(
            f"provision: missing: {listed}; install them (Debian/Ubuntu: apt-get install {' '.join(packages)}); "
            "the tests that need them are skipped, or fail under CI=true",
            file=sys.stderr,
        )
        return 0
    update = [*apt, "update", "-q"]
    install = [*apt, "install", "-y", "-q", "--no-install-recommends", *packages]
    print(f"provision: installing {listed}", file=sys.stderr)
    if args.dry_run:
        print(" ".join(update))
        print(" ".join(install))
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (update, install):
        done = subprocess.run(command, env=env, check=False)
        if done.returncode != 0:
            print(f"provision: {' '.join(command)} failed with exit code {done.returncode}", file=sys.stderr)
            return done.returncode
    still = [n.what for n in missing(args.purpose)]
    if still:
        print(f"provision: still missing after the install: {', '.join(still)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
