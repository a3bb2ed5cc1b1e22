"""Locating the shared protocol documents and golden corpus that sit beside the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest


def shared_dir() -> Path:
    """The ``shared/`` folder beside the repository root (``CDC_SHARED_DIR`` overrides)."""
    override = os.environ.get("CDC_SHARED_DIR")
    if override:
        return Path(override)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate.parent
    raise FileNotFoundError("no shared/ folder with corpus/ found above the repository; set CDC_SHARED_DIR")


def corpus_dir() -> Path:
    return shared_dir() / "corpus" / "ticdc"


def corpus_files(pattern: str) -> list[Path]:
    """Golden files under shared/corpus/ticdc matching a glob such as ``*/pkg/sink/codec/debezium/**/*.json``.

    Fails the test (never skips) when the corpus is missing: a green run without the corpus proves nothing.
    """
    files = sorted(corpus_dir().glob(pattern))
    if not files:
        pytest.fail(f"no corpus files match {pattern!r} under {corpus_dir()}")
    return files


def spec_json_blocks(name: str) -> list[dict[str, Any]]:
    """Every top-level JSON object printed in the protocol document ``shared/specs/<name>``: a block of lines from
    one that is exactly ``{`` to its closing brace. Fails the test when the document is missing."""
    path = shared_dir() / "specs" / name
    if not path.is_file():
        pytest.fail(f"the protocol document is missing: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "{":
            i += 1
            continue
        depth, body = 0, []
        for line in lines[i:]:
            body.append(line)
            depth += line.count("{") - line.count("}")
            if depth == 0:
                break
        blocks.append(json.loads("\n".join(body)))
        i += len(body)
    return blocks
