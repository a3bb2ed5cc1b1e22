"""TiCDC Simple (JSON encoding) on the JVM path: row messages name their table's schema version.

DML messages carry no types: each names ``schemaVersion``, whose schema came in a BOOTSTRAP or DDL message, of this
batch or an earlier one. Those schema messages are sampled (one per version, the only payloads that reach the
driver) and decoded there in commit order, then every DML shape ``(table, version)`` whose schema is known is typed
in the JVM: values are TiDB's text forms, except TIMESTAMP (``{location, value}``: local time in that zone) and
binary (base64). Rows of a version never seen, handle-key-only and claim-check rows, rows with a checksum to verify,
and every schema message (for its control row) go to the codec, which holds and releases rows as it always does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.codec import Options
from cdc_core.errors import CdcError
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.types import DataType, LogicalType
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Route, Sample, ShapeReaders
from cdc_spark.decoding.jvm_values import (
    DIGITS,
    TEXT_TYPES,
    Typed,
    checked,
    integral,
    member_names,
    set_from_bits,
    temporal_text,
    text_value,
)
from cdc_spark.decoding.spark_types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PROTOCOL: Final = "simple"
ENVELOPE: Final = (
    "version bigint, type string, database string, table string, commitTs decimal(20,0), schemaVersion bigint,"
    " data map<string,string>, old map<string,string>, handleKeyOnly boolean, claimCheckLocation string,"
    " checksum string, tableSchema struct<schema:string, table:string>,"
    " preTableSchema struct<schema:string, table:string>"
)
_LONG_MAX: Final = 2**63 - 1
_OPS: Final = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
_SCHEMA_TYPES: Final = ("BOOTSTRAP", "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "RECOVER", "ERASE", "QUERY")
_TIMESTAMP_TEXT: Final = "struct<location:string, value:string>"
READABLE: Final = TEXT_TYPES | {LogicalType.BYTES}


def _unsigned(number: Column) -> Column:
    """A 64-bit two's-complement integer read as unsigned, as the codec's ``& (2**64 - 1)``."""
    from pyspark.sql import functions as F

    span = F.lit(str(2**64)).cast("decimal(21,0)")
    return F.when(number < 0, number + span).otherwise(number)


def _integral(text: Column, data_type: DataType) -> Typed:
    """INT, YEAR, BIT, ENUM and SET values: digits (BIT and negative unsigned integers wrap to 64 bits)."""
    from pyspark.sql import functions as F

    wide = integral(text).try_cast("decimal(20,0)")
    logical = data_type.logical
    if logical is LogicalType.ENUM:
        return checked(text, F.when(text.rlike(DIGITS), member_names(text, data_type)))
    if logical is LogicalType.SET:
        if not data_type.elements:
            return checked(text, F.when(wide >= 0, F.array(_unsigned(wide).cast("string"))))
        return checked(text, set_from_bits(F.when(wide >= 0, wide.try_cast("long")), list(data_type.elements)))
    if logical is LogicalType.BIT or data_type.unsigned:
        value = _unsigned(wide)
        below = value < F.lit(str(2**64)).cast("decimal(21,0)")
        return checked(text, F.when(below, value.try_cast(spark_type(data_type))))
    return checked(text, wide.try_cast(spark_type(data_type)))


def _timestamp(text: Column, data_type: DataType, zone: str, session_zone: str) -> Typed:
    """``{"location": ZONE, "value": LOCAL}``; a location other than the sample's goes to the codec."""
    from pyspark.sql import functions as F

    parts = F.from_json(text, _TIMESTAMP_TEXT)
    local = parts["value"]
    typed = temporal_text(local, data_type, zone, session_zone)
    same_zone = parts["location"] == zone
    return Typed(
        value=F.when(same_zone, typed.value),
        bad=text.isNotNull() & (~F.coalesce(same_zone, F.lit(False)) | local.isNull() | typed.bad),
        zero=F.when(same_zone, typed.zero),
    )


def _binary(text: Column) -> Typed:
    from pyspark.sql import functions as F

    return checked(text, F.try_to_binary(text, F.lit("base64")))


