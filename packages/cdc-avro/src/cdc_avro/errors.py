"""Errors of the Schema Registry boundary (cdc-core's, shared by every Avro protocol; everything else uses the
core tree directly)."""

from cdc_core.schema_registry import RegistryRejectedError, RegistryUnavailableError

__all__ = ["RegistryRejectedError", "RegistryUnavailableError"]
