"""Values an encoder had to change to fit its target, as ``cdc encode`` and ``cdc convert`` report them.

Each column whose values were changed (rounded to a scale, cut to an fsp, written as a double, replaced by a
default...) gets one ``warning`` line on stderr, with the first value as its example; the run ends with a count.
``--strict`` turns the first such value into an error of its message (`ValueChangedWarning` is an `EncodeError`).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from cdc_core.fitting import ValueChangedWarning


def add_strict(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action="store_true",
        help="a value that would change to fit the target (rounded, cut, written as a double, replaced) fails its "
        "message instead of a warning: exit code 1 under --on-error fail, skipped or dead-lettered otherwise",
    )


@contextmanager
def reported_changes(command: str, *, strict: bool, stream: IO[str] | None = None) -> Iterator[None]:
    """Within the block, a `ValueChangedWarning` is an error with ``strict``, else one stderr line per column."""
    out = stream or sys.stderr
    counts: dict[tuple[str, str | None, str | None, str], int] = {}
    with warnings.catch_warnings():
        if strict:
            warnings.simplefilter("error", ValueChangedWarning)
        else:
            warnings.simplefilter("always", ValueChangedWarning)  # counted here, not deduplicated by Python
            warnings.showwarning = _counting(command, counts, out, warnings.showwarning)
        yield
    if counts:
        values = sum(counts.values())
        columns = len({key[:3] for key in counts})
        print(
            f"cdc {command}: note: {values} value{'s' * (values != 1)} changed to fit in {columns} "
            f"column{'s' * (columns != 1)} (--strict refuses them)",
            file=out,
        )


def _counting(
    command: str, counts: dict[tuple[str, str | None, str | None, str], int], out: IO[str], show: Callable[..., None]
) -> Callable[..., None]:
    def showwarning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if not isinstance(message, ValueChangedWarning):
            show(message, category, *args, **kwargs)
            return
        key = message.column_key
        if key not in counts:
            example = f" (first: {message.example})" if message.example else ""
            print(f"cdc {command}: warning: {message}{example}", file=out)
        counts[key] = counts.get(key, 0) + 1

    return showwarning
