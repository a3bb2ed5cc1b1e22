"""A table's row messages typed in one Java pass per message (``cdc.spark.rows.ImageRows``: ``CanalRows``,
``SimpleRows``), instead of the Spark SQL typing's four projections over the parsed maps
(:mod:`cdc_spark.decoding.jvm_path`).

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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.schema import Column, TableSchema
from cdc_spark.decoding.adapter import ShapeReaders
from cdc_spark.decoding.java_text import JavaText, register_once
from cdc_spark.decoding.spark_types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

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
class JavaRows:
    """The Java row typer of one protocol in one session: ``java_class`` (a ``UDF2<byte[], String, List<Row>>``: the
    message's bytes and its shape, made with a plan) and the descriptor of each column's reader in a shape."""

    spark: SparkSession
    java_class: str
    descriptor: Describer

    @classmethod
    def of(cls, java: JavaText | None, java_class: str, descriptor: Describer) -> JavaRows | None:
        """The typer, where the session has the Java readers and it is not switched off."""
        if java is None or os.environ.get(SWITCH_ENV, "").lower() == "off":
            return None
        return cls(java.spark, java_class, descriptor)

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
        from pyspark.sql import types as T

        returned = T.ArrayType(
            T.StructType(
                [
                    T.StructField("op", T.StringType()),
                    T.StructField("bad", T.BooleanType()),
                    T.StructField("row", contract_type(schema)),
                ]
            )
        )
        returned_json = returned.json()
        digest = hashlib.sha256(f"{self.java_class}|{plan}|{returned_json}".encode()).hexdigest()[:16]
        name = f"cdc_rows_{digest}"

        def register() -> None:  # an instance made with the plan, as the function has no constructor without one
            jvm = self.spark.sparkContext._jvm
            assert jvm is not None
            java_class = jvm
            for part in self.java_class.split("."):
                java_class = getattr(java_class, part)
            session = self.spark._jsparkSession
            session.udf().register(name, java_class(plan), session.parseDataType(returned_json))

        return register_once(self.spark, name, register)


__all__ = ["SWITCH_ENV", "Describer", "JavaRows", "contract_type"]
