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
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.codec import Options
from cdc_core.errors import CdcError
from cdc_core.registry import get_codec
from cdc_core.schema import Column as TableColumn
from cdc_core.schema import TableSchema
from cdc_core.types import DataType, MySQLType
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import ParsedReader, Route, Sample, ShapeReaders
from cdc_spark.decoding.canal import CanalJavaText
from cdc_spark.decoding.java_rows import JavaRows, TypedEnvelope
from cdc_spark.decoding.java_text import (
    INTEGRAL,
    EveryText,
    JavaFirstReader,
    JavaText,
    integer_descriptor,
    member_names,
)
from cdc_spark.decoding.jvm_values import (
    DIGITS,
    Typed,
    checked,
    enum_name,
    every_reader,
    integral,
    set_from_bits,
    timestamp_text,
)
from cdc_spark.decoding.literal_lookup import lookup
from cdc_spark.decoding.reuse import options_key
from cdc_spark.decoding.spark_types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


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
ROWS_CLASS: Final = "cdc.spark.simple.SimpleRows"
SHAPE_CLASS: Final = "cdc.spark.simple.SimpleShape"
# What SimpleShape reads of a message (kind: "row", "watermark", "schema" or null)
SHAPE_READ: Final = (
    "kind string, database string, table string, commit_ts bigint, schema_version bigint, checksum boolean"
)


def _unsigned(number: Column) -> Column:
    """A 64-bit two's-complement integer read as unsigned, as the codec's ``& (2**64 - 1)``."""
    from pyspark.sql import functions as F

    span = F.lit(str(2**64)).cast("decimal(21,0)")
    return F.when(number < 0, number + span).otherwise(number)


def _wide(text: Column) -> Column:
    return integral(text).try_cast("decimal(20,0)")


def _unsigned_integer(text: Column, data_type: DataType) -> Typed:
    """Unsigned integers and BIT: digits, negative ones wrapped to 64 bits."""
    from pyspark.sql import functions as F

    value = _unsigned(_wide(text))
    below = value < F.lit(str(2**64)).cast("decimal(21,0)")
    return checked(text, F.when(below, value.try_cast(spark_type(data_type))))


def _enum_index(text: Column, data_type: DataType) -> Typed:
    """ENUM: the 1-based index."""
    from pyspark.sql import functions as F

    return checked(text, F.when(text.rlike(DIGITS), enum_name(text, data_type)))


def _set_bits(text: Column, data_type: DataType) -> Typed:
    """SET: the bitmask (a negative one is refused); without member names, the bitmask itself as text."""
    from pyspark.sql import functions as F

    wide = _wide(text)
    if not data_type.elements:
        return checked(text, F.when(wide >= 0, F.array(_unsigned(wide).cast("string"))))
    return checked(text, set_from_bits(F.when(wide >= 0, wide.try_cast("long")), list(data_type.elements)))


def _timestamp(zone: str, session_zone: str) -> ParsedReader:
    """``{"location": ZONE, "value": LOCAL}``; a location other than the sample's goes to the codec."""
    return ParsedReader(schema=_TIMESTAMP_TEXT, read=lambda text, parts: _located(text, parts, zone, session_zone))


def _located(text: Column, parts: Column, zone: str, session_zone: str) -> Typed:
    """A TIMESTAMP's ``text`` read from its parse (``parts``)."""
    from pyspark.sql import functions as F

    local = parts["value"]
    typed = timestamp_text(local, zone, session_zone)
    same_zone = parts["location"] == zone
    return Typed(
        value=F.when(same_zone, typed.value),
        bad=text.isNotNull() & (~F.coalesce(same_zone, F.lit(False)) | local.isNull() | typed.bad),
        zero=F.when(same_zone, typed.zero),
    )


def _binary(text: Column) -> Typed:
    from pyspark.sql import functions as F

    return checked(text, F.try_to_binary(text, F.lit("base64")))


class SimpleJavaText(CanalJavaText):
    """The Java reader of a Simple JSON column: Canal's, except that integers are held to their Spark type only (the
    codec does not bound them), a TIMESTAMP is its ``{"location", "value"}`` object (read where the location is
    the column's ``zone``, the sample's), and unsigned integers and BIT (which Simple may write as negative 64-bit
    numbers) are the SQL readers'."""

    def visit_int(self, data_type: DataType) -> str | None:
        return None if data_type.unsigned else integer_descriptor(data_type, bounded=False)

    def visit_bit(self, data_type: DataType) -> str | None:
        return None

    def visit_timestamp(self, data_type: DataType) -> str | None:
        return f"located:{self.zone}"


