"""Progress on stderr for long inputs, only when stderr is a terminal (never mixed into piped output)."""

from __future__ import annotations

import sys
import time
from typing import IO


class Progress:
    """Counts messages and events; redraws one stderr line at most every ``interval`` seconds."""

    def __init__(self, stream: IO[str] | None = None, *, interval: float = 0.5, force: bool = False) -> None:
        self._stream = stream or sys.stderr
        self._enabled = force or self._stream.isatty()
        self._interval = interval
        self._started = time.monotonic()
        self._drawn = self._started
        self.messages = 0
        self.events = 0
        self.errors = 0

    def step(self, events: int) -> None:
        self.messages += 1
        self.events += events
        if self._enabled:
            now = time.monotonic()
            if now - self._drawn >= self._interval:
                self._drawn = now
                self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.messages / max(now - self._started, 1e-9)
        line = f"\r{self.messages} messages, {self.events} events, {self.errors} errors, {rate:,.0f} msg/s"
        self._stream.write(line)
        self._stream.flush()

    def finish(self) -> None:
        if self._enabled:
            self._draw(time.monotonic())
            self._stream.write("\n")
            self._stream.flush()
