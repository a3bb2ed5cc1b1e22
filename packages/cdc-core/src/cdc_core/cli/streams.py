"""The per-line loop of ``decode``, ``encode`` and ``convert``: bad lines handled by policy, progress shown, one
summary line at the end."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from cdc_core.cli.failed_messages import FailedMessages
from cdc_core.cli.progress import Progress
from cdc_core.cli.summary import RunSummary
from cdc_core.errors import CdcError, ConfigError, UnavailableError
from cdc_core.events import Event

# a line's output lines, and the events it carried (counted for the summary)
Handled = tuple[Sequence[str], Sequence[Event]]


def open_input(path: str, stack: ExitStack) -> tuple[IO[bytes], str]:
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    try:
        return stack.enter_context(Path(path).open("rb")), path
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc


def run_lines(
    stream: IO[bytes],
    source: str,
    handle: Callable[[bytes, int], Handled],
    *,
    failures: FailedMessages,
    summary: RunSummary,
    out: IO[str],
) -> None:
    """Write ``handle(line, number)``'s output for every non-blank input line, counting into ``summary``.

    A line that fails with bad data goes to ``failures`` (which raises where the run must stop); a service that is
    down (:class:`UnavailableError`) ends the run at once.
    """
    progress = Progress()
    try:
        for number, raw in enumerate(stream, start=1):
            line = raw.strip()
            if not line:
                continue
            summary.read += 1
            try:
                produced, events = handle(line, number)
            except UnavailableError:
                raise
            except CdcError as exc:
                progress.errors += 1
                failures.failed(f"{source}:{number}", exc, line.decode("utf-8", errors="replace"))
                continue
            summary.count(events)
            for text in produced:
                out.write(text + "\n")
            progress.step(len(produced))
    finally:
        progress.finish()
