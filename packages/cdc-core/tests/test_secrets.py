"""Credentials never reach a printed setting, an error message or the command line's output."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cdc_core.registry import installed_codecs
from cdc_core.secrets import MASK, is_secret, redact_options, redact_text, redact_url


@pytest.mark.parametrize(
    "name",
    ["sasl.password", "ssl.key.password", "sasl.jaas.config", "basic.auth.user.info", "sasl.oauthbearer.client.secret",
     "kafka.sasl.password", "source.kafka.sasl_password", "aws-secret-access-key"],
)  # fmt: skip
def test_secret_setting_names(name: str) -> None:
    assert is_secret(name)


@pytest.mark.parametrize("name", ["bootstrap.servers", "group.id", "sasl.mechanism", "security.protocol", "topic"])
def test_ordinary_setting_names(name: str) -> None:
    assert not is_secret(name)


def test_url_passwords_are_masked_and_the_rest_kept() -> None:
    assert (
        redact_url("https://alice:s3cr3t@registry.example:8081/sub")
        == f"https://alice:{MASK}@registry.example:8081/sub"
    )
    assert redact_url("http://registry:8081") == "http://registry:8081"
    assert redact_url("http://alice@registry:8081") == "http://alice@registry:8081"
    assert "s3cr3t" not in redact_url("http://alice:s3cr3t@registry:notaport")


def test_options_and_library_errors_are_redacted() -> None:
    options = {"sasl.password": "hunter2!", "schema-registry": "http://u:pw-xyz@r:1", "group.id": "g"}
    safe = redact_options(options)
    assert safe == {"sasl.password": MASK, "schema-registry": f"http://u:{MASK}@r:1", "group.id": "g"}
    error = "Invalid value hunter2! for sasl.password; registry http://u:pw-xyz@r:1 down"
    assert "hunter2!" not in redact_text(error, options)
    assert "pw-xyz" not in redact_text(error, options)


def test_tail_never_prints_a_rejected_credential() -> None:
    secret = "hunter2-do-not-print"
    pytest.importorskip("confluent_kafka")
    if "canal-json" not in installed_codecs():
        pytest.skip("needs an installed codec to get as far as the consumer")
    result = subprocess.run(
        [sys.executable, "-m", "cdc_core.cli", "tail", "--protocol", "canal-json", "--bootstrap-servers", "127.0.0.1:9",
         "--max-messages", "1", "-X", f"sasl.password={secret}", "-X", "sasl.mechanism=NOT-A-MECHANISM",
         "-X", "security.protocol=sasl_plaintext", "--topic", "shop"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert secret not in result.stdout + result.stderr
    assert "kafka consumer settings rejected" in result.stderr
