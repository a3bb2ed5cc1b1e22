"""TiDB's text forms read by the project's Java code (``cdc_spark/java``, ``cdc.spark.text``) instead of Spark SQL
expressions: the descriptors protocols name their Java readers by (each protocol's adapter says which reader reads
which of its column types: ``CanalJavaText`` in :mod:`~cdc_spark.decoding.canal`, ``SimpleJavaText`` in
:mod:`~cdc_spark.decoding.simple`), and the Spark function that calls one.

The Java readers are stricter than :mod:`cdc_spark.decoding.jvm_values`: they read only the forms TiDB prints
(``[-]digits``, ``yyyy-mm-dd hh:mm:ss[.f]``...) and leave every other text unread (null), for the codec to judge; a
value they read is the SQL readers' value (``tests/test_java_text.py`` holds the two equal).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Final

from cdc_core.types import DataType, LogicalTypeVisitor, integer_range
from cdc_spark.decoding.jvm_values import Reader, TextReader, Typed
from cdc_spark.decoding.spark_types import INTEGER_RANGES, decimal_shape, spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession
    from pyspark.sql.types import DataType as SparkDataType

FUNCTION_CLASS: Final = "cdc.spark.text.TextValueFunction"
SWITCH_ENV: Final = "CDC_JAVA_READERS"  # "off": the Spark SQL readers only
_TEMPORAL: Final = ("date", "datetime", "timestamp", "located")  # readers with zero dates
# The Java reader of each integral Spark type, with that type's range
INTEGRAL: Final = {
    name: (reader, *INTEGER_RANGES[name])
    for name, reader in (
        ("byte", "byte"),
        ("short", "short"),
        ("integer", "int"),
        ("long", "long"),
        ("decimal", "wide"),
    )
}


def integer_descriptor(data_type: DataType, bounded: bool) -> str:
    """An integer column's reader, held to the column's range (``bounded``) or to its Spark type's."""
    reader, low, high = INTEGRAL[spark_type(data_type).typeName()]
    bounds = integer_range(data_type) if bounded else None
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return f"{reader}:{low}:{high}"


class JavaDescriptors(LogicalTypeVisitor[str | None]):
    """Which Java reader reads a column type (its descriptor, ``kind[:parameters]``), for a protocol whose text forms
    the readers know: None, the Spark SQL readers, for every type here; each protocol's adapter names its own."""

    def __init__(self, zone: str) -> None:
        self.zone = zone  # the zone of TIMESTAMP text

    def visit_int(self, data_type: DataType) -> str | None:
        return None

    def visit_bit(self, data_type: DataType) -> str | None:
        return None

    def visit_year(self, data_type: DataType) -> str | None:
        return None

    def visit_float(self, data_type: DataType) -> str | None:
        return None

    def visit_double(self, data_type: DataType) -> str | None:
        return None

    def visit_decimal(self, data_type: DataType) -> str | None:
        return None

    def visit_date(self, data_type: DataType) -> str | None:
        return None

    def visit_datetime(self, data_type: DataType) -> str | None:
        return None

    def visit_timestamp(self, data_type: DataType) -> str | None:
        return None

    def visit_time(self, data_type: DataType) -> str | None:
        return None

    def visit_enum(self, data_type: DataType) -> str | None:
        return None

    def visit_set(self, data_type: DataType) -> str | None:
        return None

    def visit_json(self, data_type: DataType) -> str | None:
        return None

    def visit_vector(self, data_type: DataType) -> str | None:
        return None

    def visit_string(self, data_type: DataType) -> str | None:
        return None

    def visit_bytes(self, data_type: DataType) -> str | None:
        return None

    def visit_geometry(self, data_type: DataType) -> str | None:
        return None

    def visit_array(self, data_type: DataType) -> str | None:
        return None


class EveryText(LogicalTypeVisitor[str | None]):
    """The row typers' readers of the types both protocols write alike: DECIMAL (beyond 38 digits as padded text),
    TIME, JSON and text. First in a row text's bases, before the protocol's own readers."""

    def visit_decimal(self, data_type: DataType) -> str | None:
        return any_decimal(data_type)

    def visit_time(self, data_type: DataType) -> str | None:
        return "time"

    def visit_json(self, data_type: DataType) -> str | None:
        return "json"

    def visit_string(self, data_type: DataType) -> str | None:
        return "text"


def any_decimal(data_type: DataType) -> str:
    """A DECIMAL's reader, beyond 38 digits as padded text."""
    shape = decimal_shape(data_type)
    return f"padded:{data_type.scale}" if shape is None else f"decimal:{shape[0]}:{shape[1]}"


def member_names(data_type: DataType) -> str:
    """An ENUM's or SET's member names as a JSON array, ``null`` where the wire did not carry them."""
    return json.dumps(list(data_type.elements)) if data_type.elements else "null"


