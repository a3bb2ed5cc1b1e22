"""Wall time of the steps ``decode`` runs before it returns: the Spark jobs it needs answers from (shapes, typing
counts, the codec's residue) and the driver's work between them. The change frames it returns are lazy; writing
them is the caller's time."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import attrs


@attrs.define
class Steps:
    """Seconds per named step, in the order the steps first ran; a step timed twice adds up."""

    seconds: dict[str, float] = attrs.field(factory=dict)

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + (time.monotonic() - started)


__all__ = ["Steps"]
