"""The registry fixture: a real Apicurio Registry on loopback that fails loudly, and skips only outside CI."""

from __future__ import annotations

import os
import socket

import pytest

from cdc_testing import plugin
from cdc_testing.apicurio import ApicurioRegistry, ApicurioUnavailableError, running_registry


def test_the_session_registry_is_a_java_process_on_loopback(schema_registry: ApicurioRegistry) -> None:
    assert schema_registry.running and schema_registry.pid is not None
    assert "java" in os.readlink(f"/proc/{schema_registry.pid}/exe")
    assert schema_registry.url == f"http://127.0.0.1:{schema_registry.port}/apis/ccompat/v7"
    assert schema_registry.call("GET", "/config") == {"compatibilityLevel": "BACKWARD"}


def test_a_registry_that_cannot_serve_is_an_error_with_its_log(apicurio_registry: ApicurioRegistry) -> None:
    # apicurio_registry: only where the session's registry runs (Java, Maven and the archive are there)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failing = pytest.raises(ApicurioUnavailableError, match="exited with code 1 before serving")
        with failing as caught, running_registry(port):
            pass
    assert f"Port {port} seems to be in use" in str(caught.value)  # Quarkus's own words, from the log


def test_unavailable_skips_locally_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no java"):
        plugin.unavailable("no java")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"no java \(CI=true"):
        plugin.unavailable("no java")
