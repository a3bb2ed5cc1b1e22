"""Every package has the repository's one version (VERSION) and pins its siblings to exactly that version."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PYPROJECTS = sorted(ROOT.glob("packages/*/pyproject.toml"))
PACKAGES = {tomllib.loads(p.read_text())["project"]["name"] for p in PYPROJECTS}
PIN = re.compile(r"^(?P<name>cdc-[a-z]+)(\[[a-z0-9,]+\])?(?P<spec>.*)$")


def _requirements(project: dict[str, object]) -> list[str]:
    listed = list(project.get("dependencies", []))  # type: ignore[call-overload]
    for extra in dict(project.get("optional-dependencies", {})).values():  # type: ignore[call-overload]
        listed += extra
    return listed


def test_the_version_file_is_one_release_number() -> None:
    text = (ROOT / "VERSION").read_text()
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*\n", text), repr(text)


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_the_version_comes_from_the_version_file(pyproject: Path) -> None:
    config = tomllib.loads(pyproject.read_text())
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert (pyproject.parent / config["tool"]["hatch"]["version"]["path"]).resolve() == ROOT / "VERSION"


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.parent.name)
def test_sibling_pins_are_exactly_the_version(pyproject: Path) -> None:
    expected = "==" + (ROOT / "VERSION").read_text().strip()
    for requirement in _requirements(tomllib.loads(pyproject.read_text())["project"]):
        match = PIN.match(requirement.split(";")[0].replace(" ", ""))
        if match and match["name"] in PACKAGES:
            assert match["spec"] == expected, f"{pyproject.parent.name}: {requirement} (want {expected})"


def test_installed_packages_report_the_version() -> None:
    import cdc_core

    expected = (ROOT / "VERSION").read_text().strip()
    assert cdc_core.__version__ == expected
    for name in PACKAGES:
        assert version(name) == expected, name  # a stale editable install is rebuilt by nox
