"""``cdc_spark.runtime`` (the processes a session runs in) stands below the pipeline: it imports none of it, so the
session's setup can be read, changed and tested without decode, apply or the job (docs/development.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import cdc_spark.runtime

RUNTIME = Path(cdc_spark.runtime.__file__).parent


def imported_modules(source: Path) -> set[str]:
    """Every module ``source`` imports, at any depth of its code (imports inside functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_the_runtime_modules_import_nothing_of_the_pipeline() -> None:
    modules = sorted(RUNTIME.glob("*.py"))
    assert {m.stem for m in modules} >= {"class_sharing", "java_code", "jit", "masters", "memory_pages"}
    outside = {
        f"{module.name}: {name}"
        for module in modules
        for name in imported_modules(module)
        if name.startswith("cdc_spark") and not name.startswith("cdc_spark.runtime")
    }
    assert not outside, f"runtime modules import the pipeline: {sorted(outside)}"


def test_an_import_of_the_pipeline_is_found(tmp_path: Path) -> None:
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from cdc_spark.job import BatchProcessor\n    import cdc_spark.session\n")
    assert imported_modules(module) == {"cdc_spark.job", "cdc_spark.session"}
