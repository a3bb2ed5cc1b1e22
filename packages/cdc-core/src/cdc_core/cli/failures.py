"""How a run ends when it fails: one line on stderr that names what failed and what to do, and an exit code that
says what kind of failure it was (:class:`cdc_core.errors.Fault`). ``--debug`` or ``CDC_DEBUG=1`` also prints
the whole trace (Python's, and the JVM's where Spark raised it)."""

from __future__ import annotations

import os
import sys
import traceback
from typing import IO, Final

from cdc_core.errors import Fault, fault_of

DEBUG_ENV: Final = "CDC_DEBUG"
DEBUG_HELP: Final = (
    "on failure, print the whole trace (Python's and the JVM's) before the one-line error (or CDC_DEBUG=1)"
)
INTERRUPTED: Final = 130

# what to do, by kind of failure, where the error's own message cannot know (it is raised far from the command)
_ADVICE: Final = {
    Fault.INFRASTRUCTURE: "nothing past the last message applied or dead-lettered was committed: rerun once it is back",
    Fault.INTERNAL: "this is a bug: rerun with --debug (or CDC_DEBUG=1) for the whole trace and report it",
}


def debug_wanted(flag: bool | None) -> bool:
    """``--debug`` given, or ``CDC_DEBUG`` set to anything but empty, 0 or false."""
    return bool(flag) or os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def one_line(command: str, error: BaseException) -> str:
    """The failure as one line: ``cdc COMMAND: what failed (what to do)``; newlines in a message are folded."""
    fault = fault_of(error)
    text = " ".join(str(error).split()) or type(error).__name__
    if fault is Fault.INTERNAL:
        text = f"internal error: {type(error).__name__}: {text}"
    advice = _ADVICE.get(fault)
    return f"cdc {command}: {text}" + (f" ({advice})" if advice else "")


def report(command: str, error: BaseException, *, debug: bool, stream: IO[str] | None = None) -> int:
    """Print ``error`` as one line (after its whole trace with ``debug``); returns the exit code."""
    out = stream or sys.stderr
    if debug:
        traceback.print_exception(error, file=out)
        java = _java_trace(error)
        if java:
            print(java, file=out)
    print(one_line(command, error), file=out, flush=True)
    return int(fault_of(error))


def _java_trace(error: BaseException) -> str:
    """The JVM's stack trace of a Spark error in ``error``'s chain (empty when there is none)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        trace = getattr(current, "getJvmStackTrace", None) or getattr(current, "_stackTrace", None)
        if callable(trace):
            try:
                return str(trace())
            except Exception:  # a trace that cannot be read is no reason to hide the failure itself
                return ""
        if isinstance(trace, str) and trace:
            return trace
        current = current.__cause__ or current.__context__
    return ""
