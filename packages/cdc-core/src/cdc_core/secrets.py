"""Keeping credentials out of logs, error messages and ``repr``.

Option names follow librdkafka, the Schema Registry client and TiCDC (``sasl.password``,
``basic.auth.user.info``, ``ssl.key.password``, ``schema-registry=https://user:pass@host``); a setting is a secret
when its name says so, and a URL's password part is always one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit, urlunsplit

MASK: Final = "***"
# Substrings of setting names whose values are credentials.
_SECRET_PARTS: Final = ("password", "secret", "token", "jaas", "credential", "user.info", "private.key", "api.key")


def is_secret(name: str) -> bool:
    lowered = name.lower().replace("_", ".").replace("-", ".")
    return any(part in lowered for part in _SECRET_PARTS)


def redact_url(text: str) -> str:
    """``scheme://user:password@host/...`` with the password masked; anything else unchanged."""
    if "@" not in text or "://" not in text:
        return text
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:  # not a URL after all (a bad port, say): mask everything before the @ to be safe
        scheme, _, rest = text.partition("://")
        return f"{scheme}://{MASK}@{rest.rpartition('@')[2]}"
    if password is None:
        return text
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{MASK}@{host}"))


def redact_options(options: Mapping[str, object]) -> dict[str, object]:
    """A copy of ``options`` that is safe to print: secret settings masked, URL passwords masked."""
    safe: dict[str, object] = {}
    for name, value in options.items():
        if is_secret(name):
            safe[name] = MASK
        elif isinstance(value, str):
            safe[name] = redact_url(value)
        else:
            safe[name] = value
    return safe


def redact_text(text: str, options: Mapping[str, object]) -> str:
    """``text`` (an error from a client library, say) with every secret value of ``options`` masked."""
    for name, value in options.items():
        if isinstance(value, str) and value:
            if is_secret(name) and len(value) >= 3:
                text = text.replace(value, MASK)
            elif redact_url(value) != value:
                text = text.replace(value, redact_url(value))
    return text
