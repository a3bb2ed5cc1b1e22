"""What the JVM decode path keeps from one batch to the next: a small LRU of built expressions.

A streaming job decodes batch after batch of the same shapes, and building one table's typing expressions costs
thousands of py4j calls (every ``Column`` operation is one). The expressions are plain unresolved Spark
expressions: they name columns, never a frame, so one built for a batch types the next batch's rows as well,
provided the key covers everything they capture. The key is the caller's; the bound keeps a job whose schemas
keep changing from holding every version it ever saw. A lock keeps the map whole should decodes run in threads
(a value built twice at once is kept once).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

V = TypeVar("V")


class Reuse(Generic[V]):
    """An LRU map of at most ``capacity`` built values; ``builds`` counts the values kept, ``hits`` those found."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity {capacity}: at least 1")
        self.capacity = capacity
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0
        self.hits = 0

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        """The value kept under ``key``, else ``build()`` kept (the least recently used one dropped when full)."""
        kept = self.peek(key)
        if kept is not None:
            return kept
        value = build()
        self.put(key, value)
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def held(self, key: Hashable) -> V | None:
        """The value kept under ``key``, or None, without counting a hit or making it the most recent."""
        with self._lock:
            return self._entries.get(key)

    def peek(self, key: Hashable) -> V | None:
        """The value kept under ``key`` (a hit), or None."""
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return self._entries[key]

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value``, built by the caller, under ``key``."""
        with self._lock:
            self.builds += 1
            self._entries[key] = value
            self._entries.move_to_end(key)
            if len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.builds = self.hits = 0


def app_of(frame: DataFrame) -> str | None:
    """The Spark application ``frame`` belongs to: kept expressions are JVM objects of its session, so every key of
    a kept value holds it."""
    app: str | None = frame.sparkSession.conf.get("spark.app.id", None)
    return app


def options_key(options: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    """Decode options as a key: every name and value (as its repr, so unhashable values count too)."""
    return tuple(sorted((str(name), repr(value)) for name, value in options.items()))


def zoned_key(protocol: str, options: Mapping[str, object], session_zone: str, zone: str) -> Hashable:
    """An adapter's expressions key when its readers capture the protocol, its options, Spark's session zone and
    the zone the options resolve to (``time-zone``)."""
    return (protocol, options_key(options), session_zone, zone)


__all__ = ["Reuse", "app_of", "options_key", "zoned_key"]
