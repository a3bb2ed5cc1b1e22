"""User-supplied table schemas for schemaless streams: canonical schema JSON (one object or an array)."""

from __future__ import annotations

from pathlib import Path

import orjson

from cdc_core.canonical import schema_from_json
from cdc_core.errors import CdcError, ConfigError
from cdc_core.schema import TableSchema


def load_schemas(path: str) -> list[TableSchema]:
    try:
        document = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ConfigError(f"option table-schema: cannot read {path}: {exc}") from exc
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"option table-schema: {path} is not JSON: {exc}") from exc
    items = document if isinstance(document, list) else [document]
    try:
        return [schema_from_json(item) for item in items]
    except CdcError as exc:
        raise ConfigError(f"option table-schema: {path}: {exc}") from exc
