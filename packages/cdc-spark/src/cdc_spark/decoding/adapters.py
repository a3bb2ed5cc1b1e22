"""Each protocol's JVM rules, found by entry point: group ``cdc_spark.decode_adapters``, one per protocol name.

An entry point names a function ``(options, session_zone, spark, decoder) -> Adapter | None`` (None: these options
have no JVM rules, the codec decodes them). cdc-spark registers its own adapters so (``canal-json``, ``debezium``,
``debezium-avro``, ``simple``, ``avro``); a package that brings a protocol registers its adapter the same way, and a
protocol without one is decoded by its codec (the ``python`` plan). An adapter module is imported only when its
protocol is decoded.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cdc_spark.decoding.adapter import AdapterFactory

GROUP: Final = "cdc_spark.decode_adapters"
_LOG = logging.getLogger(__name__)


def adapter_factory(protocol: str) -> AdapterFactory | None:
    """The factory registered for ``protocol``, None where none is (or it cannot be imported: said once in the log,
    and the codec decodes)."""
    for point in entry_points(group=GROUP, name=protocol):
        try:
            factory: AdapterFactory = point.load()
        except ImportError as exc:
            _LOG.warning("decode adapter %s (%s) cannot be imported, the codec decodes: %s", protocol, point.value, exc)
            return None
        return factory
    return None


__all__ = ["GROUP", "adapter_factory"]
