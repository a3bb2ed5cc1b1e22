"""Canal-JSON decoded in the JVM: ``from_json`` and typed casts instead of a Python codec per message.

Canal-JSON is the protocol whose rows Spark can type by itself: every value is a string and every message carries
its column types. The plan for one micro-batch:

1. ``from_json`` parses each value into the envelope (names, type, ``_tidb``, ``mysqlType``, ``data``/``old``
   as string maps). A message is *eligible* when it is a plain row message the Python decoder would accept as
   it is (no claim-check, no handle-key-only row, valid UTF-8, within ``max-message-bytes``, no table filter).
2. Eligible messages are grouped by table shape (names, column list, types, keys); the driver decodes one sample
   per shape with the real codec, so every table's schema is exactly the codec's. Per table the newest shape
   wins (commit ts, then partition, offset, position: the executor decoder's rule).
3. Each column is cast in Spark from its text to the contract's type (see ``_typed``); the few types whose text
   Spark cannot read exactly (TIME, JSON, VECTOR, DECIMAL over 38 digits) go through a vectorized Python UDF that
   applies the codec's own parser. A value that does not convert marks its table as not native for this batch.
4. Every message that is not eligible, and every message of a table that is not native in this batch (a shape
   change of a column's type, a bad value, a DDL such as TRUNCATE), goes through the executor decoder
   (:mod:`cdc_spark.decode`), which yields control rows, dead letters and those tables' changes.

The result equals the executor decoder's row for row on well-formed input (a test checks it). On malformed input
both dead-letter what they cannot decode; the native path is more lenient in one way, documented in
docs/spark-source-decode.md: a JSON number where Canal puts a string is read as its text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.codec import Options
from cdc_core.errors import CdcError
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.textual import resolve_zone, zone_name
from cdc_core.types import DataType, LogicalType, LogicalTypeVisitor, by_logical_type
from cdc_spark.driver_decode import CONTROL_SCHEMA, DEAD_LETTER_SCHEMA, spark_type, spark_value
from cdc_spark.partition_clock import PartitionKey, merge_clocks

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

PROTOCOL: Final = "canal-json"
ENVELOPE: Final = (
    "database string, table string, pkNames array<string>, isDdl boolean, type string,"
    " sqlType map<string,int>, mysqlType map<string,string>,"
    " data array<map<string,string>>, old array<map<string,string>>,"
    " _tidb struct<commitTs:decimal(20,0), onlyHandleKey:boolean, claimCheckLocation:string>"
)
_LONG_MAX: Final = 2**63 - 1
_ROW_TYPES: Final = ("INSERT", "UPDATE", "DELETE", "INIT")
_OPS: Final = {"INSERT": "insert", "INIT": "insert", "UPDATE": "update", "DELETE": "delete"}
# Options under which the Python decoder drops or rewrites rows the envelope alone cannot judge.
_PYTHON_ONLY_OPTIONS: Final = ("database.include", "table.include")
_DATE: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_DATETIME: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?$"
_INTEGER: Final = r"^-?[0-9]+$"
_DIGITS: Final = r"^[0-9]+$"


@attrs.frozen
class Typed:
    """One column of one row image: its Spark value, whether its text failed to convert, its zero-date text."""

    value: Column
    bad: Column
    zero: Column | None = None


def _zero_date(text: Column) -> Column:
    from pyspark.sql import functions as F

    return (F.substring(text, 1, 4) == "0000") | (F.substring(text, 6, 2) == "00") | (F.substring(text, 9, 2) == "00")


def _python_column(data_type: DataType, options: Mapping[str, object]) -> Callable[[Column], Column]:
    """The codec's own parser as an Arrow-batched UDF returning ``struct<v, bad>`` (types Spark cannot cast)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from cdc_canal.inbound import make_parser  # the protocol package is installed when its protocol is used

    zone = resolve_zone(str(options.get("time-zone") or "") or None)
    parse = make_parser(data_type, zone)
    result = T.StructType([T.StructField("v", spark_type(data_type)), T.StructField("bad", T.BooleanType())])

    def convert(text: str | None) -> tuple[Any, bool]:
        if text is None:
            return None, False
        try:
            return spark_value(parse(text), data_type), False
        except (ValueError, ArithmeticError):
            return None, True

    return F.udf(convert, result, useArrow=True)


