"""Debezium JSON on the JVM path: row messages whose field schemas say how each value is written.

A message is read in the JVM when it is a row change (``op`` c, r, u or d) with its image(s), a field schema (or a
user ``table-schema`` for schemaless streams), a key that is a JSON object or absent, and a commit ts that fits.
TiCDC's watermarks (``op`` m with ``source.commit_ts``) are read in the JVM too; DDL, truncates, transaction
metadata, heartbeats and everything else go to the codec. A shape is the message's schema document and its key's
column names (the schema's primary key comes from the key): the codec decodes one sample of each, and every field
is read the way the codec reads it (:func:`wire_form`); a shape with a field the JVM does not read (Debezium's
variable-scale decimals, say) goes to the codec whole.

Where the session has the project's Java code, the envelope is read by ``cdc.spark.debezium.DebeziumShape`` from the
message's bytes (its schema digested as written, never printed again); otherwise by ``from_json``. Either way the
values arrive as the JSON texts of ``payload.after``/``before``, as ``from_json`` gives them: Spark re-prints a JSON
number through a double, so a decimal written as a number (``decimal.handling.mode=double``, or Kafka Connect's
``decimal.format=NUMERIC``) with 16 or more digits sends its message to the codec, which reads it exactly; a sample
whose Connect decimals are numbers marks its shape as NUMERIC.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Hashable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.codec import Options
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.textual import resolve_zone, zone_name
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Route, Sample, ShapeReaders
from cdc_spark.decoding.avro_records import permissive_from_avro
from cdc_spark.decoding.java_text import JavaText, java_function
from cdc_spark.decoding.jvm_values import (
    Typed,
    bounded,
    checked,
    integral,
    interval_from_micros,
    json_text,
    set_names,
    vector_text,
)
from cdc_spark.decoding.literal_lookup import lookup
from cdc_spark.decoding.reuse import zoned_key
from cdc_spark.decoding.spark_types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType as SparkType


PROTOCOL: Final = "debezium"
_IMAGE: Final = "before map<string,string>, after map<string,string>, op string, ddl string, message string"
_SOURCE: Final = "source struct<db:string, schema:string, table:string, commit_ts:decimal(20,0)>"
ENVELOPE: Final = f"schema string, payload struct<{_IMAGE}, {_SOURCE}>, {_IMAGE}, {_SOURCE}"
SHAPE_CLASS: Final = "cdc.spark.debezium.DebeziumShape"
KEY_CLASS: Final = "cdc.spark.debezium.DebeziumKey"
# What DebeziumShape reads of a message (kind: "row", "watermark" or null; schema: a digest of its bytes)
SHAPE_READ: Final = (
    "kind string, database string, table string, schema bigint, commit_ts bigint, op string,"
    " before map<string,string>, after map<string,string>"
)
_LONG_MAX: Final = 2**63 - 1
_OPS: Final = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}
_EPOCH_DAYS_MIN: Final = -719162  # 0001-01-01
_EPOCH_DAYS_MAX: Final = 2932896  # 9999-12-31
_EPOCH_MICROS_MIN: Final = -62135596800_000000
_EPOCH_MICROS_MAX: Final = 253402300799_999999
_DOUBLE_DIGITS: Final = 15  # a decimal with more significant digits may not survive Spark's double re-print


class Form(StrEnum):
    """How the codec reads a field's values (cdc_debezium.column_readers.converter_for), for the JVM to do the same."""

    INT = "int"
    UINT64 = "uint64"
    BOOL_INT = "bool_int"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    DECIMAL_NUMBER = "decimal_number"  # a JSON number: digits beyond a double's go to the codec
    DECIMAL_TEXT = "decimal_text"  # a JSON string
    DECIMAL_BYTES = "decimal_bytes"
    STRING = "string"
    BASE64 = "base64"
    BASE64_URL = "base64_url"
    HEX = "hex"
    BITS = "bits"
    DAYS = "days"
    DATETIME_MS = "datetime_ms"
    DATETIME_US = "datetime_us"
    DATETIME_NS = "datetime_ns"
    TIME_MS = "time_ms"
    TIME_US = "time_us"
    TIME_NS = "time_ns"
    ZONED = "zoned"
    SET = "set"
    JSON = "json"
    VECTOR = "vector"


