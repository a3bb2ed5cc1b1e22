"""What ``decode``, ``encode``, ``convert`` and ``tail`` do with a message they cannot read: the ``--on-error``
policy within ``--max-dead-letters``.

Only bad data comes here: an unreachable registry or store (:class:`cdc_core.errors.UnavailableError`) ends the
run instead. A dead letter is written, flushed and synced to disk before the caller moves on (``tail`` commits
the message's offset only after that), and the dead-letter file is opened before the first message is read, so a
destination that cannot be written fails the run before anything is read or committed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import IO

import attrs

from cdc_core.errors import CdcError, ConfigError, DataError, DeadLetterLimitError, StorageUnavailableError


def _sync_directory(folder: Path) -> None:
    descriptor = os.open(folder if str(folder) else ".", os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class MessageFailedError(DataError):
    """A message could not be read under ``--on-error fail``: the run stops at it."""


@attrs.frozen
class ErrorPolicy:
    """What to do with a message that fails: stop (``fail``), go on (``skip``), or record it (``dead-letter``)."""

    mode: str
    dead_letter: Path | None = None

    @classmethod
    def parse(cls, text: str) -> ErrorPolicy:
        import argparse

        if text in ("fail", "skip"):
            return cls(text)
        name, sep, path = text.partition("=")
        if name == "dead-letter" and sep and path:
            return cls("dead-letter", Path(path))
        raise argparse.ArgumentTypeError(f"{text!r}: expected fail, skip or dead-letter=FILE")


@attrs.define
class FailedMessages:
    """Counts the failed messages of a run and handles each by the policy; use as a context manager."""

    policy: ErrorPolicy
    limit: int | None = None  # --max-dead-letters: more failed messages than this fail the run
    count: int = 0
    _file: IO[str] | None = attrs.field(default=None, init=False)

    def __enter__(self) -> FailedMessages:
        path = self.policy.dead_letter
        if path is not None:
            try:
                self._file = path.open("a", encoding="utf-8")
                _sync_directory(path.parent)  # the file's own entry is durable too, not only what it holds
            except OSError as exc:
                raise ConfigError(
                    f"cannot write dead letters to {path}: {exc.strerror}; give --on-error dead-letter= a file in "
                    "a directory that exists and can be written (nothing was read)"
                ) from exc
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._file is not None:
            self._file.close()

    @property
    def where(self) -> str:
        """Where this run's failed messages went, for the summary line."""
        if self.policy.mode == "dead-letter":
            return f"in {self.policy.dead_letter}"
        return "skipped" if self.policy.mode == "skip" else ""

    def failed(self, where: str, error: CdcError, line: str) -> None:
        """Handle one failed message (``line``: it as a message line, or the input line) found at ``where``;
        returns once it is skipped or durably dead-lettered, raises when the run must stop at it."""
        if self.policy.mode == "fail":
            raise MessageFailedError(
                f"{where}: {error} (--on-error skip, or dead-letter=FILE to keep such messages, goes on past them)"
            ) from error
        if self.limit is not None and self.count >= self.limit:
            raise DeadLetterLimitError(
                f"{where}: {error}: one failed message more than --max-dead-letters {self.limit} allows; it and "
                f"what follows it were neither {'dead-lettered' if self._file else 'skipped'} nor committed"
            ) from error
        self.count += 1
        if self._file is None:
            print(f"cdc: skipped: {where}: {error}", file=sys.stderr)
            return
        record = {"error": f"{where}: {error}", "error_type": type(error).__name__, "line": line}
        try:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())  # durable before the caller commits past the message
        except OSError as exc:
            raise StorageUnavailableError(
                f"cannot write dead letters to {self.policy.dead_letter}: {exc.strerror}; {where} was not committed"
            ) from exc
