"""The Schema Registry as the codec uses it, through confluent-kafka's `SchemaRegistryClient` over HTTP.

Retries with exponential backoff and jitter are the client's own (``max.retries``, ``retries.wait.ms``,
``retries.max.wait.ms``: 5xx, 408, 429 and connection failures); what still fails afterwards becomes
`RegistryUnavailableError`. Registered ids are cached by (subject, schema text) and fetched schemas by id, so
a steady stream makes no registry calls at all.
"""

from __future__ import annotations

import json
import warnings
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx

from cdc_avro.errors import RegistryRejectedError, RegistryUnavailableError
from cdc_core.errors import ConfigError

with warnings.catch_warnings():  # the client imports authlib's httpx module, which warns about itself on import
    import authlib.deprecate  # noqa: F401 (installs an "always" filter for its warnings: ours must follow it)

    warnings.filterwarnings("ignore", message="The httpx module is deprecated")
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry.error import SchemaRegistryError

_NOT_FOUND_CODES = frozenset({40401, 40402, 40403})
_RETRIED_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class SchemaNotFoundError(LookupError):
    """The registry answered that the schema id or subject does not exist."""


@attrs.frozen(kw_only=True)
class RegistrySettings:
    url: str
    max_retries: int = 3
    retry_wait_ms: int = 200
    retry_max_wait_ms: int = 5000
    timeout_s: float = 10.0
    ca_location: str = ""

    @property
    def redacted_url(self) -> str:
        """The URL without credentials, for error messages."""
        parts = urlsplit(self.url.split(",")[0].strip())
        host = parts.hostname or ""
        netloc = host + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def describe_change(old_json: str | None, new_json: str) -> str:
    """What a new record schema changes relative to the last registered one, in words."""
    if old_json is None:
        return "first version of the subject"
    try:
        old = {f["name"]: f for f in json.loads(old_json).get("fields", [])}
        new = {f["name"]: f for f in json.loads(new_json).get("fields", [])}
    except (ValueError, AttributeError, TypeError, KeyError):
        return "schema replaced"
    changes: list[str] = []
    for name, field in new.items():
        if name not in old:
            how = "with default" if "default" in field else "without a default"
            changes.append(f"adds column {name} {how}")
        elif old[name].get("type") != field.get("type"):
            changes.append(f"changes the type of column {name}")
    changes.extend(f"drops column {name}" for name in old if name not in new)
    return "; ".join(changes) if changes else "changes schema attributes"


class Registry:
    """One registry endpoint; thread-compatible (the underlying client locks its own caches)."""

    def __init__(self, settings: RegistrySettings) -> None:
        if not settings.url:
            raise ConfigError("avro: option schema-registry is required (the Schema Registry URL)")
        if not settings.url.startswith(("http://", "https://")):
            raise ConfigError(f"avro: schema-registry {settings.redacted_url!r} must be an http(s) URL")
        conf: dict[str, Any] = {
            "url": settings.url,
            "max.retries": settings.max_retries,
            "retries.wait.ms": settings.retry_wait_ms,
            "retries.max.wait.ms": settings.retry_max_wait_ms,
            "timeout": settings.timeout_s,
        }
        if settings.ca_location:
            conf["ssl.ca.location"] = settings.ca_location
        self.settings = settings
        try:
            self.client = SchemaRegistryClient(conf)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"avro: schema-registry {settings.redacted_url}: {exc}") from exc
        self._ids: dict[tuple[str, str], int] = {}
        self._schemas: dict[int, str] = {}
        self._last: dict[str, str] = {}  # subject -> last schema text this process registered

    @property
    def attempts(self) -> int:
        return self.settings.max_retries + 1

    def _unavailable(self, operation: str, exc: Exception) -> RegistryUnavailableError:
        # The client retries only transport errors and 408/429/5xx answers; anything else failed at once.
        status = exc.http_status_code if isinstance(exc, SchemaRegistryError) else None
        attempts = self.attempts if status is None or status in _RETRIED_STATUS else 1
        return RegistryUnavailableError(self.settings.redacted_url, operation, attempts, str(exc) or repr(exc))

    def register(self, subject: str, schema_json: str, *, table: str) -> int:
        """The id of ``schema_json`` under ``subject``, registering it when this process has not yet."""
        cached = self._ids.get((subject, schema_json))
        if cached is not None:
            return cached
        try:
            schema_id = int(self.client.register_schema(subject, Schema(schema_json, "AVRO")))
        except SchemaRegistryError as exc:
            if exc.http_status_code in (409, 422):
                previous = self._last.get(subject) or self._latest(subject)
                raise RegistryRejectedError(
                    table, subject, describe_change(previous, schema_json), exc.error_message
                ) from exc
            raise self._unavailable(f"register subject {subject}", exc) from exc
        except (httpx.HTTPError, OSError) as exc:
            raise self._unavailable(f"register subject {subject}", exc) from exc
        self._ids[(subject, schema_json)] = schema_id
        self._schemas[schema_id] = schema_json
        self._last[subject] = schema_json
        return schema_id

    def _latest(self, subject: str) -> str | None:
        try:
            latest = self.client.get_latest_version(subject)
        except (SchemaRegistryError, httpx.HTTPError, OSError):
            return None
        text = latest.schema.schema_str if latest.schema is not None else None
        return text if isinstance(text, str) else None

    def schema(self, schema_id: int) -> str:
        """The schema text of ``schema_id``; raises `SchemaNotFoundError` or `RegistryUnavailableError`."""
        cached = self._schemas.get(schema_id)
        if cached is not None:
            return cached
        try:
            schema = self.client.get_schema(schema_id)
        except SchemaRegistryError as exc:
            if exc.http_status_code == 404 or exc.error_code in _NOT_FOUND_CODES:
                raise SchemaNotFoundError(f"schema id {schema_id} is unknown to the registry") from exc
            raise self._unavailable(f"fetch schema id {schema_id}", exc) from exc
        except (httpx.HTTPError, OSError) as exc:
            raise self._unavailable(f"fetch schema id {schema_id}", exc) from exc
        text = schema.schema_str
        if not isinstance(text, str):
            raise SchemaNotFoundError(f"schema id {schema_id}: the registry returned no schema text")
        self._schemas[schema_id] = text
        return text
