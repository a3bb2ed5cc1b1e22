"""Every ```python block of docs/spark.md runs, in order, with `spark` and a fresh `tmp` directory."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "spark.md"


@pytest.mark.spark
def test_python_examples_run(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DOC.parents[1])  # the examples read docs/samples as a reader in a clone does
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) >= 2
    namespace: dict[str, Any] = {"spark": spark, "tmp": str(tmp_path)}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
