"""Canal-JSON on the JVM path: every value is a string in TiDB's text form and every message carries its types.

A message is read in the JVM when it is a plain row message (INSERT, UPDATE, DELETE, INIT) that Canal's own
decoder would accept as it is: no claim-check or handle-key-only row, valid UTF-8, within ``max-message-bytes``,
every row naming the same columns, no table filter among the options. Watermarks are read in the JVM too; DDL
and everything else goes to the codec. A shape is a table's column list with its ``mysqlType``/``sqlType`` texts
and key columns: the codec decodes one sample of each, so every schema is exactly the codec's.

Where the session has the project's Java code, the envelope is read by ``cdc.spark.canal.CanalShape`` and the rows
typed by ``cdc.spark.canal.CanalRows`` (:mod:`~cdc_spark.decoding.java_rows`), from the message's bytes; otherwise by
``from_json`` and Spark SQL. A leniency of both: a JSON number where Canal puts a string is read as its text, where
the codec would reject the message. Text after the document sends the message to the codec either way (the SQL
envelope: :func:`~cdc_spark.decoding.adapter.documents`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.codec import Options
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.textual import resolve_zone, zone_name
from cdc_core.types import DataType
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Route, Sample, ShapeReaders
from cdc_spark.decoding.java_rows import JavaRows, TypedEnvelope
from cdc_spark.decoding.java_text import (
    EveryText,
    JavaDescriptors,
    JavaFirstReader,
    JavaText,
    integer_descriptor,
    member_names,
)
from cdc_spark.decoding.jvm_values import Typed, bounded, checked, every_reader, integer_text
from cdc_spark.decoding.literal_lookup import lookup
from cdc_spark.decoding.reuse import zoned_key
from cdc_spark.decoding.spark_types import decimal_shape

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


PROTOCOL: Final = "canal-json"
ENVELOPE: Final = (
    "database string, table string, pkNames array<string>, isDdl boolean, type string,"
    " sqlType map<string,int>, mysqlType map<string,string>,"
    " data array<map<string,string>>, old array<map<string,string>>,"
    " _tidb struct<commitTs:decimal(20,0), watermarkTs:decimal(20,0), onlyHandleKey:boolean,"
    " claimCheckLocation:string>"
)
ROWS_CLASS: Final = "cdc.spark.canal.CanalRows"
SHAPE_CLASS: Final = "cdc.spark.canal.CanalShape"
# What CanalShape reads of a message (kind: "row", "watermark" or null)
SHAPE_READ: Final = (
    "kind string, database string, table string, shape string, commit_ts bigint, watermark_ts bigint, rows int"
)
_LONG_MAX: Final = 2**63 - 1
_ROW_TYPES: Final = ("INSERT", "UPDATE", "DELETE", "INIT")
_OPS: Final = {"INSERT": "insert", "INIT": "insert", "UPDATE": "update", "DELETE": "delete"}
# Options under which the codec drops rows the envelope alone cannot judge.
_CODEC_ONLY_OPTIONS: Final = ("database.include", "table.include")


def _binary(text: Column) -> Typed:
    """Canal carries bytes as ISO-8859-1 text: a character above U+00FF is not a byte."""
    from pyspark.sql import functions as F

    return checked(text, F.when(~text.rlike("[^\\x00-\\xFF]"), F.encode(text, "ISO-8859-1")))


class CanalJavaText(JavaDescriptors):
    """The Java reader of a Canal-JSON column (its descriptor), as Canal's codec reads it: integers and BIT(n) held
    to their column's range; None where the SQL expressions read the type (or the codec does)."""

    def visit_int(self, data_type: DataType) -> str | None:
        return integer_descriptor(data_type, bounded=True)

    def visit_bit(self, data_type: DataType) -> str | None:
        return integer_descriptor(data_type, bounded=True)

    def visit_year(self, data_type: DataType) -> str | None:
        return integer_descriptor(data_type, bounded=False)

    def visit_float(self, data_type: DataType) -> str | None:
        return "float"

    def visit_double(self, data_type: DataType) -> str | None:
        return "double"

    def visit_decimal(self, data_type: DataType) -> str | None:
        shape = decimal_shape(data_type)
        return None if shape is None else f"decimal:{shape[0]}:{shape[1]}"

    def visit_date(self, data_type: DataType) -> str | None:
        return "date"

    def visit_datetime(self, data_type: DataType) -> str | None:
        return "datetime"

    def visit_timestamp(self, data_type: DataType) -> str | None:
        return f"timestamp:{self.zone}"