class SimpleRowText(EveryText, SimpleJavaText):
    """A reader for every column type Simple JSON carries but spatial and vector ones, for the Java row typer: besides
    :class:`SimpleJavaText`'s and :class:`~cdc_spark.decoding.java_text.EveryText`'s, unsigned integers and BIT
    (digits that may be a negative 64-bit number), ENUM (its index), SET (its bitmask) and bytes (base64)."""

    def visit_int(self, data_type: DataType) -> str | None:
        return _unsigned_descriptor(data_type) if data_type.unsigned else super().visit_int(data_type)

    def visit_bit(self, data_type: DataType) -> str | None:
        return _unsigned_descriptor(data_type)

    def visit_enum(self, data_type: DataType) -> str | None:
        return f"enum-index:{member_names(data_type)}"

    def visit_set(self, data_type: DataType) -> str | None:
        return f"set-bits:{member_names(data_type)}"

    def visit_bytes(self, data_type: DataType) -> str | None:
        return "base64"


def _unsigned_descriptor(data_type: DataType) -> str:
    """Simple's unsigned digits, held to the column's Spark type only (its codec does not bound them)."""
    reader, _, high = INTEGRAL[spark_type(data_type).typeName()]
    return f"unsigned:{reader}:{min(high, 2**63 - 1)}"  # a decimal(20,0) holds every unsigned 64-bit number


class _SimpleReader(JavaFirstReader):
    """TiDB's text forms, except: TIMESTAMP as ``{location, value}``, binary as base64, and BIT, ENUM, SET and
    unsigned integers as (unsigned) digits; with ``java``, the types it has readers for read by them
    (:mod:`~cdc_spark.decoding.java_text`)."""

    java_types = SimpleJavaText

    def visit_int(self, data_type: DataType) -> A.Reader | None:
        if data_type.unsigned:
            return lambda text: _unsigned_integer(text, data_type)
        return super().visit_int(data_type)

    def visit_bit(self, data_type: DataType) -> A.Reader | None:
        return lambda text: _unsigned_integer(text, data_type)

    def visit_enum(self, data_type: DataType) -> A.Reader | None:
        return lambda text: _enum_index(text, data_type)

    def visit_set(self, data_type: DataType) -> A.Reader | None:
        return lambda text: _set_bits(text, data_type)

    def visit_timestamp(self, data_type: DataType) -> A.Reader | None:
        zone, session_zone = self.zone, self.session_zone
        return _timestamp(zone, session_zone)

    def visit_bytes(self, data_type: DataType) -> A.Reader | None:
        return _binary


