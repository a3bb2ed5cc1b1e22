"""TEST DOUBLE of a Confluent Schema Registry: an in-process HTTP server, not a registry for real use.

No Schema Registry server can be installed from a package index here, so tests talk to this one through the
real ``confluent_kafka.schema_registry.SchemaRegistryClient`` over HTTP. It implements the subset of the REST
API the codecs use:

- ``POST /subjects/{subject}/versions`` (register; same schema text -> same id, globally, as Confluent does;
  a new version is checked against the latest one under the subject's compatibility level)
- ``POST /subjects/{subject}`` (look a schema up), ``GET /subjects``, ``GET /subjects/{subject}/versions``,
  ``GET /subjects/{subject}/versions/{version|latest}``
- ``GET /schemas/ids/{id}``
- ``POST /compatibility/subjects/{subject}/versions/{version|latest}``
- ``GET|PUT /config`` and ``/config/{subject}`` (``NONE`` or ``BACKWARD``)

Compatibility is a simplified BACKWARD check for record schemas (a new field needs a default, a kept field
keeps its type); tests can also force a rejection (`reject_next`) or server errors (`fail_next`), require
basic auth (`credentials`), serve https (`tls`), and count requests (`requests`). Schemas are compared as parsed JSON.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest


def _canonical(schema_text: str) -> str:
    return json.dumps(json.loads(schema_text), sort_keys=True, separators=(",", ":"))


def backward_problems(old_text: str, new_text: str) -> list[str]:
    """Why data written with ``old`` cannot be read with ``new`` (simplified Avro BACKWARD rules)."""
    old, new = json.loads(old_text), json.loads(new_text)
    if not (isinstance(old, dict) and isinstance(new, dict)) or old.get("type") != "record":
        return [] if _canonical(old_text) == _canonical(new_text) else ["non-record schema changed"]
    old_fields = {f["name"]: f for f in old.get("fields", [])}
    problems: list[str] = []
    for field in new.get("fields", []):
        previous = old_fields.get(field["name"])
        if previous is None:
            if "default" not in field:
                problems.append(f"READER_FIELD_MISSING_DEFAULT_VALUE: {field['name']}")
        elif json.dumps(previous["type"], sort_keys=True) != json.dumps(field["type"], sort_keys=True):
            problems.append(f"TYPE_MISMATCH: {field['name']}")
    return problems


class SchemaRegistryDouble:
    """The registry state plus a server thread; use as a context manager or through the pytest fixture."""

    def __init__(
        self,
        *,
        credentials: tuple[str, str] | None = None,
        compatibility: str = "BACKWARD",
        tls: tuple[str, str] | None = None,
    ) -> None:
        self.credentials = credentials
        self.tls = tls  # (certificate file, key file): serve https
        self.compatibility = compatibility
        self.subject_compatibility: dict[str, str] = {}
        self.schemas: dict[int, str] = {}  # id -> schema text as first registered
        self.ids: dict[str, int] = {}  # canonical text -> id
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request received
        self._reject: list[str] = []
        self._fail: list[int] = []
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
            case "GET", ["subjects"]:
                return 200, sorted(self.subjects)
            case "GET", ["subjects", subject, "versions"]:
                if subject not in self.subjects:
                    return 404, {"error_code": 40401, "message": "Subject not found"}
                return 200, list(range(1, len(self.subjects[subject]) + 1))
            case "GET", ["subjects", subject, "versions", version]:
                return self._version(subject, version)
            case "POST", ["subjects", subject, "versions"]:
                return self._register(subject, body)
            case "POST", ["subjects", subject]:
                return self._lookup(subject, body)
            case "POST", ["compatibility", "subjects", subject, "versions", version]:
                problems = self._problems(subject, body, version)
                return 200, {"is_compatible": not problems, "messages": problems}
            case "GET", ["config", *rest]:
                level = self.subject_compatibility.get(rest[0], self.compatibility) if rest else self.compatibility
                return 200, {"compatibilityLevel": level}
            case "PUT", ["config", *rest]:
                level = str(body.get("compatibility", "")).upper() if isinstance(body, dict) else ""
                if level not in ("NONE", "BACKWARD"):
                    return 422, {"error_code": 42203, "message": f"unsupported compatibility {level!r}"}
                if rest:
                    self.subject_compatibility[rest[0]] = level
                else:
                    self.compatibility = level
                return 200, {"compatibility": level}
        return 404, {"error_code": 404, "message": f"no route {method} /{'/'.join(parts)}"}

    def _version(self, subject: str, version: str) -> tuple[int, Any]:
        versions = self.subjects.get(subject)
        if not versions:
            return 404, {"error_code": 40401, "message": "Subject not found"}
        number = len(versions) if version == "latest" else int(version) if version.isdigit() else 0
        if not 1 <= number <= len(versions):
            return 404, {"error_code": 40402, "message": "Version not found"}
        schema_id = versions[number - 1]
        return 200, {"subject": subject, "version": number, "id": schema_id, "schema": self.schemas[schema_id]}

    def _schema_text(self, body: Any) -> str | None:
        if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
            return None
        if body.get("schemaType", "AVRO") != "AVRO":
            return None
        try:
            _canonical(body["schema"])
        except ValueError:
            return None
        return str(body["schema"])

    def _problems(self, subject: str, body: Any, version: str = "latest") -> list[str]:
        text = self._schema_text(body)
        if text is None:
            return ["invalid schema"]
        versions = self.subjects.get(subject)
        if not versions or self.subject_compatibility.get(subject, self.compatibility) == "NONE":
            return []
        index = len(versions) if version == "latest" else int(version) if version.isdigit() else len(versions)
        return backward_problems(self.schemas[versions[max(1, min(index, len(versions))) - 1]], text)

    def _register(self, subject: str, body: Any) -> tuple[int, Any]:
        text = self._schema_text(body)
        if text is None:
            return 422, {"error_code": 42201, "message": "Invalid schema"}
        canonical = _canonical(text)
        versions = self.subjects.setdefault(subject, [])
        existing = self.ids.get(canonical)
        if existing is not None and existing in versions:
            return 200, {"id": existing}
        if self._reject:
            return 409, {"error_code": 409, "message": self._reject.pop(0)}
        problems = self._problems(subject, body)
        if problems:
            message = "Schema being registered is incompatible with an earlier schema; " + "; ".join(problems)
            return 409, {"error_code": 409, "message": message}
        if existing is None:
            existing = len(self.schemas) + 1
            self.schemas[existing] = text
            self.ids[canonical] = existing
        versions.append(existing)
        return 200, {"id": existing}

    def _lookup(self, subject: str, body: Any) -> tuple[int, Any]:
        text = self._schema_text(body)
        versions = self.subjects.get(subject)
        if text is None or not versions:
            return 404, {"error_code": 40401, "message": "Subject not found"}
        schema_id = self.ids.get(_canonical(text))
        if schema_id not in versions:
            return 404, {"error_code": 40403, "message": "Schema not found"}
        return 200, {"subject": subject, "version": versions.index(schema_id) + 1, "id": schema_id, "schema": text}


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
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def schema_registry() -> Iterator[SchemaRegistryDouble]:
    """A fresh Schema Registry test double (HTTP on 127.0.0.1) per test; ``.url`` is its address."""
    with SchemaRegistryDouble() as double:
        yield double