class CanalRowText(EveryText, CanalJavaText):
    """A reader for every column type Canal-JSON carries but spatial and vector ones, for the Java row typer
    (:mod:`~cdc_spark.decoding.java_rows`), which reads each value in Java: besides :class:`CanalJavaText`'s and
    :class:`~cdc_spark.decoding.java_text.EveryText`'s, ENUM, SET and bytes (ISO-8859-1 text)."""

    def visit_enum(self, data_type: DataType) -> str | None:
        return f"enum:{member_names(data_type)}"

    def visit_set(self, data_type: DataType) -> str | None:
        return f"set:{member_names(data_type)}"

    def visit_bytes(self, data_type: DataType) -> str | None:
        return "latin1"


class _CanalReader(JavaFirstReader):
    """TiDB's text forms, integers bounded by their column type as the codec bounds them, and binary columns as
    ISO-8859-1 text; with ``java``, the types it has readers for read by them (:mod:`~cdc_spark.decoding.java_text`)."""

    java_types = CanalJavaText

    def visit_int(self, data_type: DataType) -> A.Reader | None:
        return lambda text: bounded(integer_text(text, data_type), data_type)

    visit_bit = visit_int  # BIT(n) is integer text too, bounded by its width

    def visit_bytes(self, data_type: DataType) -> A.Reader | None:
        return _binary


def _within(row: Column, keys: Column) -> Column:
    """An old row that names only columns the data row has."""
    from pyspark.sql import functions as F

    return row.isNotNull() & (F.size(F.array_except(F.map_keys(row), keys)) == 0)


def _shape_digest(*arrays: Column) -> Column:
    """One hash of the arrays' elements in order, each array's size first (so no two different lists of arrays
    hash alike by their elements running on across a boundary). Hashing the type maps' key and value arrays is
    cheaper than printing the maps with ``to_json`` (200,000 messages parsed and digested: 0.69-0.72 s against
    0.82-1.01 s)."""
    from pyspark.sql import functions as F

    sized = [part for array in arrays for part in (F.coalesce(F.size(array), F.lit(-1)), array)]
    return F.xxhash64(*sized).cast("string")


