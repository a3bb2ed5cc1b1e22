"""The Schema Registry every Avro protocol uses: its options, Confluent framing, and one client over HTTP.

The client is confluent-kafka's `SchemaRegistryClient` (the ``registry`` extra: ``pip install
'cdc-core[registry]'``), imported when a `Registry` is made, so that a codec can list these options without it.
Retries with exponential backoff and jitter are the client's own (``max.retries``, ``retries.wait.ms``,
``retries.max.wait.ms``: 5xx, 408, 429 and connection failures); what still fails afterwards becomes
`RegistryUnavailableError`. Registered ids are cached by (subject, schema text) and fetched schemas by id, so a
steady stream makes no registry calls at all. Basic auth rides in the URL (``https://user:pass@host``).
"""

from __future__ import annotations

import json
import struct
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import attrs

from cdc_core.codec import OptionSpec
from cdc_core.errors import ConfigError, SchemaError, UnavailableError

if TYPE_CHECKING:
    from confluent_kafka.schema_registry import SchemaRegistryClient

_NOT_FOUND_CODES: Final = frozenset({40401, 40402, 40403})
_RETRIED_STATUS: Final = frozenset({408, 429, 500, 502, 503, 504})

# ------------------------------------------------------------------------------------------------ options

URL_OPTION: Final = OptionSpec(
    name="schema-registry",
    kind=str,
    default="",
    help="Schema Registry URL (http or https, user:password@ for basic auth); required unless decoding Glue data",
)
TUNING_OPTIONS: Final = (
    OptionSpec(name="schema-registry-max-retries", kind=int, default=3, help="retries of a failed registry call"),
    OptionSpec(
        name="schema-registry-retry-backoff-ms",
        kind=int,
        default=200,
        help="first backoff between registry retries (doubles each retry, with jitter, up to 5 s)",
    ),
    OptionSpec(name="schema-registry-timeout", kind=float, default=10.0, help="registry request timeout, seconds"),
    OptionSpec(name="schema-registry-ca", kind=str, default="", help="CA bundle file for an https registry"),
)

# ------------------------------------------------------------------------------------------------ errors


class RegistryUnavailableError(UnavailableError):
    """The Schema Registry could not be reached or kept failing after the configured retries (an infrastructure
    fault: a decoder lets it through, it is never a decode error, a skip or a dead letter)."""

    def __init__(self, url: str, operation: str, attempts: int, reason: str, *, protocol: str = "avro") -> None:
        self.url = url
        self.operation = operation
        self.attempts = attempts
        self.reason = reason
        super().__init__(
            f"{protocol}: schema registry {url}: {operation} failed after {attempts} attempt(s): {reason}; check "
            "that the registry is up (its bounds: schema-registry-timeout, schema-registry-max-retries, "
            "schema-registry-retry-backoff-ms)"
        )


class RegistryRejectedError(SchemaError):
    """The Schema Registry refused a schema (incompatible change or invalid schema); names table and change."""

    def __init__(self, table: str, subject: str, change: str, registry_message: str, *, protocol: str = "avro") -> None:
        self.table = table
        self.subject = subject
        self.change = change
        self.registry_message = registry_message
        super().__init__(
            f"{protocol}: schema registry rejected the new schema of table {table} (subject {subject}): {change}; "
            f"registry said: {registry_message}"
        )


class SchemaNotFoundError(LookupError):
    """The registry answered that the schema id or subject does not exist."""


# ------------------------------------------------------------------------------------------------ framing

CONFLUENT_MAGIC: Final = 0x00
CONFLUENT_HEADER_SIZE: Final = 5
_ID: Final = struct.Struct(">BI")


class FramingError(ValueError):
    """The bytes do not start with a header this codec knows; codecs turn it into a positioned DecodeError."""


def confluent_frame(schema_id: int, datum: bytes) -> bytes:
    """Confluent's wire format: magic byte 0, the 4-byte big-endian schema id, the Avro datum."""
    return _ID.pack(CONFLUENT_MAGIC, schema_id) + datum


def confluent_unframe(data: bytes) -> tuple[int, memoryview]:
    """(schema id, datum) of Confluent-framed bytes (FramingError when the header is not there)."""
    if len(data) < CONFLUENT_HEADER_SIZE or data[0] != CONFLUENT_MAGIC:
        if not data:
            raise FramingError("empty payload has no schema header")
        if data[0] != CONFLUENT_MAGIC:
            raise FramingError(f"unknown magic byte {data[0]:#04x} (expected 0x00, Confluent's)")
        raise FramingError(f"Confluent header needs {CONFLUENT_HEADER_SIZE} bytes, got {len(data)}")
    schema_id: int = _ID.unpack_from(data)[1]
    return schema_id, memoryview(data)[CONFLUENT_HEADER_SIZE:]


# ------------------------------------------------------------------------------------------------ client


