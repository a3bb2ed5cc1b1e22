"""Decode Kafka-shaped change messages into typed change frames: the JVM where it can, the codec for the rest.

``decode(df, protocol, options=None, schemas=None)`` returns :class:`DecodedChanges` whatever the path (see
docs/spark-source-decode.md). Plans: ``jvm`` (the default) parses and types every message it can with Spark's own
functions (:mod:`cdc_spark.decoding.jvm_path`) and hands the residue to the protocol's codec in the executors;
``python`` decodes every message with the codec (:mod:`cdc_spark.decoding.python_path`), the reference the JVM
path is tested against. A protocol without JVM rules uses ``python``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from cdc_core.errors import ConfigError
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.reuse import Reuse, options_key
from cdc_spark.partition_clock import PartitionKey
from cdc_spark.time_text import check_time_as

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from cdc_spark.decoding.adapter import Adapter

PLANS: Final = ("jvm", "python")


def _canal(options: Mapping[str, object], session_zone: str, spark: SparkSession) -> Adapter | None:
    from cdc_spark.decoding.canal import CanalAdapter
    from cdc_spark.decoding.java_text import JavaText

    return CanalAdapter(options, session_zone, java=JavaText.of(spark))


def _debezium(options: Mapping[str, object], session_zone: str, spark: SparkSession) -> Adapter | None:
    from cdc_spark.decoding.debezium import DebeziumAdapter

    return DebeziumAdapter(options, session_zone)


def _debezium_avro(options: Mapping[str, object], session_zone: str, spark: SparkSession) -> Adapter | None:
    from cdc_spark.decoding.debezium_avro import DebeziumAvroAdapter

    return DebeziumAvroAdapter(options, session_zone)


def _simple(options: Mapping[str, object], session_zone: str, spark: SparkSession) -> Adapter | None:
    if str(options.get("encoding-format", "json")) != "json":
        return None  # Simple's Avro encoding: the codec (no JVM rules yet)
    from cdc_spark.decoding.java_text import JavaText
    from cdc_spark.decoding.simple import SimpleAdapter

    return SimpleAdapter(options, session_zone, java=JavaText.of(spark))


def _avro(options: Mapping[str, object], session_zone: str, spark: SparkSession) -> Adapter | None:
    if not str(options.get("schema-registry") or ""):
        return None  # Glue-framed data only: the codec
    from cdc_spark.decoding.avro import AvroAdapter
    from cdc_spark.decoding.java_text import JavaText

    return AvroAdapter(options, session_zone, java=JavaText.of(spark))


# protocol -> its JVM rules (None: not for these options); a new protocol's rules are one module and one entry here
ADAPTERS: Final[Mapping[str, Callable[[Mapping[str, object], str, SparkSession], Adapter | None]]] = {
    "canal-json": _canal,
    "debezium": _debezium,
    "debezium-avro": _debezium_avro,
    "simple": _simple,
    "avro": _avro,
}


# The (protocol, options) a decoder was made with on this driver: a stream's every batch would make another (TiCDC
# Avro's makes a registry client, about 25 ms). Options that fail are not kept, so they fail every time.
CHECKED_OPTIONS: Final[Reuse[bool]] = Reuse(capacity=64)


def _check_options(protocol: str, options: Mapping[str, object]) -> None:
    """Fail fast on the driver, before any job: an unknown protocol or option, or options the codec refuses."""

    def check() -> bool:
        get_codec(protocol).decoder(options)
        return True

    CHECKED_OPTIONS.get((protocol, options_key(options)), check)


def decode(
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
    """Decode ``df`` (the columns of Spark's Kafka source) into the change-frame contract.

    ``schemas``: the newest schema of each table from earlier batches (types rows whose messages carry none).
    ``partition_ts``: the previous batch's :meth:`DecodedChanges.partition_commit_ts`, so that changes without a
    commit ts (TiCDC Avro's tombstone deletes) are ordered after what preceded them. ``known_versions``: every
    schema version earlier batches brought (BOOTSTRAP, DDL), for protocols whose rows name a version (Simple).
    ``time_as``: ``interval`` (TIME as ``interval day to second``) or ``string`` (TiDB's text).
    """
    if plan not in PLANS:
        raise ConfigError(f"decode plan {plan!r}: expected one of {', '.join(PLANS)}")
    check_time_as(time_as)
    codec_options = dict(options or {})
    _check_options(protocol, codec_options)
    seeds = dict(schemas or {})
    clock = dict(partition_ts or {})
    factory = ADAPTERS.get(protocol)
    session_zone = df.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    adapter = None if plan == "python" or factory is None else factory(codec_options, session_zone, df.sparkSession)
    if adapter is None:
        from cdc_spark.decoding.python_plan import decode as decode_python

        return decode_python(df, protocol, codec_options, seeds, partition_ts=clock,
                             known_versions=known_versions, time_as=time_as)  # fmt: skip
    from cdc_spark.decoding import jvm_path

    return jvm_path.decode(df, adapter, codec_options, seeds, partition_ts=clock,
                           known_versions=known_versions, time_as=time_as)  # fmt: skip


__all__ = ["PLANS", "DecodedChanges", "decode"]
