"""Each protocol's JVM rules, made for a batch: the adapter modules are imported only when their protocol is decoded.

A new protocol's rules are one adapter module (:class:`~cdc_spark.decoding.adapter.Adapter`) and one entry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_spark.decoding.adapter import Adapter
    from cdc_spark.decoding.decoder import AdapterFactory, Decoder


def _canal(options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: Decoder) -> Adapter | None:
    from cdc_spark.decoding.canal import CanalAdapter
    from cdc_spark.decoding.java_text import JavaText

    return CanalAdapter(options, session_zone, java=JavaText.of(spark))


def _debezium(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: Decoder
) -> Adapter | None:
    from cdc_spark.decoding.debezium import DebeziumAdapter

    return DebeziumAdapter(options, session_zone)


def _debezium_avro(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: Decoder
) -> Adapter | None:
    from cdc_spark.decoding.debezium_avro import DebeziumAvroAdapter

    return DebeziumAvroAdapter(options, session_zone)


def _simple(options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: Decoder) -> Adapter | None:
    if str(options.get("encoding-format", "json")) != "json":
        return None  # Simple's Avro encoding: the codec (no JVM rules yet)
    from cdc_spark.decoding.java_text import JavaText
    from cdc_spark.decoding.simple import SimpleAdapter

    return SimpleAdapter(options, session_zone, java=JavaText.of(spark))


def _avro(options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: Decoder) -> Adapter | None:
    if not str(options.get("schema-registry") or ""):
        return None  # Glue-framed data only: the codec
    from cdc_spark.decoding.avro import AvroAdapter
    from cdc_spark.decoding.java_text import JavaText

    return AvroAdapter(options, session_zone, decoder.avro_columns, java=JavaText.of(spark))


ADAPTERS: Final[Mapping[str, AdapterFactory]] = {
    "canal-json": _canal,
    "debezium": _debezium,
    "debezium-avro": _debezium_avro,
    "simple": _simple,
    "avro": _avro,
}

__all__ = ["ADAPTERS"]
