"""Handle-key-only rows: the pluggable resolver that turns them back into full rows.

TiCDC reduces a row too large for Kafka to its handle-key columns (``handleKeyOnly``). Only the upstream TiDB can
supply the rest: ``SET @@tidb_snapshot = commitTs`` then ``SELECT ... WHERE <key> = <values>`` for the new image,
``commitTs - 1`` for the old one (fails once the snapshot is behind the GC safe point). Users who can query
upstream pass a resolver; without one, rows are emitted flagged ``handle_key_only`` with the key columns only.
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

from cdc_core.errors import ConfigError
from cdc_core.events import RowChange


@runtime_checkable
class HandleKeyResolver(Protocol):
    def __call__(self, row: RowChange) -> RowChange:
        """The full row for a handle-key-only ``row`` (which has ``schema``, ``commit_ts`` and the key images)."""
        ...


def load_resolver(spec: str) -> HandleKeyResolver:
    """A resolver named ``module:attribute`` (option ``handle-key-resolver``)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"handle-key-resolver {spec!r}: expected module:attribute")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"handle-key-resolver {spec!r} cannot be loaded: {exc}") from exc
    if not callable(target):
        raise ConfigError(f"handle-key-resolver {spec!r} is not callable")
    resolver: HandleKeyResolver = target
    return resolver