@attrs.define
class CanalAdapter:
    options: Mapping[str, object]
    session_zone: str
    java: JavaText | None = None  # the session's Java readers, if it has them
    protocol: str = PROTOCOL
    # the shape digest covers all the codec's schema comes from (column names, both type maps, key names)
    readers_by_shape: bool = attrs.field(default=True, init=False)
    keeps_prepared_plans: bool = attrs.field(default=False, init=False)  # prepare builds its frame anew
    java_rows: JavaRows | None = attrs.field(init=False)  # the Java row typer, where the session has the Java
    _resolved: Options = attrs.field(init=False)
    _zone: str = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # as the codec's decoder reads them: encoder-only options and TiCDC's sink-URI parameters ignored (with the
        # codec's one warning), TiCDC's names of its own options taken
        self._resolved = get_codec(PROTOCOL).decoder_options(self.options)
        self._zone = zone_name(resolve_zone(str(self.options.get("time-zone") or "") or None))
        row_text = CanalRowText(self._zone)
        self.java_rows = JavaRows.of(
            self.java, ROWS_CLASS, lambda _shape, column: row_text.visit(column.data_type),
            TypedEnvelope(SHAPE_CLASS, SHAPE_READ),
        )  # fmt: skip

    def expressions_key(self) -> Hashable:
        return (zoned_key(self.protocol, self.options, self.session_zone, self._zone), self.java is not None)

    def _row_message(self, doc: Column) -> Column:
        from pyspark.sql import functions as F

        first_keys = F.map_keys(F.element_at(doc["data"], 1))
        value = F.col("value").cast("string")
        tidb = doc["_tidb"]
        single = F.size(doc["data"]) == 1  # TiCDC writes one row per message: no higher-order function for it
        return (
            doc.isNotNull()
            & A.readable(int(self._resolved["max-message-bytes"]))
            & doc["type"].isin(*_ROW_TYPES)
            & F.coalesce(~doc["isDdl"], F.instr(value, '"isDdl":') == 0)  # absent, not null or of another type
            & (F.instr(value, '"pkNames":') > 0)  # only a key can be written so: quotes in strings are escaped
            & doc["database"].isNotNull()
            & (F.length(doc["table"]) > 0)
            & (F.size(doc["data"]) >= 1)
            & F.when(single, F.element_at(doc["data"], 1).isNotNull()).otherwise(
                F.forall(doc["data"], lambda row: row.isNotNull() & (F.map_keys(row) == first_keys))
            )
            & F.when(
                doc["type"] == "UPDATE",
                (F.size(doc["old"]) == F.size(doc["data"]))
                & F.when(single, _within(F.element_at(doc["old"], 1), first_keys)).otherwise(
                    F.forall(doc["old"], lambda row: _within(row, first_keys))
                ),
            ).otherwise(F.lit(True))
            & F.coalesce(~tidb["onlyHandleKey"], F.lit(True))
            & tidb["claimCheckLocation"].isNull()
            & F.coalesce(tidb["commitTs"].between(0, _LONG_MAX), F.lit(True))
        )

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        if self.java_rows is not None:
            return self._prepare_in_java(messages, envelope)
        A.no_typed_envelope(self.protocol, envelope)
        from pyspark.sql import functions as F

        text = F.col("value").cast("string")
        parsed = messages.withColumn("__doc", A.documents(text, ENVELOPE))  # parsed once, read whole below
        doc = A.whole(F.col("__doc"))
        tidb = doc["_tidb"]
        watermark = (
            doc.isNotNull()
            & (doc["type"] == "TIDB_WATERMARK")
            & F.coalesce(~doc["isDdl"], F.lit(True))
            & tidb["watermarkTs"].between(0, _LONG_MAX)
        )
        shape = _shape_digest(
            F.map_keys(F.element_at(doc["data"], 1)),
            F.map_keys(doc["mysqlType"]),
            F.map_values(doc["mysqlType"]),
            F.map_keys(doc["sqlType"]),
            F.map_values(doc["sqlType"]),
            F.coalesce(doc["pkNames"], F.array().cast("array<string>")),
        )
        routed = self._routed(
            parsed, row=F.coalesce(self._row_message(doc), F.lit(False)), watermark=F.coalesce(watermark, F.lit(False)),
            database=doc["database"], table=doc["table"], shape=shape, watermark_ts=tidb["watermarkTs"],
            commit_ts=tidb["commitTs"], rows=F.size(doc["data"]),
        )  # fmt: skip
        # The batch is cached as prepared: only what rows() reads stays (not the type maps, key names, TiDB's
        # extension), a third less to write and hold.
        lean = F.struct(doc["type"].alias("type"), doc["data"].alias("data"), doc["old"].alias("old"))
        return routed.withColumn("__doc", lean)

    def _prepare_in_java(self, messages: DataFrame, envelope: str | None) -> DataFrame:
        """``prepare`` by the Java envelope reader (``CanalShape``), which keeps none of the rows: the Java row
        typer reads them from the message's text, which the batch's cache keeps. Made with a plan (``envelope``),
        the same reader types the rows of the plan's tables as it reads them (``A.TYPED``)."""
        from pyspark.sql import functions as F

        assert self.java is not None
        parsed = messages.withColumn("__read", self.java.envelope("cdc_canal_shape", SHAPE_CLASS, SHAPE_READ, envelope))
        read = F.col("__read")
        row = (read["kind"] == "row") & A.within_size(int(self._resolved["max-message-bytes"]))
        routed = self._routed(
            parsed, row=F.coalesce(row, F.lit(False)), watermark=F.coalesce(read["kind"] == "watermark", F.lit(False)),
            database=read["database"], table=read["table"], shape=read["shape"], watermark_ts=read["watermark_ts"],
            commit_ts=read["commit_ts"], rows=read["rows"],
        )  # fmt: skip
        return routed.drop("__read") if envelope is None else routed.withColumnRenamed("__read", A.TYPED)

    def _routed(
        self, parsed: DataFrame, *, row: Column, watermark: Column, database: Column, table: Column, shape: Column,
        watermark_ts: Column, commit_ts: Column, rows: Column,
    ) -> DataFrame:  # fmt: skip
        """``parsed`` with the columns ``prepare`` adds, from what was read of each message (``row``: a row
        message the JVM types; ``rows``: how many rows it has)."""
        from pyspark.sql import functions as F

        codec_only = any(self._resolved[name] for name in _CODEC_ONLY_OPTIONS)
        route = (
            F.when(F.lit(codec_only), F.lit(Route.PYTHON.value))
            .when(row, F.lit(Route.JVM.value))
            .when(watermark, F.lit(Route.WATERMARK.value))
            .otherwise(F.lit(Route.PYTHON.value))
        )
        ts = F.when(F.col(A.ROUTE) == Route.WATERMARK, watermark_ts).otherwise(commit_ts)
        derived = {  # all name the route only: one analysis of the plan for them, not one per column
            A.DATABASE: database,
            A.TABLE: table,
            A.SHAPE: F.when(F.col(A.ROUTE) == Route.JVM, shape),
            A.TS: F.when(ts.between(0, _LONG_MAX), ts.cast("long")),
            A.RANK: A.rank(F.coalesce(rows - 1, F.lit(0))),
            A.SAMPLE: F.col(A.ROUTE) == Route.JVM,
        }
        routed: DataFrame = parsed.withColumn(A.ROUTE, route).withColumns(derived)
        return routed

    def records(self, prepared: DataFrame) -> list[str] | None:
        return None  # a message holds several changes, in its data array

    def rows(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        if "__doc" not in prepared.columns:  # prepared for the Java row typer: parsed here for the SQL typing
            prepared = prepared.withColumn("__doc", F.from_json(F.col("value").cast("string"), ENVELOPE))
        doc = F.col("__doc")
        exploded = prepared.select(
            *[c for c in prepared.columns if not c.startswith("__")],
            A.DATABASE, A.TABLE, A.SHAPE, A.TS, doc["type"].alias("__type"), doc["old"].alias("__olds"),
            F.posexplode(doc["data"]).alias(A.POSITION, "__row"),
        )  # fmt: skip
        row, kind = F.col("__row"), F.col("__type")
        old = F.element_at(F.col("__olds"), F.col(A.POSITION) + 1)
        update, delete = kind == "UPDATE", kind == "DELETE"
        op = lookup(_OPS, kind)
        return exploded.select(
            *[c for c in exploded.columns if not c.startswith("__")],
            A.DATABASE, A.TABLE, A.SHAPE, A.TS, A.POSITION,
            op.alias(A.OP),
            F.lit(None).cast("long").alias(A.VERSION),
            F.when(~delete, row).alias(A.AFTER),
            F.when(delete, row).when(update, old).alias(A.BEFORE),
            F.when(update, row).alias(A.BEFORE_BASE),  # old names only what changed (or every column)
            F.when(update & (F.size(old) != F.size(row)), old).alias(A.CHANGED_FROM),
        )  # fmt: skip

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema] = ()
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        shapes = A.codec_schemas(PROTOCOL, self.options, samples)
        return {sample.key: None if schema is None else self._readers(schema) for sample, schema in shapes}

    def _readers(self, schema: TableSchema) -> ShapeReaders | None:
        """None when a column has no reader here (spatial or array columns: the codec)."""
        read = _CanalReader(self._zone, self.session_zone, self.java)
        readers = every_reader((c.name, read.visit(c.data_type)) for c in schema.stored_columns)
        if readers is None:
            return None
        signatures = {c.name: c.data_type for c in schema.stored_columns}
        return ShapeReaders(schema=schema, readers=readers, signatures=signatures)


def adapter(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: A.AdapterState
) -> A.Adapter:
    """Canal-JSON's JVM rules for a batch (entry point ``canal-json`` of ``cdc_spark.decode_adapters``)."""
    return CanalAdapter(options, session_zone, java=JavaText.of(spark))


__all__ = ["CanalAdapter", "CanalJavaText", "CanalRowText", "adapter"]
