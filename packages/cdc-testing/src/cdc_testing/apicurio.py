"""A real Schema Registry for tests: Apicurio Registry in memory on loopback, spoken to through its
Confluent-compatible API (``/apis/ccompat/v7``).

The application comes from Maven Central as pinned in ``cdc_core/jvm.toml`` (bundle ``schema-registry``, an
archive unpacked by :func:`cdc_core.jvm.unpacked`) and runs on the machine's Java 17 with its H2 storage in
memory; its working directory, temporary files and log live in a temporary directory removed when it stops.

``cdc-test-registry`` (the console script) starts one, prints ``schema-registry=URL`` as its first line once it
serves (the URL the ``schema-registry`` option takes), and runs until SIGTERM or SIGINT, then stops it.

Like a Confluent registry out of the box, it enforces BACKWARD compatibility globally (Apicurio itself starts
with no rule). :meth:`ApicurioRegistry.reset` deletes every subject for the next test, and
:meth:`ApicurioRegistry.requests` reads the server's own access log, so tests can check which calls a codec made.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, unquote, urlsplit

import attrs

from cdc_core.jvm import bundle, java_executable, unpacked
from cdc_core.message import Message
from cdc_testing.kafka import free_port
from cdc_testing.processes import SERVER_JVM_FLAGS, ServerProcess, log_tail, serve_until_stopped

BUNDLE: Final = "schema-registry"
CCOMPAT_PATH: Final = "/apis/ccompat/v7"
REGISTRY_V2_PATH: Final = "/apis/registry/v2"
START_TIMEOUT_S: Final = 120.0
STOP_TIMEOUT_S: Final = 20.0
COMPATIBILITY: Final = "BACKWARD"  # Confluent's default level

# C1 only and the serial collector: a test server starts faster and smaller this way (see docs/development.md).
JVM_FLAGS: Final = ("-Xmx128m", *SERVER_JVM_FLAGS)
_SETTINGS: Final = {
    "quarkus.http.host": "127.0.0.1",
    'quarkus.log.category."io.apicurio".level': "WARN",  # its INFO lines narrate every storage call
    "apicurio.datasource.jdbc.initial-size": "2",  # 20 pooled H2 connections by default
    "apicurio.datasource.jdbc.min-size": "2",
}
_ACCESS: Final = re.compile(r'apicurio-registry\.access method="(\w+)" path="([^"]*)"')
_MARKER: Final = "cdc-marker"


class ApicurioUnavailableError(RuntimeError):
    """The registry could not be started (Java, Maven or the archive missing, or it did not come up)."""


class ApicurioRegistry(ServerProcess):
    """One Apicurio Registry process; ``url`` is the Confluent-compatible endpoint codecs are given.

    :meth:`close` stops it and removes its working directory with the log.
    """

    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self, port: int | None = None) -> None:
        super().__init__("cdc-apicurio-")
        self.port = port or free_port()
        self.started_s: float | None = None  # seconds from launch until it served
        self._log_offset = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{CCOMPAT_PATH}"

    @property
    def registry_api_url(self) -> str:
        """Apicurio's own v2 API, which Apicurio's serdes and Kafka Connect converters speak."""
        return f"http://127.0.0.1:{self.port}{REGISTRY_V2_PATH}"

    @property
    def log_file(self) -> Path:
        return self.home / "registry.log"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> str:
        """Start the registry; returns its ccompat URL once it answers and enforces BACKWARD compatibility."""
        try:
            directory = unpacked(BUNDLE)
            jar = directory / str(bundle(BUNDLE).options["jar"])
            java = java_executable()
        except (RuntimeError, KeyError) as exc:
            raise ApicurioUnavailableError(f"cannot get Apicurio Registry: {exc}") from exc
        settings = {**_SETTINGS, "quarkus.http.port": str(self.port), "java.io.tmpdir": str(self.home)}
        command = [java, *JVM_FLAGS, *(f"-D{k}={v}" for k, v in settings.items()), "-jar", str(jar)]
        launched = time.monotonic()
        with self.log_file.open("ab") as log:
            self._process = subprocess.Popen(command, cwd=self.home, stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_serving()
        self.started_s = time.monotonic() - launched
        self.call("PUT", "/config", {"compatibility": COMPATIBILITY})
        self._log_offset = self._mark()
        return self.url

    def _wait_until_serving(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ApicurioUnavailableError(
                    f"Apicurio Registry exited with code {self._process.returncode} before serving; "
                    f"log:\n{self._log_tail()}"
                )
            with contextlib.suppress(OSError):
                self.call("GET", "/subjects")
                return
            time.sleep(0.1)
        self.stop()
        raise ApicurioUnavailableError(
            f"Apicurio Registry did not serve on port {self.port} within {START_TIMEOUT_S:.0f} s; "
            f"log:\n{self._log_tail()}"
        )

    def _log_tail(self) -> str:
        return log_tail((self.log_file,), 3000)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """One ccompat REST call (``path`` below ``/apis/ccompat/v7``); returns the decoded JSON answer.

        An error answer raises :class:`urllib.error.HTTPError` (an ``OSError``).
        """
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
        return json.loads(raw) if raw else None

    def register_captured(self, schemas: Mapping[int, str]) -> dict[int, int]:
        """Register writer schemas captured from another registry (each under a subject of its own); returns the id
        this registry gave each old id. Replaying captured Confluent-framed messages against this registry then
        needs only their ids rewritten (:func:`with_schema_ids`)."""
        given: dict[int, int] = {}
        for old, text in sorted(schemas.items()):
            answer = self.call("POST", f"/subjects/captured-{old}/versions", {"schema": text, "schemaType": "AVRO"})
            given[old] = int(answer["id"])
        return given

    def reset(self) -> None:
        """Delete every subject (soft, then permanently) and restore the global compatibility level.

        Schema ids are not reused afterwards (Apicurio keeps counting), so tests compare ids with what the
        registry says, never with numbers. Requests so far are no longer listed by :meth:`requests`.
        """
        for subject in self.call("GET", "/subjects"):
            path = "/subjects/" + quote(subject, safe="")
            self.call("DELETE", path)
            self.call("DELETE", path + "?permanent=true")
        self.call("PUT", "/config", {"compatibility": COMPATIBILITY})
        self._log_offset = self._mark()

    def _mark(self) -> int:
        """Send a marker request and wait until the access log shows it; returns the log size up to it.

        The access log line of a request is written when its response ends, so the marker's line appearing
        means every earlier (sequential) request has its line too.
        """
        marker = uuid.uuid4().hex
        self.call("GET", f"/subjects?{_MARKER}={marker}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = self.log_file.read_bytes()
            found = text.find(marker.encode(), self._log_offset)
            if found >= 0:
                end = text.find(b"\n", found)
                return len(text) if end < 0 else end + 1
            time.sleep(0.02)
        raise ApicurioUnavailableError("the registry's access log did not record a request within 10 s")

    def requests(self) -> list[tuple[str, str]]:
        """``(method, path)`` of every request the registry served since the last :meth:`reset`, in order; paths
        are relative to the ccompat root (``/subjects/s-value/versions``), without query strings."""
        start = self._log_offset
        end = self._mark()
        found: list[tuple[str, str]] = []
        for method, url in _ACCESS.findall(self.log_file.read_bytes()[start:end].decode(errors="replace")):
            parts = urlsplit(url)
            if _MARKER in parts.query:
                continue
            path = unquote(parts.path)
            found.append((method, path.removeprefix(CCOMPAT_PATH)))
        return found


def with_schema_ids(messages: Iterable[Message], ids: Mapping[int, int]) -> list[Message]:
    """``messages`` with the schema id of every Confluent-framed key and value replaced by ``ids[old]``."""

    def renumbered(data: bytes | None) -> bytes | None:
        if not data or len(data) < 5 or data[0] != 0:
            return data
        old = int.from_bytes(data[1:5], "big")
        return data[:1] + ids.get(old, old).to_bytes(4, "big") + data[5:]

    return [attrs.evolve(m, key=renumbered(m.key), value=renumbered(m.value)) for m in messages]


@contextlib.contextmanager
def running_registry(port: int | None = None) -> Iterator[ApicurioRegistry]:
    """Start a registry; yields it (``.url`` is the ccompat endpoint) and stops it on exit."""
    registry = ApicurioRegistry(port)
    try:
        registry.start()
        yield registry
    finally:
        registry.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``cdc-test-registry``: run a registry until SIGTERM/SIGINT; the first stdout line is ``schema-registry=URL``."""
    parser = argparse.ArgumentParser(
        prog="cdc-test-registry", description="run an Apicurio Schema Registry (Confluent-compatible) for tests"
    )
    parser.add_argument("--port", type=int, default=None, help="listener port (default: a free one)")
    args = parser.parse_args(argv)
    registry = ApicurioRegistry(args.port)
    return serve_until_stopped(
        "cdc-test-registry", registry, lambda: f"schema-registry={registry.start()}", ApicurioUnavailableError
    )


if __name__ == "__main__":
    sys.exit(main())
