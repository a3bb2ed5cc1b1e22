""".ci/provision.py, which nox runs before the tests: what it finds missing on a machine and what it installs,
on a fake system tree (``CDC_PROVISION_ROOT``) with a fake ``apt-get`` that records its calls."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROVISION = ROOT / ".ci" / "provision.py"
EVERYTHING = "mariadb-server maven openjdk-17-jdk-headless postgresql postgresql-contrib"
SYSTEM_FILES = (
    "usr/sbin/mariadbd",
    "usr/bin/mariadb-install-db",
    "usr/lib/postgresql/15/bin/initdb",
    "usr/lib/postgresql/15/bin/postgres",
    "usr/share/postgresql/15/extension/hstore.control",
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the fake apt-get is run as root only")


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": str(tmp_path / "bin"), "CDC_PROVISION_ROOT": str(tmp_path / "root"), **env}
    return subprocess.run(
        [sys.executable, str(PROVISION), *args], env=environment, capture_output=True, text=True, check=False
    )


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    """A fresh machine: apt-get and nothing else."""
    (tmp_path / "root").mkdir()
    executable(tmp_path / "bin" / "apt-get", f'#!/bin/sh\necho "$@" >> {tmp_path / "apt.log"}\n')
    return tmp_path


def installed(machine: Path) -> None:
    for name in ("java", "javac", "mvn"):
        executable(machine / "bin" / name)
    for name in SYSTEM_FILES:
        executable(machine / "root" / name)


def test_a_fresh_machine_gets_every_package_the_tests_need(machine: Path) -> None:
    done = run(machine, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "apt-get update -q",
        f"apt-get install -y -q --no-install-recommends {EVERYTHING}",
    ]
    assert "installing a JDK 17 (java, javac) (openjdk-17-jdk-headless); Maven (maven); the MariaDB" in done.stderr
    assert (
        run(machine, "--dry-run", "--for", "jvm")
        .stdout.splitlines()[1]
        .endswith("--no-install-recommends maven openjdk-17-jdk-headless")
    )


def test_a_machine_that_has_everything_installs_nothing(machine: Path) -> None:
    installed(machine)
    done = run(machine, "--dry-run")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_only_the_missing_parts_are_installed_and_java_home_counts(machine: Path) -> None:
    installed(machine)
    for name in ("java", "javac"):
        (machine / "bin" / name).unlink()
    executable(machine / "jdk" / "bin" / "java")
    executable(machine / "jdk" / "bin" / "javac")
    (machine / "root" / "usr/share/postgresql/15/extension/hstore.control").unlink()
    done = run(machine, "--dry-run", JAVA_HOME=str(machine / "jdk"))
    assert done.stdout.splitlines()[1].endswith("--no-install-recommends postgresql-contrib")


def test_the_install_runs_apt_get_and_checks_what_it_installed(machine: Path) -> None:
    done = run(machine)
    assert done.returncode == 1  # the fake apt-get installs nothing
    assert (machine / "apt.log").read_text().splitlines() == [
        "update -q",
        f"install -y -q --no-install-recommends {EVERYTHING}",
    ]
    assert "still missing after the install: a JDK 17" in done.stderr
    executable(machine / "bin" / "apt-get", "#!/bin/sh\nexit 100\n")
    failed = run(machine)
    assert failed.returncode == 100 and "apt-get update -q failed with exit code 100" in failed.stderr


def test_without_apt_get_or_when_turned_off_it_says_what_is_missing_and_goes_on(machine: Path) -> None:
    (machine / "bin" / "apt-get").unlink()
    done = run(machine)
    assert done.returncode == 0 and done.stdout == ""
    assert f"install them (Debian/Ubuntu: apt-get install {EVERYTHING})" in done.stderr
    off = run(machine, CDC_PROVISION="off")
    assert off.returncode == 0 and off.stderr.startswith("provision: CDC_PROVISION=off; missing: a JDK 17")
