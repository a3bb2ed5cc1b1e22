"""A Python worker re-reads a zip archive on the task's cache invalidation only when the archive changed."""

from __future__ import annotations

import importlib
import sys
import zipfile
import zipimport
from pathlib import Path
from typing import Any

import pytest

from cdc_spark.runtime.worker_imports import PATCHED_MARK, reread_changed_archives_only

EAGER_PYTHON = pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13 re-reads archives lazily itself")


def _archive(path: Path, modules: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in modules.items():
            archive.writestr(f"{name}.py", source)


@pytest.fixture
def directory_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The archives whose directory is read, in order; the zip importer's method as it was once the test ends."""
    reads: list[str] = []
    read = zipimport._read_directory  # type: ignore[attr-defined]

    def counted(archive: str) -> Any:
        reads.append(archive)
        return read(archive)

    monkeypatch.setattr(zipimport, "_read_directory", counted)
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    return reads


@EAGER_PYTHON
def test_an_unchanged_archive_is_read_once_however_often_caches_are_invalidated(
    tmp_path: Path, directory_reads: list[str]
) -> None:
    path = tmp_path / "shipped.zip"
    _archive(path, {"alpha": "VALUE = 1\n"})
    importer = zipimport.zipimporter(str(path))
    directory_reads.clear()
    importer.invalidate_caches()
    assert directory_reads == [str(path)]  # what Python 3.11 does on every invalidation
    importer.invalidate_caches()
    assert len(directory_reads) == 2

    assert reread_changed_archives_only()
    assert not reread_changed_archives_only()  # once
    for _ in range(5):
        importer.invalidate_caches()
    assert len(directory_reads) == 3  # the first invalidation reads it (its stamp is unknown), no later one
    assert importer.find_spec("alpha") is not None


@EAGER_PYTHON
def test_a_changed_archive_is_read_again(tmp_path: Path, directory_reads: list[str]) -> None:
    path = tmp_path / "shipped.zip"
    _archive(path, {"alpha": "VALUE = 1\n"})
    importer = zipimport.zipimporter(str(path))
    reread_changed_archives_only()
    importer.invalidate_caches()
    assert importer.find_spec("beta") is None

    _archive(path, {"alpha": "VALUE = 1\n", "beta": "VALUE = 2\n"})
    importer.invalidate_caches()
    assert importer.find_spec("beta") is not None
    path.unlink()
    importer.invalidate_caches()  # gone: Python's own handling (the importer forgets the archive)
    assert importer.find_spec("alpha") is None


@EAGER_PYTHON
def test_the_driver_keeps_pythons_own_invalidation(directory_reads: list[str]) -> None:
    """Importing the package outside a task changes nothing: only a worker is changed."""
    import cdc_spark

    importlib.reload(cdc_spark)
    assert not getattr(zipimport.zipimporter.invalidate_caches, PATCHED_MARK, False)


@EAGER_PYTHON
def test_a_worker_running_the_packages_code_re_reads_changed_archives_only(spark: Any) -> None:
    def worker_state(_: int) -> bool:
        import zipimport as worker_zipimport

        import cdc_spark.decoding  # noqa: F401  (what unpickling any of the package's functions imports)

        return bool(getattr(worker_zipimport.zipimporter.invalidate_caches, PATCHED_MARK, False))

    states = spark.sparkContext.parallelize(range(2), 2).map(worker_state).collect()
    assert all(states), states
