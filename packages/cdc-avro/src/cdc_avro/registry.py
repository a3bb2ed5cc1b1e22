"""The Schema Registry client the codec uses: cdc-core's (`cdc_core.schema_registry`), shared with every Avro
protocol, so that options, retries, caching and errors are one thing."""

from cdc_core.schema_registry import Registry, RegistrySettings, SchemaNotFoundError, describe_change

__all__ = ["Registry", "RegistrySettings", "SchemaNotFoundError", "describe_change"]