class _NativeReading(LogicalTypeVisitor[Typed]):
    """Spark's reading of one Canal-JSON value text as the contract's type of a column."""

    def __init__(self, text: Column, zone: str, session_zone: str, udfs: dict[DataType, Any]) -> None:
        from pyspark.sql import functions

        self.F = functions
        self.text = text
        self.zone = zone
        self.session_zone = session_zone
        self.udfs = udfs
        self.present = text.isNotNull()

    def _checked(self, value: Column) -> Typed:
        return Typed(value=value, bad=self.present & value.isNull())

    def _cast(self, data_type: DataType) -> Typed:
        return self._checked(self.text.try_cast(spark_type(data_type)))

    def _integer(self, data_type: DataType) -> Typed:
        return self._checked(self.F.when(self.text.rlike(_INTEGER), self.text.try_cast(spark_type(data_type))))

    def _python(self, data_type: DataType) -> Typed:
        # the codec's parser, batched through Arrow
        converted = self.udfs[data_type](self.text)
        return Typed(value=converted["v"], bad=self.present & converted["bad"])

    def _temporal(self, pattern: str, to_value: Callable[[Column], Column]) -> Typed:
        text, F = self.text, self.F
        shape = text.rlike(pattern)
        zero = self.present & shape & _zero_date(text)
        value = F.when(shape & ~zero, to_value(text))
        return Typed(value=value, bad=self.present & ~zero & value.isNull(), zero=F.when(zero, text))

    def visit_int(self, data_type: DataType) -> Typed:
        return self._integer(data_type)

    def visit_year(self, data_type: DataType) -> Typed:
        return self._integer(data_type)

    def visit_bit(self, data_type: DataType) -> Typed:
        return self._integer(data_type)

    def visit_float(self, data_type: DataType) -> Typed:
        return self._cast(data_type)

    def visit_double(self, data_type: DataType) -> Typed:
        return self._cast(data_type)

    def visit_decimal(self, data_type: DataType) -> Typed:
        return self._python(data_type) if needs_python(data_type) else self._cast(data_type)

    def visit_string(self, data_type: DataType) -> Typed:
        return self._checked(self.text)

    def visit_bytes(self, data_type: DataType) -> Typed:  # Canal carries bytes as ISO-8859-1 text
        return self._checked(self.F.when(~self.text.rlike("[^\\x00-\\xFF]"), self.F.encode(self.text, "ISO-8859-1")))

    def visit_date(self, data_type: DataType) -> Typed:
        return self._temporal(_DATE, lambda text: text.try_cast("date"))

    def visit_datetime(self, data_type: DataType) -> Typed:
        return self._temporal(_DATETIME, self._local)

    def visit_timestamp(self, data_type: DataType) -> Typed:
        # local time in the changefeed's zone -> an instant
        F = self.F
        return self._temporal(
            _DATETIME,
            lambda text: F.convert_timezone(F.lit(self.zone), F.lit(self.session_zone), self._local(text)).cast(
                "timestamp"
            ),
        )

    def _local(self, text: Column) -> Column:
        return self.F.regexp_replace(text, "T", " ").try_cast("timestamp_ntz")

    def visit_enum(self, data_type: DataType) -> Typed:
        return self._checked(_member_names(self.text, data_type))

    def visit_set(self, data_type: DataType) -> Typed:
        return self._checked(_member_names(self.text, data_type))

    def visit_time(self, data_type: DataType) -> Typed:
        return self._python(data_type)

    def visit_json(self, data_type: DataType) -> Typed:
        return self._python(data_type)

    def visit_vector(self, data_type: DataType) -> Typed:
        return self._python(data_type)

    def visit_geometry(self, data_type: DataType) -> Typed:
        return self._python(data_type)  # Canal's hex WKB text: the codec's parser

    def visit_array(self, data_type: DataType) -> Typed:
        return self._python(data_type)


# Which types Spark cannot read natively from Canal's text: the codec's own parser does it (DECIMAL only
# beyond 38 digits, which Spark keeps as a string).
_PYTHON_READ: Final[Mapping[LogicalType, Callable[[DataType], bool]]] = by_logical_type(
    int=lambda t: False,
    float=lambda t: False,
    double=lambda t: False,
    decimal=lambda t: spark_type(t).typeName() != "decimal",
    date=lambda t: False,
    datetime=lambda t: False,
    timestamp=lambda t: False,
    time=lambda t: True,
    year=lambda t: False,
    string=lambda t: False,
    bytes=lambda t: False,
    enum=lambda t: False,
    set=lambda t: False,
    bit=lambda t: False,
    json=lambda t: True,
    vector=lambda t: True,
    geometry=lambda t: True,
    array=lambda t: True,
)


