"""A decoder: the way into a decode, and the owner of everything a decode keeps from one batch to the next.

A streaming job decodes batch after batch of the same shapes, so building expressions, describing shapes and
checking options once pays for itself many times over. A :class:`Decoder` holds those caches; a job or a test
makes its own (``Decoder()``) or uses the one of its Spark application (:meth:`Decoder.shared`), and
:meth:`Decoder.clear` forgets what it holds. Keys name the Spark app, so a decoder used across sessions is safe.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, TypeVar, cast

from cdc_core.errors import ConfigError
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_spark.decoding.adapters import adapter_factory
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.jvm.caches import JvmCaches
from cdc_spark.decoding.reuse import Reuse, options_key
from cdc_spark.partition_clock import PartitionKey
from cdc_spark.runtime.java_names import keep_pyspark_names
from cdc_spark.source.checks import batch_frame
from cdc_spark.time_text import check_time_as

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

    from cdc_spark.decoding.adapter import Adapter, AdapterFactory

PLANS: Final = ("jvm", "python", "driver")
_Kept = TypeVar("_Kept")


class Decoder:
    """Decodes batches of Kafka-shaped change messages (:meth:`decode`) and keeps what later batches reuse."""

    _shared: ClassVar[weakref.WeakKeyDictionary[SparkContext, Decoder]] = weakref.WeakKeyDictionary()
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        self.jvm = JvmCaches()
        self._kept: dict[str, object] = {}  # each protocol adapter's own state (:meth:`kept`)
        # (protocol, options) a codec decoder was made with: a stream's every batch would make another (TiCDC Avro's
        # makes a registry client, about 25 ms); options that fail are not kept, so they fail every time
        self.checked_options: Reuse[bool] = Reuse(capacity=64)
        self._factories: dict[str, AdapterFactory | None] = {}  # each protocol's, looked up once

    @classmethod
    def shared(cls, spark: SparkSession) -> Decoder:
        """The decoder of ``spark``'s application, made on first use and gone with its Spark context."""
        with cls._shared_lock:
            found = cls._shared.get(spark.sparkContext)
            if found is None:
                found = cls._shared[spark.sparkContext] = cls()
                keep_pyspark_names(spark._jvm)  # a session the caller built: its decodes call PySpark's functions
            return found

    def clear(self) -> None:
        """Forget every kept value and count."""
        self.jvm.clear()
        self._kept.clear()
        self.checked_options.clear()
        self._factories.clear()

    def kept(self, name: str, make: Callable[[], _Kept]) -> _Kept:
        """A protocol adapter's own state (``name``: the protocol's), made by ``make`` on first use and forgotten by
        :meth:`clear`: what the decoder keeps for a protocol without knowing it (the adapters'
        :class:`~cdc_spark.decoding.adapter.AdapterState`)."""
        found = self._kept.get(name)
        if found is None:
            found = self._kept.setdefault(name, make())
        return cast("_Kept", found)

    def decode(
        self,
        df: DataFrame,
        protocol: str,
        options: Mapping[str, object] | None = None,
        schemas: Mapping[tuple[str, str], TableSchema] | None = None,
        *,
        plan: str = "jvm",
        time_as: str = "interval",
        partition_ts: Mapping[PartitionKey, int] | None = None,
        known_versions: Sequence[TableSchema] = (),
    ) -> DecodedChanges:
        """:func:`cdc_spark.decoding.decode`, with this decoder's caches."""
        if plan not in PLANS:
            raise ConfigError(f"decode plan {plan!r}: expected one of {', '.join(PLANS)}")
        batch_frame(df, "decode")
        check_time_as(time_as)
        codec_options = dict(options or {})
        self._check_options(protocol, codec_options)
        seeds = dict(schemas or {})
        clock = dict(partition_ts or {})
        adapter = None if plan != "jvm" else self._adapter(protocol, codec_options, df.sparkSession)
        if adapter is None:
            from cdc_spark.decoding.python_plan import decode as decode_python

            return decode_python(df, protocol, codec_options, seeds, partition_ts=clock,
                                 known_versions=known_versions, time_as=time_as,
                                 on_driver=plan == "driver")  # fmt: skip
        from cdc_spark.decoding.jvm import batch

        return batch.decode(df, adapter, codec_options, seeds, partition_ts=clock, known_versions=known_versions,
                            time_as=time_as, caches=self.jvm)  # fmt: skip

    def _check_options(self, protocol: str, options: Mapping[str, object]) -> None:
        """Fail fast on the driver, before any job: an unknown protocol or option, or options the codec refuses."""

        def check() -> bool:
            get_codec(protocol).decoder(options)
            return True

        self.checked_options.get((protocol, options_key(options)), check)

    def _adapter(self, protocol: str, options: Mapping[str, object], spark: SparkSession) -> Adapter | None:
        """The protocol's JVM rules for these options, None for the codec (:mod:`~cdc_spark.decoding.adapters`)."""
        if protocol not in self._factories:
            self._factories[protocol] = adapter_factory(protocol)
        factory = self._factories[protocol]
        session_zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        return None if factory is None else factory(options, session_zone, spark, self)


__all__ = ["PLANS", "Decoder"]
