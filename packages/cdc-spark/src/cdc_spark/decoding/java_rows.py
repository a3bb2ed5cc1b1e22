"""A table's row messages typed in one Java pass per message (``cdc.spark.rows.ImageRows``: ``CanalRows``,
``SimpleRows``), instead of the Spark SQL typing's four projections over the parsed maps
(:mod:`cdc_spark.decoding.jvm`).

The Java parses the message again from its bytes (the batch's cache then holds them, not the parsed maps) and types
every value of every row with the readers :mod:`~cdc_spark.decoding.java_text` names, following the SQL typing's
rules for images, changed columns, zero dates and bad rows. It types a table when every column of every shape in the
batch has a Java reader whose Spark type is the final schema's (no widening between shapes); otherwise the batch
takes the SQL typing. ``CDC_JAVA_ROWS=off`` turns it off.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.schema import Column, TableSchema
from cdc_spark.decoding.adapter import ShapeReaders
from cdc_spark.decoding.java_text import JavaText, register_once
from cdc_spark.decoding.spark_types import spark_type
from cdc_spark.runtime.java_names import java_class

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import ArrayType, StructType

SWITCH_ENV: Final = "CDC_JAVA_ROWS"  # "off": the Spark SQL typing (with the per-column Java readers)
# A column's reader descriptor in one shape (the shape's own column), None where the Java has no reader for it
Describer = Callable[[ShapeReaders, Column], "str | None"]


def contract_type(schema: TableSchema) -> StructType:
    """The contract's struct of one table's change: its columns, ``_cdc_before``, changed columns, zero dates."""
    from pyspark.sql import types as T

    columns = [T.StructField(c.name, spark_type(c.data_type)) for c in schema.stored_columns]
    return T.StructType(
        [
            *columns,
            T.StructField("_cdc_before", T.StructType(columns)),
            T.StructField("_cdc_changed_columns", T.ArrayType(T.StringType())),
            T.StructField("_cdc_zero_dates", T.MapType(T.StringType(), T.StringType())),
        ]
    )


@attrs.frozen
class TypedEnvelope:
    """A protocol's Java envelope reader that also types the rows of the tables of its plan in the same pass:
    ``java_class`` (a ``UDF1<byte[], Row>`` made with ``{"tables": [{"database", "table", "rows"}]}``, ``rows`` the
    row typer's plan of that table) returns the envelope's fields (``read``, a DDL) and then per table, in the plan's
    order, what the row typer returns for that table's row messages (null elsewhere)."""

    java_class: str
    read: str


@attrs.frozen
class JavaRows:
    """The Java row typer of one protocol in one session: ``java_class`` (a ``UDF2<byte[], String, List<Row>>``: the
    message's bytes and its shape, made with a plan) and the descriptor of each column's reader in a shape; and the
    protocol's typed envelope reader, where it has one."""

    spark: SparkSession
    java_class: str
    descriptor: Describer
    envelope: TypedEnvelope | None = None

    @classmethod
    def of(
        cls, java: JavaText | None, java_class: str, descriptor: Describer, envelope: TypedEnvelope | None = None
    ) -> JavaRows | None:
        """The typer, where the session has the Java readers and it is not switched off."""
        if java is None or os.environ.get(SWITCH_ENV, "").lower() == "off":
            return None
        return cls(java.spark, java_class, descriptor, envelope)

    def plan(self, schema: TableSchema, shapes: Mapping[str, ShapeReaders]) -> str | None:
        """The plan typing ``schema``'s rows from messages of ``shapes`` (by shape), or None where a column of a
        shape has no Java reader or another Spark type than the final schema's."""
        columns = schema.stored_columns
        readers: dict[str, list[str | None]] = {}
        for digest, shape in sorted(shapes.items()):
            own = {c.name: c for c in shape.schema.stored_columns}
            descriptors: list[str | None] = []
            for column in columns:
                found = own.get(column.name)
                if found is None:
                    descriptors.append(None)  # an older, narrower shape: the column is null in its rows
                    continue
                descriptor = self.descriptor(shape, found)
                if descriptor is None or spark_type(found.data_type) != spark_type(column.data_type):
                    return None
                descriptors.append(descriptor)
            readers[digest] = descriptors
        return json.dumps({"columns": [c.name for c in columns], "shapes": readers})

    def function(self, schema: TableSchema, plan: str) -> str:
        """The name of the Spark function ``(message, shape) -> array<struct<op, bad, row>>`` typing ``schema``'s
        rows by ``plan``, registered in the session now if it is not yet."""
        return self._register("cdc_rows", self.java_class, plan, _changes_type(schema).json())

    def envelope_function(self, tables: Sequence[tuple[int, TableSchema, str]]) -> str | None:
        """The name of the session's typed envelope reader (:class:`TypedEnvelope`) of ``tables`` (index, final
        schema and plan of each), whose field ``m<index>`` holds a table's typed rows; None where the protocol has
        no such reader."""
        from pyspark.sql import types as T
        from pyspark.sql.types import _parse_datatype_string

        if self.envelope is None:
            return None
        read = _parse_datatype_string(self.envelope.read)
        assert isinstance(read, T.StructType), self.envelope.read
        fields = [T.StructField(f"m{index}", _changes_type(schema)) for index, schema, _ in tables]
        returned = T.StructType([*read.fields, *fields])
        plan = json.dumps(
            {"tables": [{"database": s.database, "table": s.table, "rows": plan} for _, s, plan in tables]}
        )
        return self._register("cdc_typed_envelope", self.envelope.java_class, plan, returned.json())

    def _register(self, prefix: str, java_class_name: str, plan: str, returned_json: str) -> str:
        """The name of the session's function of ``java_class_name`` made with ``plan``, registered now if it is
        not yet (an instance, as the class has no constructor without a plan)."""
        digest = hashlib.sha256(f"{java_class_name}|{plan}|{returned_json}".encode()).hexdigest()[:16]
        name = f"{prefix}_{digest}"

        def register() -> None:
            jvm = self.spark.sparkContext._jvm
            assert jvm is not None
            session = self.spark._jsparkSession
            typer = java_class(jvm, java_class_name)(plan)
            session.udf().register(name, typer, session.parseDataType(returned_json))

        return register_once(self.spark, name, register)


def _changes_type(schema: TableSchema) -> ArrayType:
    """What a row typer returns for one message of ``schema``'s table: ``array<struct<op, bad, row>>``."""
    from pyspark.sql import types as T

    return T.ArrayType(
        T.StructType(
            [
                T.StructField("op", T.StringType()),
                T.StructField("bad", T.BooleanType()),
                T.StructField("row", contract_type(schema)),
            ]
        )
    )


__all__ = ["SWITCH_ENV", "Describer", "JavaRows", "TypedEnvelope", "contract_type"]