_NAMED: Final = {
    "io.debezium.time.Date": Form.DAYS,
    "org.apache.kafka.connect.data.Date": Form.DAYS,
    "io.debezium.time.Timestamp": Form.DATETIME_MS,
    "org.apache.kafka.connect.data.Timestamp": Form.DATETIME_MS,
    "io.debezium.time.MicroTimestamp": Form.DATETIME_US,
    "io.debezium.time.NanoTimestamp": Form.DATETIME_NS,
    "io.debezium.time.Time": Form.TIME_MS,
    "org.apache.kafka.connect.data.Time": Form.TIME_MS,
    "io.debezium.time.MicroTime": Form.TIME_US,
    "io.debezium.time.NanoTime": Form.TIME_NS,
    "io.debezium.time.Year": Form.INT,
    "io.debezium.data.Bits": Form.BITS,
    "io.debezium.data.Json": Form.JSON,
    "io.debezium.data.TiDBVectorFloat32": Form.VECTOR,
    "io.debezium.time.ZonedTimestamp": Form.ZONED,
    "org.apache.kafka.connect.data.Decimal": Form.DECIMAL_BYTES,
    "io.debezium.data.Enum": Form.STRING,
    "io.debezium.data.EnumSet": Form.SET,
}
_CONNECT_DECIMAL: Final = "org.apache.kafka.connect.data.Decimal"
_NUMERIC: Final = "cdc.numeric-decimal"  # a Connect decimal written as a JSON number (decimal.format=NUMERIC)


_CONNECT_INTS: Final = frozenset({"int8", "int16", "int32", "int64"})


@attrs.frozen
class Modes:
    """The connector settings of a schemaless stream (the codec's options of the same names)."""

    decimal: str = "double"
    binary: str = "base64"
    time_precision: str = "adaptive_time_microseconds"


def _binary_form(modes: Modes, kind: str) -> Form:
    if kind == "bytes" or modes.binary in ("base64", "bytes"):
        return Form.BASE64
    return Form.BASE64_URL if modes.binary == "base64-url-safe" else Form.HEX


def _integral(data_type: DataType) -> Form:
    unsigned64 = data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned
    return Form.UINT64 if unsigned64 else Form.INT


class _SchemalessForm(LogicalTypeVisitor[Form | None]):
    """The form of a column without a field schema: what the connector settings produce."""

    def __init__(self, modes: Modes) -> None:
        self.modes = modes
        self.adaptive = modes.time_precision != "connect"

    def visit_int(self, data_type: DataType) -> Form | None:
        return _integral(data_type)

    def visit_year(self, data_type: DataType) -> Form | None:
        return _integral(data_type)

    def visit_bit(self, data_type: DataType) -> Form | None:
        return Form.BOOL_INT if data_type.bit_width == 1 else Form.BITS

    def visit_float(self, data_type: DataType) -> Form | None:
        return Form.FLOAT32

    def visit_double(self, data_type: DataType) -> Form | None:
        return Form.FLOAT64

    def visit_decimal(self, data_type: DataType) -> Form | None:
        return {"precise": Form.DECIMAL_BYTES, "string": Form.DECIMAL_TEXT}.get(self.modes.decimal, Form.DECIMAL_NUMBER)

    def visit_date(self, data_type: DataType) -> Form | None:
        return Form.DAYS

    def visit_datetime(self, data_type: DataType) -> Form | None:
        return Form.DATETIME_US if self.adaptive and data_type.fsp > 3 else Form.DATETIME_MS

    def visit_timestamp(self, data_type: DataType) -> Form | None:
        return Form.ZONED

    def visit_time(self, data_type: DataType) -> Form | None:
        if self.modes.time_precision == "adaptive_time_microseconds":
            return Form.TIME_US
        return Form.TIME_US if self.adaptive and data_type.fsp > 3 else Form.TIME_MS

    def visit_string(self, data_type: DataType) -> Form | None:
        return Form.STRING

    def visit_bytes(self, data_type: DataType) -> Form | None:
        return _binary_form(self.modes, "string")

    def visit_enum(self, data_type: DataType) -> Form | None:
        return Form.STRING

    def visit_set(self, data_type: DataType) -> Form | None:
        return Form.SET

    def visit_json(self, data_type: DataType) -> Form | None:
        return Form.JSON

    def visit_vector(self, data_type: DataType) -> Form | None:
        return Form.VECTOR

    def visit_geometry(self, data_type: DataType) -> Form | None:
        return None

    def visit_array(self, data_type: DataType) -> Form | None:
        return None