@attrs.define
class SimpleAdapter:
    options: Mapping[str, object]
    session_zone: str
    java: JavaText | None = None  # the session's Java readers, if it has them
    protocol: str = PROTOCOL
    # A shape is a table's schema version: the readers hold for every message of it where its schema is the same
    # (``ShapeReaders.by_version``: a later batch's known schemas must hold it). They also take each TIMESTAMP
    # column's location from the sample, but read a value only where its own location is that one (any other is the
    # codec's); readers whose sample had no location for a TIMESTAMP column (its value null) are not kept
    # (``ShapeReaders.reusable``).
    readers_by_shape: bool = attrs.field(default=True, init=False)
    keeps_prepared_plans: bool = attrs.field(default=False, init=False)  # prepare builds its frame anew
    java_rows: JavaRows | None = attrs.field(init=False)  # the Java row typer, where the session has the Java
    _resolved: Options = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # as the codec's decoder reads them: encoder-only options and TiCDC's sink-URI parameters ignored (with the
        # codec's one warning), TiCDC's names of its own options taken
        self._resolved = get_codec(PROTOCOL).decoder_options(self.options)
        self.java_rows = JavaRows.of(self.java, ROWS_CLASS, _row_descriptor, TypedEnvelope(SHAPE_CLASS, SHAPE_READ))

    def expressions_key(self) -> Hashable:
        # each column's timestamp zone comes from its shape's sample and is in the shape's signatures
        return (self.protocol, options_key(self.options), self.session_zone, self.java is not None)

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        if self.java_rows is not None:
            return self._prepare_in_java(messages, envelope)
        A.no_typed_envelope(self.protocol, envelope)
        from pyspark.sql import functions as F

        text = F.col("value").cast("string")
        # parsed in a projection of its own (each reference parses again), the envelope kept for rows()
        parsed = messages.withColumn("__docs", A.documents(text, ENVELOPE))
        parsed = parsed.withColumn("__doc", A.whole(F.col("__docs"))).drop("__docs")
        doc = F.col("__doc")
        kind = doc["type"]
        commit_ts = doc["commitTs"]
        verify = self._resolved["integrity-check-level"] == "correctness"
        row = (
            doc.isNotNull()
            & A.readable(int(self._resolved["max-message-bytes"]))
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
        return _routed(
            parsed, row=row, watermark=watermark, schema_message=schema_message,
            database=F.coalesce(doc["database"], doc["tableSchema"]["schema"], doc["preTableSchema"]["schema"]),
            table=F.coalesce(doc["table"], doc["tableSchema"]["table"], doc["preTableSchema"]["table"]),
            schema_version=doc["schemaVersion"], commit_ts=commit_ts,
        )  # fmt: skip

    def _prepare_in_java(self, messages: DataFrame, envelope: str | None) -> DataFrame:
        """``prepare`` by the Java envelope reader (``SimpleShape``), which keeps none of the values: the Java row
        typer reads them from the message, which the batch's cache keeps. Made with a plan (``envelope``), the same
        reader types the rows of the plan's tables as it reads them (``A.TYPED``)."""
        from pyspark.sql import functions as F

        assert self.java is not None
        parsed = messages.withColumn(
            "__read", self.java.envelope("cdc_simple_shape", SHAPE_CLASS, SHAPE_READ, envelope)
        )
        read = F.col("__read")
        verify = self._resolved["integrity-check-level"] == "correctness"
        row = (
            (read["kind"] == "row")
            & A.within_size(int(self._resolved["max-message-bytes"]))
            & (~read["checksum"] | F.lit(not verify))
        )
        routed = _routed(
            parsed, row=row, watermark=read["kind"] == "watermark", schema_message=read["kind"] == "schema",
            database=read["database"], table=read["table"], schema_version=read["schema_version"],
            commit_ts=read["commit_ts"],
        )  # fmt: skip
        routed = routed.withColumn(A.VERSION, read["schema_version"])  # for the Java row typer
        return routed.drop("__read") if envelope is None else routed.withColumnRenamed("__read", A.TYPED)

    def records(self, prepared: DataFrame) -> list[str] | None:
        return None  # a message holds several changes, read into the maps of ``rows``

    def rows(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        if "__doc" not in prepared.columns:  # prepared for the Java row typer: parsed here for the SQL typing
            prepared = prepared.withColumn("__doc", F.from_json(F.col("value").cast("string"), ENVELOPE))
        doc = F.col("__doc")
        op = lookup(_OPS, doc["type"])
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
            key = sample.key
            schema = decoder.schema(sample.database, sample.table, int(sample.shape))
            described[key] = None if schema is None else self._readers(schema, sample)
        return described

    def _readers(self, schema: TableSchema, sample: Sample) -> ShapeReaders | None:
        """None when a column has no reader here (spatial or array columns: the codec)."""
        zones = _timestamp_zones(sample)
        readers = every_reader(
            (c.name, _SimpleReader(zones.get(c.name, "UTC"), self.session_zone, self.java).visit(c.data_type))
            for c in schema.stored_columns
        )
        if readers is None:
            return None
        signatures = {c.name: (c.data_type, zones.get(c.name, "UTC")) for c in schema.stored_columns}
        located = all(c.name in zones for c in schema.stored_columns if c.data_type.mysql_type is MySQLType.TIMESTAMP)
        return ShapeReaders(schema=schema, readers=readers, signatures=signatures, reusable=located, by_version=True)


def _routed(
    parsed: DataFrame, *, row: Column, watermark: Column, schema_message: Column, database: Column, table: Column,
    schema_version: Column, commit_ts: Column,
) -> DataFrame:  # fmt: skip
    """``parsed`` with the columns ``prepare`` adds, from what was read of each message (``row``: a row message the
    JVM types; ``schema_message``: one that teaches a schema version)."""
    from pyspark.sql import functions as F

    route = (
        F.when(F.col("value").isNull(), F.lit(Route.SKIP.value))
        .when(F.coalesce(row, F.lit(False)), F.lit(Route.JVM.value))
        .when(F.coalesce(watermark, F.lit(False)), F.lit(Route.WATERMARK.value))
        .otherwise(F.lit(Route.PYTHON.value))
    )
    # A schema message teaches a version: its shape is the message itself (one sample each).
    shape = F.when(F.col(A.ROUTE) == Route.JVM, schema_version.cast("string")).when(
        F.coalesce(schema_message, F.lit(False)),
        F.concat_ws(":", F.lit("schema"), F.col("topic"), F.col("partition"), F.col("offset")),
    )
    # each level names only the ones before it: one analysis of the plan per level, not per column
    derived = {
        # a schema message names its table in its (pre) table schema
        A.DATABASE: database,
        A.TABLE: table,
        A.SHAPE: shape,
        A.TS: F.when(commit_ts.between(0, _LONG_MAX), commit_ts.cast("long")),
        A.RANK: A.rank(F.lit(0)),
    }
    routed = parsed.withColumn(A.ROUTE, route).withColumns(derived)
    return routed.withColumn(A.SAMPLE, F.col(A.SHAPE).isNotNull())


def _row_descriptor(shape: ShapeReaders, column: TableColumn) -> str | None:
    """A column's Java reader in a shape: TIMESTAMPs read where the location is the shape's sample's."""
    signature = shape.signatures.get(column.name)
    zone = signature[1] if isinstance(signature, tuple) else "UTC"  # describe's (data type, zone)
    return SimpleRowText(str(zone)).visit(column.data_type)


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


def adapter(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: A.AdapterState
) -> A.Adapter | None:
    """Simple's JVM rules for a batch (entry point ``simple`` of ``cdc_spark.decode_adapters``); none for its Avro
    encoding, which the codec decodes."""
    if str(options.get("encoding-format", "json")) != "json":
        return None
    return SimpleAdapter(options, session_zone, java=JavaText.of(spark))


__all__ = ["SimpleAdapter", "SimpleJavaText", "SimpleRowText", "adapter"]