def needs_python(data_type: DataType) -> bool:
    return _PYTHON_READ[data_type.logical](data_type)


def _typed(text: Column, data_type: DataType, zone: str, session_zone: str, udfs: dict[DataType, Any]) -> Typed:
    """Spark's reading of one Canal-JSON value text as the contract's type of ``data_type``."""
    return _NativeReading(text, zone, session_zone, udfs).visit(data_type)


def _member_names(text: Column, data_type: DataType) -> Column:
    """ENUM: a 1-based index (0 is MySQL's invalid ``""``) or the name; SET: a bitmask or comma-joined names."""
    from pyspark.sql import functions as F

    elements = list(data_type.elements or ())
    digits = text.rlike(_DIGITS)
    number = text.try_cast("long")
    if data_type.logical is LogicalType.ENUM:
        if not elements:  # names unknown: the index, as text
            return F.when(digits & (number == 0), F.lit("")).when(digits, number.cast("string")).when(text == "", text)
        names = F.array(*[F.lit(e) for e in elements])
        return (
            F.when(digits & (number == 0), F.lit(""))
            .when(digits & (number >= 1) & (number <= len(elements)), F.element_at(names, number.cast("int")))
            .when(~digits & (text.isin(*elements) | (text == "")), text)
        )
    if not elements:  # names unknown: the bitmask, as text
        return F.when(digits & number.isNotNull(), F.array(number.cast("string")))
    in_range = number.isNotNull() & (F.shiftright(number, len(elements)) == 0) if len(elements) < 63 else number >= 0
    from_bits = F.filter(
        F.array(*[F.when(F.shiftright(number, i).bitwiseAND(1) == 1, F.lit(e)) for i, e in enumerate(elements)]),
        lambda name: name.isNotNull(),
    )
    names_given = F.when(text == "", F.array().cast("array<string>")).otherwise(F.split(text, ","))
    known = F.size(F.array_except(names_given, F.array(*[F.lit(e) for e in elements]))) == 0
    from_names = F.filter(
        F.array(*[F.when(F.array_contains(names_given, e), F.lit(e)) for e in elements]),
        lambda name: name.isNotNull(),
    )
    return F.when(digits & in_range, from_bits).when(~digits & known, from_names)


@attrs.frozen
class _Shape:
    database: str
    table: str
    rank: tuple[int, int, int, int]
    schema: TableSchema | None  # None: the sample did not decode


@attrs.define
class NativeDecodedChanges:
    """The decode contract: native tables from the JVM plan, the rest from the executor decoder."""

    spark: SparkSession
    _frames: dict[tuple[str, str], DataFrame]
    _schemas: dict[tuple[str, str], TableSchema]
    _rest: Any  # ExecutorDecodedChanges of the messages the native plan left out, or None
    _cached: list[DataFrame]
    _partition_ts: dict[PartitionKey, int] = attrs.field(factory=dict)

    def partition_commit_ts(self) -> dict[PartitionKey, int]:
        """The clock passed in, advanced by the messages the executor decoded. Canal-JSON rows never lack a
        commit ts when others have one (TiCDC writes it on all of them, official Canal on none), so the native
        tables do not need to advance it."""
        rest = {} if self._rest is None else self._rest.partition_commit_ts()
        return merge_clocks(self._partition_ts, rest)

    @property
    def native_tables(self) -> list[tuple[str, str]]:
        return sorted(self._frames)

    def tables(self) -> list[tuple[str, str]]:
        rest = [] if self._rest is None else self._rest.tables()
        return sorted({*self._frames, *rest})

    def table(self, database: str, table: str) -> DataFrame:
        frame = self._frames.get((database, table))
        if frame is not None:
            return frame
        result: DataFrame = self._rest.table(database, table)
        return result

    def schemas(self) -> dict[tuple[str, str], TableSchema]:
        rest = {} if self._rest is None else self._rest.schemas()
        return {**rest, **self._schemas}

    def control(self) -> DataFrame:
        if self._rest is None:
            return self.spark.createDataFrame([], CONTROL_SCHEMA)
        frame: DataFrame = self._rest.control()
        return frame

    def dead_letters(self) -> DataFrame:
        if self._rest is None:
            return self.spark.createDataFrame([], DEAD_LETTER_SCHEMA)
        frame: DataFrame = self._rest.dead_letters()
        return frame

    def release(self) -> None:
        for frame in self._cached:
            frame.unpersist()
        if self._rest is not None:
            self._rest.release()


