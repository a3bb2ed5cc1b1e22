"""docs/types.md is rendered from the code's tables; it must match what the code says now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_type_tables_page_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_types.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