class JavaText:
    """The Java readers of one session: a column's :data:`Reader` that calls the reader a descriptor names."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._functions: dict[str, str] = {}  # by Spark type: the function registered for it

    @classmethod
    def of(cls, spark: SparkSession) -> JavaText | None:
        """The session's Java readers, None where they are switched off or cannot be compiled here: then the Spark
        SQL readers read every type. Functions are registered in ``spark``, the session of the frame decoded (a
        streaming query's batches have a session of their own, which does not see functions registered later in
        the one it came from)."""
        return cls(spark) if java_code_on(spark) else None

    def envelope(self, name: str, java_class: str, returned: str, typed: str | None = None) -> Column:
        """A protocol's Java envelope reader (``java_class``, a ``UDF1<byte[], Row>`` returning ``returned``) called
        on each message's value, registered in the session as ``name``; or, given ``typed``, that function (the
        same reader made with a plan, which types rows as it reads them: ``JavaRows.envelope_function``)."""
        from pyspark.sql import functions as F

        function = java_function(self.spark, name, java_class, returned) if typed is None else typed
        return F.call_udf(function, F.col("value").cast("binary"))

    def reader(self, data_type: DataType, descriptor: str) -> Reader:
        value_type = spark_type(data_type).simpleString()
        if (function := self._functions.get(value_type)) is None:
            function = self._functions[value_type] = text_function(self.spark, data_type)
        temporal = descriptor.split(":", 1)[0] in _TEMPORAL

        def read_text(text: Column) -> Typed:
            result = read(function, text, descriptor)
            value, zero = result["value"], result["zero"]
            left = text.isNotNull() & value.isNull()  # the codec's to judge, unless a zero date
            return Typed(value=value, bad=left & zero.isNull() if temporal else left, zero=zero if temporal else None)

        return read_text


class JavaFirstReader(TextReader):
    """A protocol's text readers, with the session's Java readers (``java``) first wherever ``java_types`` names one
    for the column's type."""

    java_types: ClassVar[type[JavaDescriptors]]

    def __init__(self, zone: str, session_zone: str, java: JavaText | None = None) -> None:
        super().__init__(zone, session_zone)
        self.java = java

    def visit(self, data_type: DataType) -> Reader | None:
        if self.java is not None and (descriptor := self.java_types(self.zone).visit(data_type)) is not None:
            return self.java.reader(data_type, descriptor)
        return super().visit(data_type)


def java_code_on(spark: SparkSession) -> bool:
    """Whether ``spark`` runs the project's Java code: not switched off (:data:`SWITCH_ENV`) and compiled here, its jar
    now on the session's class path."""
    from cdc_spark.runtime.java_code import install

    return os.environ.get(SWITCH_ENV, "").lower() != "off" and install(spark)


def text_function(spark: SparkSession, data_type: DataType) -> str:
    """The name of the Spark function ``(text, descriptor) -> struct<value, zero>`` whose value is ``data_type``'s
    Spark type, registered in ``spark`` now (the session must have the jar: ``cdc_spark.runtime.java_code.install``)."""
    from pyspark.sql import types as T

    value_type = spark_type(data_type)
    name = f"cdc_tidb_text_{hashlib.sha256(value_type.simpleString().encode()).hexdigest()[:12]}"
    returned = T.StructType([T.StructField("value", value_type), T.StructField("zero", T.StringType())])
    return java_function(spark, name, FUNCTION_CLASS, returned)


def java_function(spark: SparkSession, name: str, java_class: str, returned: SparkDataType | str) -> str:
    """``name``, registered in ``spark`` as the Spark function of ``java_class`` (a Java UDF with a constructor
    without arguments) returning ``returned``, unless the session has it (the session must have the jar)."""
    return register_once(spark, name, lambda: spark.udf.registerJavaFunction(name, java_class, returned))


def register_once(spark: SparkSession, name: str, register: Callable[[], object]) -> str:
    """``name``, after ``register()`` registered it in ``spark`` where the session lacks it (functions are the
    session's own), with the session's class loader, which has the jar, as the thread's."""
    if not spark._jsparkSession.catalog().functionExists(name):
        from cdc_spark.runtime.java_code import jar_on_this_thread

        jar_on_this_thread(spark)
        register()
    return name


def read(function: str, text: Column, descriptor: str) -> Column:
    """``text`` read by the Java reader ``descriptor`` through ``function`` (:func:`text_function`)."""
    from pyspark.sql import functions as F

    return F.call_udf(function, text, F.lit(descriptor))


__all__ = [
    "FUNCTION_CLASS",
    "INTEGRAL",
    "SWITCH_ENV",
    "EveryText",
    "JavaDescriptors",
    "JavaFirstReader",
    "JavaText",
    "any_decimal",
    "integer_descriptor",
    "java_code_on",
    "java_function",
    "member_names",
    "read",
    "register_once",
    "text_function",
]