def _eligible(options: Options) -> Column:
    from pyspark.sql import functions as F

    doc = F.col("doc")
    keys = F.col("__keys")
    first_keys = F.map_keys(F.element_at(doc["data"], 1))
    tidb = doc["_tidb"]
    return (
        doc.isNotNull()
        & F.is_valid_utf8(F.col("value").cast("string"))
        & (F.length(F.col("value")) <= int(options["max-message-bytes"]))
        & doc["type"].isin(*_ROW_TYPES)
        & (F.coalesce(~doc["isDdl"], ~F.array_contains(keys, "isDdl")))
        & F.array_contains(keys, "pkNames")
        & doc["database"].isNotNull()
        & (F.length(doc["table"]) > 0)
        & (F.size(doc["data"]) >= 1)
        & F.forall(doc["data"], lambda row: row.isNotNull() & (F.map_keys(row) == first_keys))
        & F.when(
            doc["type"] == "UPDATE",
            (F.size(doc["old"]) == F.size(doc["data"]))
            & F.forall(
                doc["old"], lambda row: row.isNotNull() & (F.size(F.array_except(F.map_keys(row), first_keys)) == 0)
            ),
        ).otherwise(F.lit(True))
        & F.coalesce(~tidb["onlyHandleKey"], F.lit(True))
        & tidb["claimCheckLocation"].isNull()
        & F.coalesce(tidb["commitTs"].between(0, _LONG_MAX), F.lit(True))
    )


def _shapes(
    parsed: DataFrame, options: Mapping[str, object]
) -> tuple[dict[tuple[str, str], list[_Shape]], set[tuple[str, str]]]:
    """One sample per table shape, decoded on the driver by the codec, per table; and the tables that some
    message the native plan cannot read names (one job for both)."""
    from pyspark.sql import functions as F

    doc = F.col("doc")
    rank = F.struct(
        F.coalesce(doc["_tidb"]["commitTs"].cast("long"), F.lit(-1)).alias("ts"),
        F.coalesce(F.col("partition"), F.lit(0)).alias("partition"),
        F.coalesce(F.col("offset"), F.lit(0)).alias("offset"),
        (F.size(doc["data"]) - 1).alias("position"),
    )
    shapes = (
        parsed.where(doc["database"].isNotNull() & doc["table"].isNotNull())
        .groupBy(
            F.col("__eligible").alias("eligible"),
            F.coalesce(doc["isDdl"] & (doc["type"] != "TRUNCATE"), F.lit(False)).alias("schema_ddl"),
            doc["database"].alias("database"),
            doc["table"].alias("table"),
            F.map_keys(F.element_at(doc["data"], 1)).alias("columns"),
            F.to_json(doc["mysqlType"]).alias("mysql"),
            F.to_json(doc["sqlType"]).alias("sql"),
            F.coalesce(doc["pkNames"], F.array().cast("array<string>")).alias("keys"),
        )
        .agg(F.max(rank).alias("rank"), F.max_by(F.col("value"), rank).alias("sample"))
        .select("eligible", "schema_ddl", "database", "table", "rank", "sample")
        .collect()
    )
    decoder = get_codec(PROTOCOL).decoder(dict(options))
    by_table: dict[tuple[str, str], list[_Shape]] = {}
    # A table named by a message the native plan cannot read and that may carry changes (a TRUNCATE, a claim-check
    # row) is decoded whole by the executor decoder, so that its changes stay in one frame and in one order. Other
    # DDL carries no rows and, in Canal-JSON, no schema: the table stays native.
    touched = {(row["database"], row["table"]) for row in shapes if not row["eligible"] and not row["schema_ddl"]}
    for row in shapes:
        if not row["eligible"]:
            continue
        try:
            events = decoder.decode(Message(value=row["sample"]))
        except CdcError:
            events = []
        schema = next((e.schema for e in events if isinstance(e, RowChange) and e.schema is not None), None)
        rank_row = row["rank"]
        shape = _Shape(row["database"], row["table"], tuple(rank_row), schema)
        by_table.setdefault((row["database"], row["table"]), []).append(shape)
    return by_table, touched