def schemaless_form(data_type: DataType, modes: Modes) -> Form | None:
    """The form of a column without a field schema: what the connector settings produce."""
    return _SchemalessForm(modes).visit(data_type)


class _PlainForm(LogicalTypeVisitor[Form | None]):
    """The form of a field schema of plain Connect type ``kind`` (no logical name the JVM reads by its name)."""

    def __init__(self, kind: str, modes: Modes) -> None:
        self.kind, self.modes = kind, modes

    def _by_kind(
        self,
        data_type: DataType,
        *,
        integer: bool = False,
        floating: Form = Form.FLOAT64,
        binary: Form = Form.BASE64,
        string: Form | None = None,
    ) -> Form | None:
        """What each kind holds for this column type (``integer``: Connect integers are its number; ``string``
        None: a string is what the connector settings make of it)."""
        kind = self.kind
        if kind == "boolean":
            return Form.BOOL_INT
        if kind in _CONNECT_INTS:
            return _integral(data_type) if integer else schemaless_form(data_type, self.modes)
        if kind in ("float", "double"):
            return floating
        if kind == "bytes":
            return binary
        if kind == "string":
            return string if string is not None else schemaless_form(data_type, self.modes)
        return None

    def visit_int(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, integer=True)

    def visit_year(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, integer=True)

    def visit_bit(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, integer=True, binary=Form.BITS)

    def visit_float(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, floating=Form.FLOAT32)

    def visit_double(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_decimal(self, data_type: DataType) -> Form | None:
        return {"bytes": Form.DECIMAL_BYTES, "string": Form.DECIMAL_TEXT}.get(self.kind, Form.DECIMAL_NUMBER)

    def visit_date(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_datetime(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_timestamp(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_time(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_string(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, string=Form.STRING)

    def visit_bytes(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type, string=_binary_form(self.modes, self.kind))

    def visit_enum(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_set(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_json(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_vector(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_geometry(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)

    def visit_array(self, data_type: DataType) -> Form | None:
        return self._by_kind(data_type)


def wire_form(kind: str | None, name: str | None, data_type: DataType, modes: Modes) -> Form | None:
    """How the codec reads values of field schema ``(kind, name)`` into ``data_type``; None: not in the JVM."""
    if kind is None:
        return schemaless_form(data_type, modes)
    if name is not None:
        if name == _NUMERIC:
            return Form.DECIMAL_NUMBER
        if name in _NAMED:
            return _NAMED[name]
        if name.startswith(("io.debezium.", "org.apache.kafka.connect.")):
            return None  # a logical type the JVM path does not read (VariableScaleDecimal, geometry, ...)
    return _PlainForm(kind, modes).visit(data_type)


def _decimal_from_bytes(binary: Column, scale: int) -> Column:
    """Big-endian two's-complement bytes as decimal(38, scale), read by Avro's decimal logical type."""
    from pyspark.sql import functions as F

    framed = F.concat(F.unhex(F.lpad(F.hex(F.length(binary) * 2), 2, "0")), binary)  # Avro bytes: zigzag length
    schema = json.dumps({"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": scale})
    return F.when(F.length(binary).between(1, 16), permissive_from_avro(framed, schema))


def _bits(binary: Column, data_type: DataType) -> Column:
    """Little-endian bytes (Debezium's Bits) as the unsigned integer they hold."""
    from pyspark.sql import functions as F

    pairs = F.split(F.regexp_replace(F.hex(binary), "(..)", "$1,"), ",")
    big_endian = F.array_join(F.reverse(F.filter(pairs, lambda p: p != "")), "")
    unsigned = F.conv(F.when(F.length(binary).between(1, 8), big_endian), 16, 10)
    return F.when(F.length(binary) == 0, F.lit("0")).otherwise(unsigned).try_cast(spark_type(data_type))


def _datetime(micros: Column) -> Column:
    """A naive DATETIME ``micros`` microseconds after the epoch (years 1 to 9999, as Python's datetime)."""
    from pyspark.sql import functions as F

    epoch = F.lit("1970-01-01 00:00:00").cast("timestamp_ntz")
    return F.when(micros.between(_EPOCH_MICROS_MIN, _EPOCH_MICROS_MAX), epoch + interval_from_micros(micros))


def _floor_div(number: Column, divisor: int) -> Column:
    from pyspark.sql import functions as F

    return F.floor(number.cast("decimal(20,0)") / F.lit(divisor)).cast("long")


def _integer(text: Column, form: Form, target: SparkType, integer: Column) -> Typed:
    """An integer form's value (``integer``: the text read as a long)."""
    from pyspark.sql import functions as F

    if form is Form.INT:
        return checked(text, integer.try_cast(target) if target.typeName() != "decimal" else text.try_cast(target))
    if form is Form.UINT64:
        wide = integral(text).try_cast("decimal(20,0)")
        span = F.lit(str(2**64)).cast("decimal(21,0)")
        value = F.when(wide < 0, wide + span).otherwise(wide)
        return checked(text, F.when((value >= 0) & (value < span), value.try_cast(target)))
    flag = F.when(text == "true", F.lit(1)).when(text == "false", F.lit(0)).otherwise(integer)  # BOOL_INT
    return checked(text, flag.try_cast(target))


def read(text: Column, form: Form, data_type: DataType, zone: str) -> Typed:
    """The JVM's reading of a value text of ``form`` as the contract's type of ``data_type``."""
    from pyspark.sql import functions as F

    target = spark_type(data_type)
    integer = integral(text).try_cast("long")
    if form in (Form.INT, Form.UINT64, Form.BOOL_INT):
        return bounded(_integer(text, form, target, integer), data_type)  # the codec bounds them by column type
    if form in (Form.FLOAT32, Form.FLOAT64):
        number = text.try_cast("double")  # a FLOAT rounds from the double, as the codec's to_float32 does
        return checked(text, number.try_cast(target))
    if form in (Form.DECIMAL_NUMBER, Form.DECIMAL_TEXT):
        exact = text.try_cast("decimal(38,18)")
        if form is Form.DECIMAL_NUMBER:
            exact = F.when(F.length(F.regexp_replace(text, "[^0-9]", "")) <= _DOUBLE_DIGITS, exact)
        if target.typeName() != "decimal":  # over 38 digits: the codec's text
            return checked(text, F.lit(None).cast(target))
        scale = target.scale  # type: ignore[attr-defined]
        return checked(text, F.bround(exact, scale).try_cast(target))  # half-even, as the codec quantizes
    if form is Form.DECIMAL_BYTES:
        binary = F.try_to_binary(text, F.lit("base64"))
        decimal = _decimal_from_bytes(binary, data_type.scale if data_type.length is not None else 0)
        return checked(text, decimal.try_cast(target))
    if form is Form.STRING:
        return Typed(value=text, bad=F.lit(False))
    if form in (Form.BASE64, Form.BASE64_URL, Form.HEX):
        if form is Form.HEX:
            return checked(text, F.try_to_binary(text, F.lit("hex")))
        source = F.translate(text, "-_", "+/") if form is Form.BASE64_URL else text
        return checked(text, F.try_to_binary(source, F.lit("base64")))
    if form is Form.BITS:
        return checked(text, _bits(F.try_to_binary(text, F.lit("base64")), data_type))
    if form is Form.DAYS:
        days = integer.try_cast("int")
        epoch = F.lit("1970-01-01").cast("date")
        return checked(text, F.when(days.between(_EPOCH_DAYS_MIN, _EPOCH_DAYS_MAX), F.date_add(epoch, days)))
    if form in (Form.DATETIME_MS, Form.DATETIME_US, Form.DATETIME_NS):
        micros = {Form.DATETIME_MS: integer * 1000, Form.DATETIME_US: integer}.get(form)
        micros = _floor_div(integer, 1000) if micros is None else micros
        return checked(text, _datetime(micros))
    if form in (Form.TIME_MS, Form.TIME_US, Form.TIME_NS):
        micros = {Form.TIME_MS: integer * 1000, Form.TIME_US: integer}.get(form)
        micros = _floor_div(integer, 1000) if micros is None else micros
        return checked(text, interval_from_micros(micros))
    if form is Form.ZONED:
        zoned = text.rlike(r"(Z|[+-][0-9]{2}:?[0-9]{2})$")
        return checked(text, F.when(zoned, text.try_cast("timestamp")))
    if form is Form.SET:
        return checked(text, set_names(text, data_type) if data_type.elements else _set_names(text))
    if form is Form.JSON:
        return json_text(text)
    return vector_text(text)


def _key_names() -> Column:
    """The column names of a message's key joined by U+0000, as Spark SQL reads them: its payload's members where it
    has a payload, its own otherwise; null where it is not a JSON object."""
    from pyspark.sql import functions as F

    key_text = F.col("key").cast("string")
    names = F.json_object_keys(F.coalesce(F.get_json_object(key_text, "$.payload"), key_text))
    return F.array_join(names, "\u0000")


def _reader(form: Form, data_type: DataType, zone: str) -> A.Reader:
    def reader(text: Column) -> Typed:
        return read(text, form, data_type, zone)

    return reader


def _set_names(text: Column) -> Column:
    from pyspark.sql import functions as F

    return F.when(text == "", F.array().cast("array<string>")).otherwise(F.split(text, ","))


def _fields(schema_doc: Any) -> dict[str, tuple[str | None, str | None]] | None:
    """``column -> (kind, logical name)`` of the row struct of a Debezium schema document."""
    if not isinstance(schema_doc, dict) or not isinstance(schema_doc.get("fields"), list):
        return None
    for candidate in ("after", "before"):
        for entry in schema_doc["fields"]:
            if isinstance(entry, dict) and entry.get("field") == candidate and isinstance(entry.get("fields"), list):
                return {
                    str(f.get("field")): (f.get("type"), f.get("name")) for f in entry["fields"] if isinstance(f, dict)
                }
    return None


def _numeric_decimals(
    fields: dict[str, tuple[str | None, str | None]], payload: Mapping[str, Any]
) -> dict[str, tuple[str | None, str | None]]:
    """Connect decimals whose sample values are JSON numbers: the shape was written with ``decimal.format=NUMERIC``."""
    images = [payload.get(name) for name in ("after", "before")]
    for column, (_kind, name) in fields.items():
        if name != _CONNECT_DECIMAL:
            continue
        values = [image.get(column) for image in images if isinstance(image, dict)]
        if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            fields[column] = ("double", _NUMERIC)
    return fields


@attrs.define
class DebeziumAdapter:
    options: Mapping[str, object]
    session_zone: str
    java: JavaText | None = None  # the session's Java code, if it has it: the envelope read by DebeziumShape
    protocol: str = PROTOCOL
    readers_by_shape: bool = attrs.field(default=False, init=False)  # describe reads the sample beyond its shape
    keeps_prepared_plans: bool = attrs.field(default=False, init=False)  # prepare builds its frame anew
    java_rows: None = attrs.field(default=None, init=False)  # the SQL typing
    _resolved: Options = attrs.field(init=False)
    _modes: Modes = attrs.field(init=False)
    _zone: dt.tzinfo = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        # as the codec's decoder reads them: encoder-only options and TiCDC's sink-URI parameters ignored (with the
        # codec's one warning), TiCDC's names of its own options taken
        self._resolved = get_codec(PROTOCOL).decoder_options(self.options)
        self._modes = Modes(
            decimal=str(self._resolved["decimal.handling.mode"]),
            binary=str(self._resolved["binary.handling.mode"]),
            time_precision=str(self._resolved["time.precision.mode"]),
        )
        self._zone = resolve_zone(self._resolved["time-zone"])

    def expressions_key(self) -> Hashable:
        zoned = zoned_key(self.protocol, self.options, self.session_zone, zone_name(self._zone))
        return (zoned, self.java is not None)

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        from pyspark.sql import functions as F

        A.no_typed_envelope(self.protocol, envelope)
        if self.java is not None:
            return self._prepare_in_java(messages)

        # Three projections, each evaluating its expressions once: the parse; the envelope's fields and the
        # per-message checks read from it (the key's names parsed once, though the route and the shape both use
        # them); the route and the columns. Each projection copies the whole row, the message's own key and value
        # too, so there are no more than that (there were five: 200,000 messages 2.65 -> 2.42 s).
        text = F.col("value").cast("string")
        parsed = messages.withColumn("__doc", A.documents(text, ENVELOPE))  # parsed once, read whole below
        doc = A.whole(F.col("__doc"))
        payload = doc["payload"]

        def member(*path: str) -> Column:
            """A field of the envelope: in ``payload`` when the message has one, at the top otherwise."""
            enveloped, flat = payload, doc
            for name in path:
                enveloped, flat = enveloped[name], flat[name]
            return F.when(payload.isNotNull(), enveloped).otherwise(flat)

        fields = parsed.select(
            *messages.columns,
            *[member(name).alias(f"__{name}") for name in ("op", "before", "after", "ddl", "message")],
            source_database(member("source")).alias("__db"),
            *[member("source", name).alias(f"__{name}") for name in ("table", "commit_ts")],
            F.is_valid_utf8(text).alias("__utf8"),
            *self._key_checks(doc["schema"], F.coalesce(doc["schema"], F.lit("")), _key_names()),
        )
        op, commit_ts = F.col("__op"), F.col("__commit_ts")
        row = (
            F.col("__utf8")
            & op.isin(*_OPS)
            & F.col("__ddl").isNull()
            & F.col("__db").isNotNull()
            & F.col("__table").isNotNull()
            & F.when(op == "d", F.col("__before").isNotNull()).otherwise(F.col("__after").isNotNull())
            & F.coalesce(commit_ts.between(0, _LONG_MAX), commit_ts.isNull())
        )
        watermark = (op == "m") & F.col("__message").isNull() & commit_ts.between(0, _LONG_MAX)
        ts = F.when(commit_ts.between(0, _LONG_MAX), commit_ts.cast("long"))
        return self._prepared(messages, fields, row=row, watermark=watermark, ts=ts)

    def _prepare_in_java(self, messages: DataFrame) -> DataFrame:
        """``prepare`` by the Java envelope reader (``DebeziumShape``) and key reader (``DebeziumKey``), which read
        each message's bytes once: no text of the message, nor of its schema, is built to be read again."""
        from pyspark.sql import functions as F

        assert self.java is not None
        parsed = messages.withColumn("__read", self.java.envelope("cdc_debezium_shape", SHAPE_CLASS, SHAPE_READ))
        key_function = java_function(self.java.spark, "cdc_debezium_key", KEY_CLASS, "string")
        key_names = F.call_udf(key_function, F.col("key").cast("binary"))
        read = F.col("__read")
        fields = parsed.select(
            *messages.columns,
            *[read[name].alias(f"__{name}") for name in ("kind", "op", "before", "after", "commit_ts")],
            read["database"].alias("__db"),
            read["table"].alias("__table"),
            *self._key_checks(read["schema"], read["schema"], key_names),
        )
        kind = F.col("__kind")
        return self._prepared(
            messages, fields, row=kind == "row", watermark=kind == "watermark", ts=F.col("__commit_ts")
        )

    def _key_checks(self, schema: Column, digested: Column, key_names: Column) -> list[Column]:
        """Whether the message's key was read (``key_names``, its column names joined by U+0000, null where the key
        is not a JSON object; or no key), whether its fields' types are known (a schema, or the ``table-schema``
        option), and its shape's digest: ``digested`` (what stands for the schema) with the key's names."""
        from pyspark.sql import functions as F

        return [
            (F.col("key").isNull() | key_names.isNotNull()).alias("__key_read"),
            (schema.isNotNull() | F.lit(bool(self._resolved["table-schema"]))).alias("__typed"),
            F.xxhash64(digested, key_names).cast("string").alias("__digest"),
        ]

    def _prepared(
        self, messages: DataFrame, fields: DataFrame, *, row: Column, watermark: Column, ts: Column
    ) -> DataFrame:
        """The prepared messages from the envelope's ``fields`` (``__op``, ``__before``, ``__after``, ``__db``,
        ``__table`` and :meth:`_key_checks`): ``row`` and ``watermark`` say what the envelope is, ``ts`` its commit
        ts within a long."""
        from pyspark.sql import functions as F

        op = F.col("__op")
        row = F.col("value").isNotNull() & row & F.col("__key_read") & F.col("__typed")
        route = (
            F.when(F.col("value").isNull(), F.lit(Route.SKIP.value))
            .when(F.coalesce(row, F.lit(False)), F.lit(Route.JVM.value))
            .when(F.coalesce(watermark, F.lit(False)), F.lit(Route.WATERMARK.value))
            .otherwise(F.lit(Route.PYTHON.value))
        )
        jvm = route == Route.JVM
        return fields.select(
            *messages.columns,
            route.alias(A.ROUTE),
            F.col("__db").alias(A.DATABASE),
            F.col("__table").alias(A.TABLE),
            F.when(jvm, F.col("__digest")).alias(A.SHAPE),
            ts.alias(A.TS),
            A.rank(F.lit(0), ts).alias(A.RANK),
            jvm.alias(A.SAMPLE),
            # The batch is cached as prepared: only what rows() reads stays. The schema's text alone is about as
            # large as the rest of a message, and the envelope's images would be there twice.
            F.struct(op.alias("op"), F.col("__after").alias("after"), F.col("__before").alias("before")).alias("__env"),
        )

    def records(self, prepared: DataFrame) -> list[str] | None:
        return None  # its envelope is read into the maps of ``rows``

    def rows(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        env = F.col("__env")
        op = lookup(_OPS, env["op"])
        return prepared.select(
            *[c for c in prepared.columns if not c.startswith("__")],
            A.DATABASE, A.TABLE, A.SHAPE, A.TS,
            F.lit(0).alias(A.POSITION),
            op.alias(A.OP),
            F.lit(None).cast("long").alias(A.VERSION),
            env["after"].alias(A.AFTER),
            env["before"].alias(A.BEFORE),
            F.lit(None).cast("map<string,string>").alias(A.BEFORE_BASE),
            F.lit(None).cast("map<string,string>").alias(A.CHANGED_FROM),
        )  # fmt: skip

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema] = ()
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        described: dict[tuple[str, str, str], ShapeReaders | None] = {}
        for sample, schema in A.codec_schemas(PROTOCOL, self.options, samples):
            try:
                document = json.loads((sample.message and sample.message.value) or b"")
            except ValueError:
                document = None
            if schema is None or document is None:
                described[sample.key] = None
                continue
            enveloped = isinstance(document, dict) and "payload" in document
            schema_doc = document.get("schema") if enveloped else None
            payload = document.get("payload") if enveloped else document
            fields = _fields(schema_doc)
            if fields is not None and isinstance(payload, dict):
                fields = _numeric_decimals(fields, payload)
            described[sample.key] = self._readers(schema, fields)
        return described

    def _readers(
        self, schema: TableSchema, fields: Mapping[str, tuple[str | None, str | None]] | None
    ) -> ShapeReaders | None:
        readers: dict[str, A.Reader] = {}
        signatures: dict[str, Any] = {}
        zone = self.session_zone
        for column in schema.stored_columns:
            kind, name = (None, None) if fields is None else fields.get(column.name, (None, None))
            if fields is not None and column.name not in fields:
                continue  # not in this shape's images
            form = wire_form(kind, name, column.data_type, self._modes)
            if form is None:
                return None
            readers[column.name] = _reader(form, column.data_type, zone)
            signatures[column.name] = (form, column.data_type)
        return ShapeReaders(schema=schema, readers=readers, signatures=signatures)


def source_database(source: Column) -> Column:
    """An event's database from a ``source`` struct that has a ``schema`` field: the schema that holds the table
    where the connector names one (PostgreSQL, Oracle, SQL Server, Db2), else ``db``, as the codec reads it
    (``cdc_debezium.decoder``; the Java reader, ``DebeziumShape``, the same)."""
    from pyspark.sql import functions as F

    return F.coalesce(F.nullif(source["schema"], F.lit("")), source["db"])


def adapter(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: A.AdapterState
) -> A.Adapter:
    """Debezium JSON's JVM rules for a batch (entry point ``debezium`` of ``cdc_spark.decode_adapters``)."""
    return DebeziumAdapter(options, session_zone, java=JavaText.of(spark))


__all__ = ["DebeziumAdapter", "Form", "adapter", "read", "source_database", "wire_form"]