@attrs.define
class SimpleAdapter:
    options: Mapping[str, object]
    session_zone: str
    protocol: str = PROTOCOL
    _resolved: Options = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        codec = get_codec(PROTOCOL)
        self._resolved = Options([s for s in codec.options if s.for_decoder], dict(self.options), protocol=PROTOCOL)

    def prepare(self, messages: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        text = F.col("value").cast("string")
        parsed = messages.withColumn("__doc", F.from_json(text, ENVELOPE))
        doc = F.col("__doc")
        kind = doc["type"]
        commit_ts = doc["commitTs"]
        verify = self._resolved["integrity-check-level"] == "correctness"
        row = (
            doc.isNotNull()
            & F.is_valid_utf8(text)
            & (F.length(F.col("value")) <= int(self._resolved["max-message-bytes"]))
            & (doc["version"] == 1)
            & kind.isin(*_OPS)
            & doc["database"].isNotNull()
            & doc["table"].isNotNull()
            & doc["schemaVersion"].isNotNull()
            & commit_ts.between(0, _LONG_MAX)
            & F.when(kind == "INSERT", doc["data"].isNotNull())
            .when(kind == "UPDATE", doc["data"].isNotNull() & doc["old"].isNotNull())
            .otherwise(doc["old"].isNotNull())
            & F.coalesce(~doc["handleKeyOnly"], F.lit(True))
            & doc["claimCheckLocation"].isNull()
            & (doc["checksum"].isNull() | F.lit(not verify))
        )
        watermark = doc.isNotNull() & (doc["version"] == 1) & (kind == "WATERMARK") & commit_ts.between(0, _LONG_MAX)
        schema_message = doc.isNotNull() & kind.isin(*_SCHEMA_TYPES)
        route = (
            F.when(F.col("value").isNull(), F.lit(Route.SKIP.value))
            .when(F.coalesce(row, F.lit(False)), F.lit(Route.JVM.value))
            .when(F.coalesce(watermark, F.lit(False)), F.lit(Route.WATERMARK.value))
            .otherwise(F.lit(Route.PYTHON.value))
        )
        # A schema message teaches a version: its shape is the message itself (one sample each).
        shape = F.when(F.col(A.ROUTE) == Route.JVM, doc["schemaVersion"].cast("string")).when(
            F.coalesce(schema_message, F.lit(False)),
            F.concat_ws(":", F.lit("schema"), F.col("topic"), F.col("partition"), F.col("offset")),
        )
        ts = commit_ts.cast("long")
        return (
            parsed.withColumn(A.ROUTE, route)
            # a schema message names its table in its (pre) table schema
            .withColumn(
                A.DATABASE, F.coalesce(doc["database"], doc["tableSchema"]["schema"], doc["preTableSchema"]["schema"])
            )
            .withColumn(A.TABLE, F.coalesce(doc["table"], doc["tableSchema"]["table"], doc["preTableSchema"]["table"]))
            .withColumn(A.SHAPE, shape)
            .withColumn(A.TS, F.when(commit_ts.between(0, _LONG_MAX), ts))
            .withColumn(
                A.RANK,
                F.struct(
                    F.coalesce(F.col(A.TS), F.lit(-1).cast("long")).alias("ts"),
                    F.coalesce(F.col("partition"), F.lit(0)).alias("partition"),
                    F.coalesce(F.col("offset"), F.lit(0).cast("long")).alias("offset"),
                    F.lit(0).alias("position"),
                ),
            )
            .withColumn(A.SAMPLE, F.col(A.SHAPE).isNotNull())
        )

    def rows(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        doc = F.col("__doc")
        op = F.create_map(*[x for wire, name in _OPS.items() for x in (F.lit(wire), F.lit(name))])[doc["type"]]
        return prepared.select(
            *[c for c in prepared.columns if not c.startswith("__")],
            A.DATABASE, A.TABLE, A.SHAPE, A.TS,
            F.lit(0).alias(A.POSITION),
            op.alias(A.OP),
            doc["schemaVersion"].alias(A.VERSION),
            F.when(doc["type"] != "DELETE", doc["data"]).alias(A.AFTER),
            F.when(doc["type"] != "INSERT", doc["old"]).alias(A.BEFORE),
            F.lit(None).cast("map<string,string>").alias(A.BEFORE_BASE),
            F.lit(None).cast("map<string,string>").alias(A.CHANGED_FROM),
        )  # fmt: skip

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema] = ()
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        decoder: Any = get_codec(PROTOCOL).decoder(dict(self.options))
        for schema in known:
            decoder.prime(schema)
        # schema messages first, oldest first: they teach the versions the rows name
        for sample in sorted((s for s in samples if not s.jvm and s.message is not None), key=lambda s: s.rank):
            try:
                decoder.decode(sample.message)
            except CdcError:
                continue  # the codec reports it again in the executors
        described: dict[tuple[str, str, str], ShapeReaders | None] = {}
        for sample in samples:
            if not sample.jvm or sample.message is None:
                continue
            key = (sample.database, sample.table, sample.shape)
            schema = decoder.schema(sample.database, sample.table, int(sample.shape))
            readable = schema is not None and all(c.data_type.logical in READABLE for c in schema.stored_columns)
            described[key] = self._readers(schema, sample) if schema is not None and readable else None
        return described

    def _readers(self, schema: TableSchema, sample: Sample) -> ShapeReaders:
        zones = _timestamp_zones(sample)
        readers: dict[str, A.Reader] = {}
        signatures: dict[str, Any] = {}
        for column in schema.stored_columns:
            zone = zones.get(column.name, "UTC")
            readers[column.name] = self._reader(column.data_type, zone)
            signatures[column.name] = (column.data_type, zone)
        return ShapeReaders(schema=schema, readers=readers, signatures=signatures)

    def _reader(self, data_type: DataType, zone: str) -> A.Reader:
        logical, session_zone = data_type.logical, self.session_zone
        if logical is LogicalType.BYTES:
            return _binary
        if logical is LogicalType.TIMESTAMP:
            return lambda text: _timestamp(text, data_type, zone, session_zone)
        if logical in (LogicalType.BIT, LogicalType.ENUM, LogicalType.SET) or (
            logical is LogicalType.INT and data_type.unsigned
        ):
            return lambda text: _integral(text, data_type)
        return lambda text: text_value(text, data_type, zone, session_zone)


def _timestamp_zones(sample: Sample) -> dict[str, str]:
    """The ``location`` of each TIMESTAMP value in the sample (TiCDC writes one zone per changefeed)."""
    try:
        document = json.loads(sample.message.value or b"") if sample.message is not None else None
    except ValueError:
        return {}
    zones: dict[str, str] = {}
    for image in ("data", "old"):
        values = document.get(image) if isinstance(document, dict) else None
        for name, value in (values or {}).items() if isinstance(values, dict) else ():
            if isinstance(value, dict) and isinstance(value.get("location"), str):
                zones[name] = value["location"]
    return zones


__all__ = ["SimpleAdapter"]