def _native_schema(shapes: list[_Shape]) -> TableSchema | None:
    """The table's newest schema when every shape of the batch fits it column for column, else None."""
    if any(s.schema is None for s in shapes):
        return None
    newest = max(shapes, key=lambda s: s.rank).schema
    assert newest is not None
    types = {c.name: c.data_type for c in newest.stored_columns}
    for shape in shapes:
        assert shape.schema is not None
        if any(types.get(c.name) != c.data_type for c in shape.schema.stored_columns):
            return None
    return newest


def _rows(parsed: DataFrame, schema: TableSchema, zone: str, session_zone: str, udfs: dict[DataType, Any]) -> DataFrame:
    """The table's change frame in the contract's columns, plus ``__bad`` for rows whose values did not convert."""
    from pyspark.sql import functions as F

    from cdc_spark.driver_decode import change_schema

    doc = F.col("doc")
    exploded = parsed.where(
        F.col("__eligible") & (doc["database"] == schema.database) & (doc["table"] == schema.table)
    ).select(
        "topic", "partition", "offset", doc["type"].alias("type"), doc["_tidb"]["commitTs"].cast("long").alias("ts"),
        F.posexplode(doc["data"]).alias("position", "row"), doc["old"].alias("old"),
    )  # fmt: skip
    row = F.col("row")
    old = F.element_at(F.col("old"), F.col("position") + 1)
    update = F.col("type") == "UPDATE"
    columns = schema.stored_columns
    names = [c.name for c in columns]
    # Stage 1 converts every value once into its own column; stage 2 only assembles. Spark does not merge the
    # two projections when that would evaluate a conversion several times, so each text is cast exactly once.
    converted: list[Column] = []
    zero_columns: list[tuple[str, str]] = []
    for i, column in enumerate(columns):
        after = _typed(F.element_at(row, column.name), column.data_type, zone, session_zone, udfs)
        in_old = update & F.map_contains_key(old, column.name)
        before = _typed(F.element_at(old, column.name), column.data_type, zone, session_zone, udfs)
        converted += [
            after.value.alias(f"__a{i}"),
            after.bad.alias(f"__ab{i}"),
            in_old.alias(f"__in_old{i}"),
            F.when(in_old, before.value).alias(f"__o{i}"),
            (in_old & before.bad).alias(f"__ob{i}"),
        ]
        if after.zero is not None:
            converted.append(after.zero.alias(f"__z{i}"))
            zero_columns.append((column.name, f"__z{i}"))
    typed = exploded.select(
        "topic", "partition", "offset", "type", "ts", "position",
        F.map_keys(row).alias("__columns"), F.size(old).alias("__old_size"),
        F.filter(F.map_keys(row), lambda name: F.map_contains_key(old, name)).alias("__in_old_names"),
        *converted,
    )  # fmt: skip
    update = F.col("type") == "UPDATE"
    values = [F.col(f"__a{i}") for i in range(len(columns))]
    image_struct = F.struct(*[v.alias(n) for n, v in zip(names, values, strict=True)])
    before_update = [
        F.when(F.col(f"__in_old{i}"), F.col(f"__o{i}")).otherwise(values[i]).alias(n) for i, n in enumerate(names)
    ]
    before_image = F.when(F.col("type") == "DELETE", image_struct).when(update, F.struct(*before_update))
    message_columns = F.col("__columns")
    partial = update & (F.col("__old_size") != F.size(message_columns))
    changed = (
        F.when(partial, F.col("__in_old_names"))
        .when(F.size(message_columns) < len(names),
              F.filter(F.array(*[F.lit(n) for n in names]), lambda name: F.array_contains(message_columns, name)))
    )  # fmt: skip
    zeros: Column = F.lit(None).cast("map<string,string>")
    if zero_columns:
        entries = [F.struct(F.lit(n).alias("key"), F.col(c).alias("value")) for n, c in zero_columns]
        found = F.filter(F.array(*entries), lambda entry: entry["value"].isNotNull())
        zeros = F.when(F.size(found) > 0, F.map_from_entries(found))
    bad = F.lit(False)
    for i in range(len(columns)):
        bad = bad | F.col(f"__ab{i}") | F.col(f"__ob{i}")
    op = F.create_map(*[x for kind, name in _OPS.items() for x in (F.lit(kind), F.lit(name))])[F.col("type")]
    contract = change_schema(schema)
    return typed.select(
        *[v.cast(contract[n].dataType).alias(n) for n, v in zip(names, values, strict=True)],
        op.alias("_cdc_op"),
        F.col("ts").alias("_cdc_commit_ts"),
        F.struct(F.col("ts").alias("commit_ts"), F.col("partition").cast("int").alias("partition"),
                 F.col("offset").alias("offset"),
                 F.col("position").cast("int").alias("position")).alias("_cdc_sequence"),
        before_image.cast(contract["_cdc_before"].dataType).alias("_cdc_before"),
        changed.alias("_cdc_changed_columns"),
        F.lit(schema.database).alias("_cdc_database"),
        F.lit(schema.table).alias("_cdc_table"),
        F.lit(None).cast("long").alias("_cdc_schema_version"),
        F.col("topic").alias("_cdc_topic"),
        F.col("partition").cast("int").alias("_cdc_partition"),
        F.col("offset").alias("_cdc_offset"),
        zeros.alias("_cdc_zero_dates"),
        bad.alias("__bad"),
    )  # fmt: skip