@attrs.frozen(kw_only=True)
class RegistrySettings:
    url: str
    max_retries: int = 3
    retry_wait_ms: int = 200
    retry_max_wait_ms: int = 5000
    timeout_s: float = 10.0
    ca_location: str = ""
    protocol: str = "avro"  # names the codec in error messages

    @classmethod
    def of(cls, options: Mapping[str, Any], protocol: str) -> RegistrySettings:
        """The settings in a codec's parsed options (`URL_OPTION` and `TUNING_OPTIONS`)."""
        return cls(
            url=options["schema-registry"],
            max_retries=options["schema-registry-max-retries"],
            retry_wait_ms=options["schema-registry-retry-backoff-ms"],
            timeout_s=options["schema-registry-timeout"],
            ca_location=options["schema-registry-ca"],
            protocol=protocol,
        )

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


def _client_module() -> Any:
    """confluent-kafka's schema_registry module, its client loaded, or a ConfigError naming the extra."""
    try:
        import httpx  # noqa: F401 (the client's transport: its errors are caught)

        with warnings.catch_warnings():  # the client imports authlib's httpx module, which warns about itself
            import authlib.deprecate  # noqa: F401 (installs an "always" filter for its warnings: ours must follow)

            warnings.filterwarnings("ignore", message="The httpx module is deprecated")
            import confluent_kafka.schema_registry as module
            import confluent_kafka.schema_registry.error  # noqa: F401 (SchemaRegistryError)

            _ = module.SchemaRegistryClient  # loaded lazily by the package: here, under the filter
    except ImportError as exc:
        raise ConfigError(
            f"a Schema Registry client needs the registry extra: pip install 'cdc-core[registry]' ({exc})"
        ) from exc
    return module


class Registry:
    """One registry endpoint; thread-compatible (the underlying client locks its own caches)."""

    def __init__(self, settings: RegistrySettings) -> None:
        module = _client_module()
        import httpx

        self._schema_type = module.Schema
        self._registry_error: type[Exception] = module.error.SchemaRegistryError
        self._transport_errors: tuple[type[Exception], ...] = (httpx.HTTPError, OSError)
        protocol = settings.protocol
        if not settings.url:
            raise ConfigError(f"{protocol}: option schema-registry is required (the Schema Registry URL)")
        if not settings.url.startswith(("http://", "https://")):
            raise ConfigError(f"{protocol}: schema-registry {settings.redacted_url!r} must be an http(s) URL")
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
            self.client: SchemaRegistryClient = module.SchemaRegistryClient(conf)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{protocol}: schema-registry {settings.redacted_url}: {exc}") from exc
        self._ids: dict[tuple[str, str], int] = {}
        self._schemas: dict[int, str] = {}
        self._last: dict[str, str] = {}  # subject -> last schema text this process registered

    @property
    def attempts(self) -> int:
        return self.settings.max_retries + 1

    def _unavailable(self, operation: str, exc: Exception) -> RegistryUnavailableError:
        # The client retries only transport errors and 408/429/5xx answers; anything else failed at once.
        status = getattr(exc, "http_status_code", None) if isinstance(exc, self._registry_error) else None
        attempts = self.attempts if status is None or status in _RETRIED_STATUS else 1
        return RegistryUnavailableError(
            self.settings.redacted_url, operation, attempts, str(exc) or repr(exc), protocol=self.settings.protocol
        )

    def register(self, subject: str, schema_json: str, *, table: str) -> int:
        """The id of ``schema_json`` under ``subject``, registering it when this process has not yet."""
        cached = self._ids.get((subject, schema_json))
        if cached is not None:
            return cached
        try:
            schema_id = int(self.client.register_schema(subject, self._schema_type(schema_json, "AVRO")))
        except self._registry_error as exc:
            if getattr(exc, "http_status_code", None) in (409, 422):
                previous = self._last.get(subject) or self._latest(subject)
                raise RegistryRejectedError(
                    table,
                    subject,
                    describe_change(previous, schema_json),
                    str(getattr(exc, "error_message", exc)),
                    protocol=self.settings.protocol,
                ) from exc
            raise self._unavailable(f"register subject {subject}", exc) from exc
        except self._transport_errors as exc:
            raise self._unavailable(f"register subject {subject}", exc) from exc
        self._ids[(subject, schema_json)] = schema_id
        self._schemas[schema_id] = schema_json
        self._last[subject] = schema_json
        return schema_id

    def _latest(self, subject: str) -> str | None:
        try:
            latest = self.client.get_latest_version(subject)
        except (self._registry_error, *self._transport_errors):
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
        except self._registry_error as exc:
            if getattr(exc, "http_status_code", None) == 404 or getattr(exc, "error_code", None) in _NOT_FOUND_CODES:
                raise SchemaNotFoundError(f"schema id {schema_id} is unknown to the registry") from exc
            raise self._unavailable(f"fetch schema id {schema_id}", exc) from exc
        except self._transport_errors as exc:
            raise self._unavailable(f"fetch schema id {schema_id}", exc) from exc
        text = schema.schema_str
        if not isinstance(text, str):
            raise SchemaNotFoundError(f"schema id {schema_id}: the registry returned no schema text")
        self._schemas[schema_id] = text
        return text


__all__ = [
    "CONFLUENT_HEADER_SIZE",
    "CONFLUENT_MAGIC",
    "TUNING_OPTIONS",
    "URL_OPTION",
    "FramingError",
    "Registry",
    "RegistryRejectedError",
    "RegistrySettings",
    "RegistryUnavailableError",
    "SchemaNotFoundError",
    "confluent_frame",
    "confluent_unframe",
    "describe_change",
]
