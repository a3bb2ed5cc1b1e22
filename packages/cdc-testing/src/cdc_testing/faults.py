"""Fault injection that real parts cannot be asked for: a loopback TCP proxy that can go down and come back, and
a table sink that dies after a number of writes.

The broker here keeps its log in memory, so stopping its process would lose the topic. Instead the broker
advertises the proxy's port (``running_broker(advertised_port=...)``) and every client connection goes through
the proxy; :meth:`TcpProxy.outage` closes the listener and every open connection, and refuses new ones, exactly
what clients see when a broker goes down, then serves again on the same port.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

EPHEMERAL_RANGE: Final = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT: Final = 10_000


def _ephemeral_low() -> int:
    """The first port the kernel hands out to outgoing connections (32768 where it does not say)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    return 32_768


def reopenable_port(attempts: int = 200) -> int:
    """A free loopback port below the kernel's ephemeral range, for a listener that closes and opens again.

    A port from the ephemeral range (what binding port 0 gives) can be taken while its listener is down: a client
    reconnecting to it may be given that very port as its own end (a TCP self-connect), or another process's
    outgoing connection may, and the listener then cannot come back (``Address already in use``)."""
    high = _ephemeral_low() - 1
    for _ in range(attempts):
        port = random.randint(LOWEST_PORT, high)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise OSError(f"no free port between {LOWEST_PORT} and {high} after {attempts} tries")


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``127.0.0.1:target_port`` until stopped; :meth:`down`/:meth:`up` cut it."""

    def __init__(self, port: int, target_port: int) -> None:
        self.port = port
        self.target_port = target_port
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self.outages = 0

    def up(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, []
        if listener is not None:
            self.outages += 1
            # close() alone leaves the socket listening while the accept thread still waits on it: it would take
            # connections during the outage and hold the port against up() (Address already in use)
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        self.down()
        try:
            yield
        finally:
            self.up()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed: an outage or the end
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    client.close()
                    upstream.close()
                    return
                self._connections += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def proxied(target_port: int, port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy(port, target_port)
    proxy.up()
    try:
        yield proxy
    finally:
        proxy.down()


class InjectedFault(RuntimeError):
    """Stands for the process dying at the point where a test raised it."""


class KillingSink:
    """Wraps a real table sink and raises :class:`InjectedFault` once ``fail_after`` commits of a batch have landed
    (each target's, then the key state's): the job dies between two commits of one micro-batch, the case that
    exactly-once restarts must survive.

    Tables applied side by side (``table-parallelism``) share it: a commit that starts after the kill writes
    nothing, one in flight at the kill may land (as a commit in flight when a process dies may), and every one
    of them raises the kill's own fault."""

    def __init__(self, inner: Any, fail_after: int) -> None:
        self.inner = inner
        self.fail_after = fail_after
        self.writes = 0
        self.killed: str | None = None
        self._lock = threading.Lock()
        inner.commits = self

    def before(self, name: str) -> None:
        with self._lock:
            if self.killed is not None:
                raise InjectedFault(self.killed)

    def after(self, name: str) -> None:
        with self._lock:
            self.writes += 1
            if self.killed is None and self.writes >= self.fail_after:
                self.killed = f"killed after {self.writes} commits ({name} the last)"
            if self.killed is not None:
                raise InjectedFault(self.killed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