def decode(
    df: DataFrame,
    protocol: str = PROTOCOL,
    options: Mapping[str, object] | None = None,
    schemas: Mapping[tuple[str, str], TableSchema] | None = None,
    *,
    partition_ts: Mapping[PartitionKey, int] | None = None,
) -> NativeDecodedChanges:
    """Decode Canal-JSON ``df`` (Kafka source columns) natively where it can, with the executor decoder elsewhere."""
    from pyspark.sql import functions as F

    from cdc_spark import decode as executor

    if protocol != PROTOCOL:
        raise ValueError(f"the native decoder reads {PROTOCOL}, not {protocol}")
    codec_options = dict(options or {})
    codec = get_codec(PROTOCOL)
    resolved = Options([s for s in codec.options if s.for_decoder], codec_options, protocol=PROTOCOL)
    spark = df.sparkSession
    session_zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    zone = zone_name(resolve_zone(str(codec_options.get("time-zone") or "") or None))
    parsed = (
        df.select("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")
        .withColumn("doc", F.from_json(F.col("value").cast("string"), ENVELOPE))
        .withColumn("__keys", F.json_object_keys(F.col("value").cast("string")))
    )
    python_only = any(resolved[name] for name in _PYTHON_ONLY_OPTIONS)
    parsed = parsed.withColumn(
        "__eligible", F.lit(False) if python_only else F.coalesce(_eligible(resolved), F.lit(False))
    )
    parsed = parsed.persist()
    cached = [parsed]
    frames: dict[tuple[str, str], DataFrame] = {}
    learned: dict[tuple[str, str], TableSchema] = {}
    udfs: dict[DataType, Any] = {}
    shapes_by_table, touched = _shapes(parsed, codec_options)
    for name, shapes in sorted(shapes_by_table.items()):
        schema = _native_schema(shapes)
        if schema is None or name in touched:
            continue
        for column in schema.stored_columns:
            if needs_python(column.data_type):
                udfs.setdefault(column.data_type, _python_column(column.data_type, codec_options))
        frame = _rows(parsed, schema, zone, session_zone, udfs).persist()
        cached.append(frame)
        if frame.where("__bad").limit(1).count() == 0:
            frames[name] = frame.drop("__bad")
            learned[name] = schema
    doc = F.col("doc")
    native = F.lit(False)
    for database, table in frames:
        native = native | ((doc["database"] == database) & (doc["table"] == table))
    rest_messages = parsed.where(~(F.col("__eligible") & native)).select(
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"
    )
    rest = None
    if rest_messages.limit(1).count() > 0:
        rest = executor.decode_in_executors(rest_messages, PROTOCOL, codec_options, schemas, partition_ts=partition_ts)
    return NativeDecodedChanges(spark, frames, learned, rest, cached, dict(partition_ts or {}))


__all__ = ["NativeDecodedChanges", "decode"]
