"""A Spark session shared with forked children: mutation testing forks one child per mutant from the process that
started the JVM, and each child uses that JVM.

A child must not share the parent's py4j socket: a child killed mid-command (mutmut's timeout) would leave a
half-read reply on it for the next one. So after a fork the child gets a connection of its own (its end closes
when the child exits); the parent's connection objects stay referenced, because collecting them in the child
would shut down the socket the parent still uses.

py4j's thread that tells the JVM which objects Python dropped does not survive a fork either. Without one, every
object a child made stayed on the JVM's heap with the plans it holds (about 200 MB per run of the SCD2 plan
tests), and after a few hundred children the JVM spent its time collecting garbage: tests timed out, or failed
for want of memory, and mutants that survive on their own were recorded as killed. So the child starts its own
releasing thread, which releases only the objects the child made: the JVM numbers its objects in order
(``o<n>``), and an object the parent made may still be in use by the parent and by every later child.
"""

from __future__ import annotations

import collections
import gc
import threading
import time
from typing import Any

# The parent's connection objects, kept alive in the child (see the module docstring).
_inherited: list[Any] = []
# This child's releaser, once own_connection has run in it.
_releasers: list[_Releaser] = []


def object_number(target_id: str) -> int | None:
    """The JVM's number of a py4j object id (``o42`` -> 42); None for the gateway's fixed ids."""
    return int(target_id[1:]) if target_id[:1] == "o" and target_id[1:].isdigit() else None


class _Releaser:
    """Sends the JVM the objects this child dropped, numbered ``first`` or later."""

    def __init__(self, dropped: collections.deque[tuple[Any, str]], first: int | None) -> None:
        self.dropped = dropped
        self.first = first
        self._lock = threading.Lock()
        self._sending = False

    def run(self) -> None:
        while True:
            with self._lock:
                task = self.dropped.pop() if self.dropped else None
                self._sending = task is not None
            if task is None:
                time.sleep(0.05)
                continue
            client, target_id = task
            number = object_number(target_id)
            if self.first is not None and number is not None and number >= self.first:
                client.garbage_collect_object(target_id, False)
            with self._lock:
                self._sending = False

    def settled(self) -> bool:
        with self._lock:
            return not self.dropped and not self._sending


def own_connection() -> None:
    """In a child just forked from a process with a Spark session: a py4j connection and a releasing thread of
    its own (``os.register_at_fork(after_in_child=own_connection)``)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    client = gateway._gateway_client
    _inherited.append((client.thread_connection, client.deque, client.finalizer_deque))
    client.thread_connection = threading.local()
    client.deque = collections.deque()
    # Dropped objects queue up from here on; the first object made here bounds the parent's.
    pending: collections.deque[tuple[Any, str]] = collections.deque()
    client.finalizer_deque = pending
    releaser = _Releaser(pending, object_number(gateway.jvm.java.lang.Object()._target_id))
    _releasers[:] = [releaser]
    threading.Thread(target=releaser.run, name="release-child-objects", daemon=True).start()


def release_dropped(timeout: float = 30.0) -> bool:
    """Collect this child's garbage and wait until the JVM knows of every object it dropped (a child that leaves
    with ``os._exit`` takes its releasing thread along). True when settled; also in a process that never forked."""
    if not _releasers:
        return True
    gc.collect()
    deadline = time.monotonic() + timeout
    while not _releasers[0].settled():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


__all__ = ["object_number", "own_connection", "release_dropped"]
