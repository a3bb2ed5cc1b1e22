"""The per-line loop of ``decode``, ``encode`` and ``convert``: errors handled by policy, progress shown."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from cdc_core.cli.arguments import ErrorPolicy
from cdc_core.cli.progress import Progress
from cdc_core.errors import CdcError


class StopOnError(Exception):
    """Ends a run under the ``fail`` policy, after the error has been reported on stderr."""


def open_input(path: str, stack: ExitStack) -> tuple[IO[bytes], str]:
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    try:
        return stack.enter_context(Path(path).open("rb")), path
    except OSError as exc:
        raise CdcError(f"cannot read {path}: {exc.strerror}") from exc


def run_lines(
    stream: IO[bytes],
    source: str,
    handle: Callable[[bytes, int], Iterable[str]],
    *,
    policy: ErrorPolicy,
    out: IO[str],
) -> int:
    """Write ``handle(line, number)`` output for every non-blank input line; returns how many lines failed.

    Raises StopOnError on the first failure under the ``fail`` policy.
    """
    progress = Progress()
    failed = 0
    with ExitStack() as stack:
        dead: IO[str] | None = None
        if policy.dead_letter is not None:
            dead = stack.enter_context(policy.dead_letter.open("a", encoding="utf-8"))
        for number, raw in enumerate(stream, start=1):
            line = raw.strip()
            if not line:
                continue
            try:
                produced = list(handle(line, number))
            except CdcError as exc:
                failed += 1
                progress.errors += 1
                _report(policy, dead, f"{source}:{number}: {exc}", line, type(exc).__name__)
                continue
            for text in produced:
                out.write(text + "\n")
            progress.step(len(produced))
        progress.finish()
    return failed


def _report(policy: ErrorPolicy, dead: IO[str] | None, text: str, line: bytes, kind: str) -> None:
    if policy.mode == "fail":
        print(f"cdc: error: {text}", file=sys.stderr)
        raise StopOnError(text)
    if dead is not None:
        record = {"error": text, "error_type": kind, "line": line.decode("utf-8", errors="replace")}
        dead.write(json.dumps(record, ensure_ascii=False) + "\n")
        dead.flush()
    else:
        print(f"cdc: skipped: {text}", file=sys.stderr)
