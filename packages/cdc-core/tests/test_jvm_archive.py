"""Archive bundles in jvm.toml: parsed, refused where a classpath is wanted, unpacked once into the cache, and a
hostile archive refused. The real fetch of the registry's archive runs in the Apicurio fixture."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from cdc_core import jvm
from cdc_core.errors import ConfigError

ARCHIVE = jvm.Coordinate.parse("org.example:app:tar.gz:all:1.0")


def test_the_registry_bundle_is_an_archive_with_a_jar_to_run() -> None:
    registry = jvm.bundle("schema-registry")
    assert registry.artifacts == () and registry.archive is not None
    assert (registry.archive.packaging, registry.archive.classifier) == ("tar.gz", "all")
    assert str(registry.options["jar"]).endswith(".jar")
    with pytest.raises(ConfigError, match="is an archive"):
        jvm.classpath("schema-registry")
    with pytest.raises(ConfigError, match="not an archive"):
        jvm.unpacked("kafka-broker")


def test_coordinates_in_both_orders() -> None:
    assert str(ARCHIVE) == "org.example:app:tar.gz:all:1.0"
    assert ARCHIVE.dependency_plugin_form == "org.example:app:1.0:tar.gz:all"
    assert jvm.Coordinate.parse("g:a:zip:1").dependency_plugin_form == "g:a:1:zip"


def test_a_version_change_gets_a_new_cache_directory() -> None:
    one = jvm.Bundle(name="app", archive=ARCHIVE)
    other = jvm.Bundle(name="app", archive=jvm.Coordinate.parse("org.example:app:tar.gz:all:1.1"))
    assert jvm.bundle_dir(one) != jvm.bundle_dir(other)


def _tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _serve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, archive: bytes) -> list[Sequence[str]]:
    """Point the cache at tmp_path and let 'Maven' copy ``archive`` (what Maven Central cannot be made to serve)."""
    monkeypatch.setenv(jvm.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(jvm, "bundle", lambda name: jvm.Bundle(name=name, archive=ARCHIVE))
    calls: list[Sequence[str]] = []

    def copy(pom_dir: Path, goals: Sequence[str], what: str) -> None:
        calls.append(goals)
        output = next(g for g in goals if g.startswith("-DoutputDirectory=")).split("=", 1)[1]
        (Path(output) / "app-1.0-all.tar.gz").write_bytes(archive)

    monkeypatch.setattr(jvm, "run_maven", copy)
    return calls


def test_an_archive_is_unpacked_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = _serve(monkeypatch, tmp_path, _tar({"app.jar": b"PK", "lib/dep.jar": b"PK2"}))
    directory = jvm.unpacked("app")
    assert (directory / "lib" / "dep.jar").read_bytes() == b"PK2"
    assert calls == [["dependency:copy", "-Dartifact=org.example:app:1.0:tar.gz:all", calls[0][2]]]
    assert sorted(p.name for p in directory.parent.iterdir()) == ["pom.xml", "unpacked"]  # no copy, no staging
    assert jvm.unpacked("app") == directory and len(calls) == 1


def test_an_archive_escaping_its_directory_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _serve(monkeypatch, tmp_path, _tar({"app.jar": b"PK", "../outside.jar": b"x"}))
    with pytest.raises(jvm.JvmUnavailableError, match=r"cannot unpack org\.example:app:tar\.gz:all:1\.0"):
        jvm.unpacked("app")
    assert not (tmp_path / "cache" / "outside.jar").exists()
    assert [p.name[:4] for p in (tmp_path / "cache").iterdir()] == ["app-"]
    assert not any((tmp_path / "cache").glob("*/unpacked")) and not any((tmp_path / "cache").glob("*/staging-*"))
