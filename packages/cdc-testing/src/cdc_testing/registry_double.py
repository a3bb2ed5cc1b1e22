"""TEST DOUBLE of a Confluent Schema Registry, for the faults a real registry cannot be made to produce.

Tests of registry behaviour run against a real one (Apicurio Registry, :mod:`cdc_testing.apicurio`, fixture
``schema_registry``). This in-process HTTP server stays for what that server does not do on demand: answer
with server errors (`fail_next`), answer slowly (`delay_next`), refuse a schema that is compatible
(`reject_next`), and require basic auth (`credentials`) or serve https (`tls`) without an identity provider or
a second server. It also lists every request it received (`requests`), faults included.

It implements just enough of the REST API for a codec to run between faults: register
(``POST /subjects/{subject}/versions``, one id per distinct schema text), ``GET /schemas/ids/{id}`` and
``GET /subjects/{subject}/versions/latest``. Compatibility is not checked: the real registry's tests do that.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest


class SchemaRegistryDouble:
    """The double's state plus a server thread; use as a context manager or through the ``registry_double`` fixture."""

    def __init__(self, *, credentials: tuple[str, str] | None = None, tls: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.tls = tls  # (certificate file, key file): serve https
        self.schemas: dict[int, str] = {}  # id -> schema text
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request received
        self._reject: list[str] = []
        self._fail: list[int] = []
        self._delays: list[float] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------------ control

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("registry double is not running")
        host, port = self._server.server_address[:2]
        return f"{'https' if self.tls else 'http'}://{host!s}:{port}"

    def url_with_credentials(self) -> str:
        if self.credentials is None:
            return self.url
        user, password = self.credentials
        return self.url.replace("://", f"://{user}:{password}@", 1)

    def reject_next(self, message: str = "Schema being registered is incompatible with an earlier schema") -> None:
        """The next registration is refused with HTTP 409, whatever the schema."""
        with self._lock:
            self._reject.append(message)

    def fail_next(self, count: int, status: int = 503) -> None:
        """The next ``count`` requests of any kind answer ``status`` (server errors for retry tests)."""
        with self._lock:
            self._fail.extend([status] * count)

    def delay_next(self, count: int, seconds: float) -> None:
        """The next ``count`` requests are answered only after ``seconds`` (timeouts)."""
        with self._lock:
            self._delays.extend([seconds] * count)

    def start(self) -> SchemaRegistryDouble:
        double = self

        class Handler(_Handler):
            registry = double

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="schema-registry-double", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> SchemaRegistryDouble:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------------------------------ REST

    def handle(self, method: str, path: str, body: Any, auth: str | None) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((method, path))
            delay = self._delays.pop(0) if self._delays else 0.0
        if delay:
            time.sleep(delay)  # outside the lock: other requests are served meanwhile
        with self._lock:
            if self.credentials is not None:
                expected = base64.b64encode(":".join(self.credentials).encode()).decode()
                if auth != f"Basic {expected}":
                    return 401, {"error_code": 401, "message": "Unauthorized"}
            if self._fail:
                status = self._fail.pop(0)
                return status, {"error_code": status * 100 + 1, "message": "injected failure"}
            parts = [unquote(p) for p in path.strip("/").split("/") if p]
            return self._route(method, parts, body)

    def _route(self, method: str, parts: list[str], body: Any) -> tuple[int, Any]:
        match method, parts:
            case "GET", ["schemas", "ids", raw_id]:
                schema_id = int(raw_id) if raw_id.isdigit() else -1
                if schema_id not in self.schemas:
                    return 404, {"error_code": 40403, "message": "Schema not found"}
                return 200, {"schema": self.schemas[schema_id]}
            case "GET", ["subjects", subject, "versions", "latest"]:
                versions = self.subjects.get(subject)
                if not versions:
                    return 404, {"error_code": 40401, "message": "Subject not found"}
                schema_id = versions[-1]
                return 200, {
                    "subject": subject,
                    "version": len(versions),
                    "id": schema_id,
                    "schema": self.schemas[schema_id],
                }
            case "POST", ["subjects", subject, "versions"]:
                return self._register(subject, body)
        return 404, {"error_code": 404, "message": f"no route {method} /{'/'.join(parts)}"}

    def _register(self, subject: str, body: Any) -> tuple[int, Any]:
        text = body.get("schema") if isinstance(body, dict) else None
        if not isinstance(text, str):
            return 422, {"error_code": 42201, "message": "Invalid schema"}
        if self._reject:
            return 409, {"error_code": 409, "message": self._reject.pop(0)}
        versions = self.subjects.setdefault(subject, [])
        schema_id = next((i for i, known in self.schemas.items() if known == text), None)
        if schema_id is None:
            schema_id = len(self.schemas) + 1
            self.schemas[schema_id] = text
        if schema_id not in versions:
            versions.append(schema_id)
        return 200, {"id": schema_id}


class _Handler(BaseHTTPRequestHandler):
    registry: SchemaRegistryDouble
    protocol_version = "HTTP/1.1"

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        status, payload = self.registry.handle(
            method, urlsplit(self.path).path, body, self.headers.get("Authorization")
        )
        data = json.dumps(payload).encode()
        with contextlib.suppress(ConnectionError):  # a client that timed out on a delayed answer has gone
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def registry_double() -> Iterator[SchemaRegistryDouble]:
    """A fresh fault-injecting registry double (HTTP on 127.0.0.1) per test; ``.url`` is its address."""
    with SchemaRegistryDouble() as double:
        yield double
