"""Errors of the Schema Registry boundary (everything else uses the core tree directly)."""

from __future__ import annotations

from cdc_core.errors import SchemaError, UnavailableError


class RegistryUnavailableError(UnavailableError):
    """The Schema Registry could not be reached or kept failing after the configured retries (an infrastructure
    fault: a decoder lets it through, it is never a decode error, a skip or a dead letter)."""

    def __init__(self, url: str, operation: str, attempts: int, reason: str) -> None:
        self.url = url
        self.operation = operation
        self.attempts = attempts
        self.reason = reason
        super().__init__(
            f"avro: schema registry {url}: {operation} failed after {attempts} attempt(s): {reason}; check that "
            "the registry is up (its bounds: schema-registry-timeout, schema-registry-max-retries, "
            "schema-registry-retry-backoff-ms)"
        )


class RegistryRejectedError(SchemaError):
    """The Schema Registry refused a schema (incompatible change or invalid schema); names table and change."""

    def __init__(self, table: str, subject: str, change: str, registry_message: str) -> None:
        self.table = table
        self.subject = subject
        self.change = change
        self.registry_message = registry_message
        super().__init__(
            f"avro: schema registry rejected the new schema of table {table} (subject {subject}): {change}; "
            f"registry said: {registry_message}"
        )
