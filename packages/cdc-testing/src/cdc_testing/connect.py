"""Kafka Connect standalone with Debezium's connectors, against a real broker, for tests that run real producers.

The worker runs from the Maven Central jars of bundle ``debezium-connect`` in ``cdc_core/jvm.toml`` (Kafka
Connect at the broker's Kafka version, Debezium's MariaDB and PostgreSQL connectors on its classpath), with its
offsets, logs and the connectors' schema histories in a temporary directory that :meth:`ConnectWorker.close`
removes. Connectors are added and watched through Connect's REST API, so one worker serves every variant a test
session needs: converter settings (``value.converter.schemas.enable``, ``decimal.format``) are set per connector.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from cdc_core.jvm import bundle, classpath, java_executable
from cdc_testing.kafka import free_port
from cdc_testing.processes import SERVER_JVM_FLAGS, ServerProcess, log_tail

BUNDLE: Final = "debezium-connect"
START_TIMEOUT_S: Final = 120.0
STOP_TIMEOUT_S: Final = 30.0
HEAP: Final = "-Xmx768m"
JSON_CONVERTER: Final = "org.apache.kafka.connect.json.JsonConverter"

_LOG_CONFIG: Final = """\
status = error
rootLogger.level = info
rootLogger.appenderRef.file.ref = FILE
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:cdc.connect.log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d %p %c{1}: %m%n
logger.kafka.name = org.apache.kafka
logger.kafka.level = warn
logger.jetty.name = org.eclipse.jetty
logger.jetty.level = warn
logger.reflections.name = org.reflections
logger.reflections.level = error
"""


class ConnectUnavailableError(RuntimeError):
    """The Connect worker could not be started, or a connector failed or did not become ready."""


class ConnectWorker(ServerProcess):
    """One ``ConnectStandalone`` process; :meth:`add` creates connectors through its REST API."""

    stop_timeout_s = STOP_TIMEOUT_S

    def __init__(self, bootstrap: str) -> None:
        super().__init__("cdc-connect-")
        self.bootstrap = bootstrap
        self.rest_port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def log_file(self) -> Path:
        return self.home / "connect.log"

    def _worker_config(self) -> Path:
        settings = {
            "bootstrap.servers": self.bootstrap,
            "listeners": self.url,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "offset.storage.file.filename": str(self.home / "offsets.dat"),
            "offset.flush.interval.ms": "1000",
            "plugin.discovery": "only_scan",  # the connectors are on the classpath, no plugin.path
            "task.shutdown.graceful.timeout.ms": "5000",
        }
        path = self.home / "worker.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        (self.home / "log4j2.properties").write_text(_LOG_CONFIG, encoding="utf-8")
        return path

    def start(self) -> ConnectWorker:
        """Start the worker; returns once its REST API answers."""
        try:
            jars = classpath(BUNDLE)
        except RuntimeError as exc:
            raise ConnectUnavailableError(f"cannot get the Kafka Connect and Debezium jars: {exc}") from exc
        main = bundle(BUNDLE).main
        assert main is not None
        command = [
            java_executable(),
            HEAP,
            *SERVER_JVM_FLAGS,
            f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
            f"-Dcdc.connect.log={self.log_file}",
            "-cp",
            os.pathsep.join(str(j) for j in jars),
            main,
            str(self._worker_config()),
        ]
        self._spawn(command)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(OSError, ConnectUnavailableError):
                self._request("GET", "/connectors")
                return self
            time.sleep(0.3)
        self.close()
        raise ConnectUnavailableError(f"Kafka Connect did not answer on {self.url} within {START_TIMEOUT_S:.0f} s")

    def _check_alive(self) -> None:
        if self._process is None or self._process.poll() is not None:
            code = None if self._process is None else self._process.returncode
            raise ConnectUnavailableError(f"Kafka Connect is not running (exit {code}); log:\n{self.log_tail()}")

    def log_tail(self, chars: int = 4000) -> str:
        return log_tail((self.stderr_log, self.log_file), chars)

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            raise ConnectUnavailableError(f"{method} {path}: HTTP {exc.code}: {detail}") from exc
        return json.loads(text) if text else None

    def scratch(self, name: str) -> Path:
        """A path in the worker's directory for a connector's own files (schema history, ...)."""
        return self.home / name

    def add(self, name: str, config: Mapping[str, str], timeout_s: float = 90.0) -> None:
        """Create a connector and wait until it and its task run; a failed one raises with its trace."""
        self._request("POST", "/connectors", {"name": name, "config": dict(config)})
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(ConnectUnavailableError):
                status = self._request("GET", f"/connectors/{name}/status")
                states = [status["connector"], *status.get("tasks", [])]
                failed = [s for s in states if s.get("state") == "FAILED"]
                if failed:
                    raise ConnectUnavailableError(f"connector {name} failed: {failed[0].get('trace', '')[:3000]}")
                if status.get("tasks") and all(s.get("state") == "RUNNING" for s in states):
                    return
            time.sleep(0.3)
        raise ConnectUnavailableError(f"connector {name} was not running after {timeout_s:.0f} s")

    def status(self, name: str) -> Any:
        return self._request("GET", f"/connectors/{name}/status")

    def remove(self, name: str) -> None:
        self._request("DELETE", f"/connectors/{name}")


@contextlib.contextmanager
def running_worker(bootstrap: str) -> Iterator[ConnectWorker]:
    worker = ConnectWorker(bootstrap)
    try:
        yield worker.start()
    finally:
        worker.close()


__all__ = ["BUNDLE", "JSON_CONVERTER", "ConnectUnavailableError", "ConnectWorker", "running_worker"]
