"""How ``cdc apply`` rides out a service that goes away: the query starts again from its checkpoint after an
infrastructure fault (Kafka, the registry, the tables' storage or catalog), waiting longer each time, within
bounds; then the fault ends the run (exit code 3). Nothing is lost in between: a failed micro-batch committed no
offsets, and the tables that had applied it skip it when it runs again.

Bad data and wrong settings are never retried: they would fail the same way again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import attrs

from cdc_core.errors import ConfigError

DEFAULT_RETRIES: Final = 3
DEFAULT_BACKOFF_S: Final = 5.0
MAX_BACKOFF_S: Final = 60.0


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """``retries`` restarts after an infrastructure fault, the first after ``backoff_s`` seconds, each later one
    after twice the one before, at most :data:`MAX_BACKOFF_S`; a micro-batch that succeeds starts the count anew."""

    retries: int = DEFAULT_RETRIES
    backoff_s: float = DEFAULT_BACKOFF_S

    def __attrs_post_init__(self) -> None:
        if self.retries < 0:
            raise ConfigError(f"--retries {self.retries}: expected 0 or more")
        if self.backoff_s < 0:
            raise ConfigError(f"--retry-backoff {self.backoff_s:g}: expected 0 or more seconds")

    def waits(self) -> Iterator[float]:
        """The wait before each restart, in order."""
        wait = self.backoff_s
        for _ in range(self.retries):
            yield min(wait, MAX_BACKOFF_S)
            wait *= 2


__all__ = ["DEFAULT_BACKOFF_S", "DEFAULT_RETRIES", "MAX_BACKOFF_S", "RetryPolicy"]
