"""The contract's Spark types: one per column type, the Python form of each value, and the change frame's shape.

Both decode paths type rows by these rules: the JVM path casts to :func:`spark_type`, the Python path converts
codec values with :func:`spark_value`; a test holds them equal value for value.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Final

from cdc_core.errors import CdcError
from cdc_core.schema import TableSchema
from cdc_core.textual import WIDE_DECIMAL
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal

if TYPE_CHECKING:
    from pyspark.sql.types import DataType as SparkType
    from pyspark.sql.types import StructType

SEQUENCE_TYPE: Final = "struct<commit_ts:bigint,partition:int,offset:bigint,position:int>"
CONTROL_SCHEMA: Final = (
    "kind string, database string, table string, commit_ts bigint, sql string, ddl_type string,"
    " schema_json string, partition int, offset bigint"
)
DEAD_LETTER_SCHEMA: Final = (
    "topic string, partition int, offset bigint, key binary, value binary, error_type string, error string"
)
UNDECLARED_SCALE: Final = 10  # DECIMAL without declared precision/scale: decimal(38,10)
MAX_SPARK_PRECISION: Final = 38
_INT_WIDTH: Final = {
    MySQLType.TINYINT: 1,
    MySQLType.SMALLINT: 2,
    MySQLType.MEDIUMINT: 3,
    MySQLType.INT: 4,
    MySQLType.BIGINT: 8,
}


class ValueRangeError(CdcError, ValueError):
    """A decoded value that its column's Spark type cannot hold (the producer wrote beyond the declared type)."""


def decimal_shape(data_type: DataType) -> tuple[int, int] | None:
    """(precision, scale) of a DECIMAL column's Spark decimal; None when it is text (over 38 digits)."""
    if data_type.length is None:  # the protocol did not say (e.g. Debezium's tidb_type "decimal")
        return MAX_SPARK_PRECISION, UNDECLARED_SCALE
    if data_type.precision > MAX_SPARK_PRECISION:
        return None
    return data_type.precision, data_type.scale


class _SparkType(LogicalTypeVisitor["SparkType"]):
    """The contract's Spark type of a column (summarised in docs/spark-source-decode.md)."""

    def __init__(self) -> None:
        from pyspark.sql import types

        self.T = types

    def visit_int(self, data_type: DataType) -> SparkType:
        width = _INT_WIDTH[data_type.mysql_type] * (2 if data_type.unsigned else 1)
        if width > 8:
            return self.T.DecimalType(20, 0)
        if width <= 2:
            return self.T.ByteType() if width == 1 else self.T.ShortType()
        return self.T.IntegerType() if width <= 4 else self.T.LongType()

    def visit_float(self, data_type: DataType) -> SparkType:
        return self.T.FloatType()

    def visit_double(self, data_type: DataType) -> SparkType:
        return self.T.DoubleType()

    def visit_decimal(self, data_type: DataType) -> SparkType:
        shape = decimal_shape(data_type)
        return self.T.StringType() if shape is None else self.T.DecimalType(*shape)

    def visit_date(self, data_type: DataType) -> SparkType:
        return self.T.DateType()

    def visit_datetime(self, data_type: DataType) -> SparkType:
        return self.T.TimestampNTZType()

    def visit_timestamp(self, data_type: DataType) -> SparkType:
        return self.T.TimestampType()

    def visit_time(self, data_type: DataType) -> SparkType:
        return self.T.DayTimeIntervalType()

    def visit_year(self, data_type: DataType) -> SparkType:
        return self.T.IntegerType()

    def visit_string(self, data_type: DataType) -> SparkType:
        return self.T.StringType()

    def visit_bytes(self, data_type: DataType) -> SparkType:
        return self.T.BinaryType()

    def visit_enum(self, data_type: DataType) -> SparkType:
        return self.T.StringType()

    def visit_set(self, data_type: DataType) -> SparkType:
        return self.T.ArrayType(self.T.StringType())

    def visit_bit(self, data_type: DataType) -> SparkType:
        # a BIT whose width the message does not carry (Canal-JSON's plain ``bit``) may be BIT(64)
        width = data_type.known_bit_width
        return self.T.DecimalType(20, 0) if width is None or width > 63 else self.T.LongType()

    def visit_json(self, data_type: DataType) -> SparkType:
        return self.T.StringType()

    def visit_vector(self, data_type: DataType) -> SparkType:
        return self.T.ArrayType(self.T.FloatType())

    def visit_geometry(self, data_type: DataType) -> SparkType:
        # wkb is declared nullable although a geometry always has one: Arrow fills the children of a null struct
        # with nulls, which a non-nullable child refuses (a null GEOMETRY column failed the Python path)
        wkb = self.T.StructField("wkb", self.T.BinaryType(), True)
        return self.T.StructType([wkb, self.T.StructField("srid", self.T.IntegerType(), True)])

    def visit_array(self, data_type: DataType) -> SparkType:
        # an element type the protocol did not say: its values as text
        return self.T.ArrayType(self.visit(data_type.item) if data_type.item else self.T.StringType())


def spark_type(data_type: DataType) -> SparkType:
    """The contract's Spark type of a column (summarised in docs/spark-source-decode.md)."""
    return _SparkType().visit(data_type)


def _fitted_decimal(number: Decimal, precision: int, scale: int) -> Decimal:
    try:
        exact = number.quantize(Decimal(1).scaleb(-scale), context=WIDE_DECIMAL)
    except InvalidOperation:
        exact = None
    if exact is None or (exact and exact.adjusted() >= precision - scale):
        raise ValueRangeError(f"{number} does not fit decimal({precision},{scale})")
    return exact


def json_text(document: Any) -> str:
    """A JSON column's text in the contract: compact, members in document order."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _same(value: Any) -> Any:
    return value


# Each integral Spark type's values (decimal(20,0): BIGINT UNSIGNED, BIT(64) or of unknown width). An int beyond its
# column's would fail the Arrow conversion of the whole batch, not the one message.
INTEGER_RANGES: Final = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "decimal": (-(10**20) + 1, 10**20 - 1),
}


def _integer(data_type: DataType) -> Callable[[Any], Any]:
    target = spark_type(data_type)
    low, high = INTEGER_RANGES[target.typeName()]
    wide = target.typeName() == "decimal"

    def convert(value: Any) -> Any:
        number = int(value)
        if not low <= number <= high:
            raise ValueRangeError(f"{number} does not fit {target.simpleString()}")
        return Decimal(number) if wide else number

    return convert


def _decimal(data_type: DataType) -> Callable[[Any], Any]:
    shape = decimal_shape(data_type)

    def convert(value: Any) -> Any:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
        return str(number) if shape is None else _fitted_decimal(number, *shape)

    return convert


def _text(value: Any) -> Any:
    # A number or boolean in a text column: a message typed by an older schema of the table (a schemaless message
    # beside typed ones, a column changed to text within the batch) gives its value as text, as MySQL converts it.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return value


def _timestamp(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value


class _SparkValue(LogicalTypeVisitor[Callable[[Any], Any]]):
    """How a decoded (non-NULL) value becomes the Python form Spark expects for :func:`spark_type`."""

    def visit_int(self, data_type: DataType) -> Callable[[Any], Any]:
        return _integer(data_type)

    def visit_float(self, data_type: DataType) -> Callable[[Any], Any]:
        return float

    def visit_double(self, data_type: DataType) -> Callable[[Any], Any]:
        return float

    def visit_decimal(self, data_type: DataType) -> Callable[[Any], Any]:
        return _decimal(data_type)

    def visit_date(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_datetime(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_timestamp(self, data_type: DataType) -> Callable[[Any], Any]:
        return _timestamp

    def visit_time(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_year(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_string(self, data_type: DataType) -> Callable[[Any], Any]:
        return _text

    def visit_bytes(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_enum(self, data_type: DataType) -> Callable[[Any], Any]:
        # the member name; the 1-based index as text when the names are unknown
        return lambda value: str(value.index) if isinstance(value, EnumIndex) else str(value)

    def visit_set(self, data_type: DataType) -> Callable[[Any], Any]:
        # member names; the bitmask as text when the names are unknown
        return lambda value: [str(value.bits)] if isinstance(value, SetBits) else list(value)

    def visit_bit(self, data_type: DataType) -> Callable[[Any], Any]:
        return _integer(data_type)

    def visit_json(self, data_type: DataType) -> Callable[[Any], Any]:
        return json_text

    def visit_vector(self, data_type: DataType) -> Callable[[Any], Any]:
        return _same

    def visit_geometry(self, data_type: DataType) -> Callable[[Any], Any]:
        return lambda value: (value.wkb, value.srid)

    def visit_array(self, data_type: DataType) -> Callable[[Any], Any]:
        item = data_type.item
        if item is None:
            return lambda value: [None if v is None else str(v) for v in value]
        return lambda value: [spark_value(v, item) for v in value]


_SPARK_VALUE: Final = _SparkValue()


def spark_value(value: Any, data_type: DataType) -> Any:
    """A decoded value in the Python form Spark expects for :func:`spark_type`."""
    if value is None or isinstance(value, ZeroTemporal):
        return None
    return _converter(data_type)(value)


@functools.lru_cache(maxsize=1024)
def _converter(data_type: DataType) -> Callable[[Any], Any]:
    """A column type's converter, made once: the codec's path converts every value it hands Spark."""
    return _SPARK_VALUE.visit(data_type)


def spark_image(schema: TableSchema, image: Mapping[str, Any] | None) -> tuple[list[Any], dict[str, str]]:
    """``image``'s values in ``schema``'s stored-column order, typed for Spark, and its zero dates as text.

    Raises :class:`ValueRangeError` naming the column when a value does not fit its column's Spark type, or is not
    of that type at all (a schemaless message's raw value typed by a schema learned elsewhere).
    """
    values, zeros = [], {}
    for column in schema.stored_columns:
        value = None if image is None else image.get(column.name)
        if isinstance(value, ZeroTemporal):
            zeros[column.name] = str(value)
        try:
            values.append(spark_value(value, column.data_type))
        except ValueRangeError as exc:
            raise ValueRangeError(f"table {schema.database}.{schema.table} column {column.name}: {exc}") from None
        except (ValueError, TypeError, ArithmeticError, AttributeError) as exc:
            raise ValueRangeError(
                f"table {schema.database}.{schema.table} column {column.name}: {value!r:.60} is not a"
                f" {column.data_type.type_text()} value ({exc})"
            ) from exc
    return values, zeros


def change_schema(schema: TableSchema) -> StructType:
    """The change frame of ``schema``'s table: its columns, then the ``_cdc_*`` columns."""
    from pyspark.sql import types as T

    columns = [T.StructField(c.name, spark_type(c.data_type), True) for c in schema.stored_columns]
    before = T.StructType([T.StructField(f.name, f.dataType, True) for f in columns])
    return T.StructType(
        [
            *columns,
            T.StructField("_cdc_op", T.StringType(), False),
            T.StructField("_cdc_commit_ts", T.LongType(), True),
            T.StructField("_cdc_sequence", T._parse_datatype_string(SEQUENCE_TYPE), False),
            T.StructField("_cdc_before", before, True),
            T.StructField("_cdc_changed_columns", T.ArrayType(T.StringType()), True),
            T.StructField("_cdc_database", T.StringType(), False),
            T.StructField("_cdc_table", T.StringType(), False),
            T.StructField("_cdc_schema_version", T.LongType(), True),
            T.StructField("_cdc_topic", T.StringType(), True),
            T.StructField("_cdc_partition", T.IntegerType(), True),
            T.StructField("_cdc_offset", T.LongType(), True),
            T.StructField("_cdc_zero_dates", T.MapType(T.StringType(), T.StringType()), True),
        ]
    )


CHANGE_METADATA: Final = (
    "_cdc_op", "_cdc_commit_ts", "_cdc_sequence", "_cdc_before", "_cdc_changed_columns", "_cdc_database",
    "_cdc_table", "_cdc_schema_version", "_cdc_topic", "_cdc_partition", "_cdc_offset", "_cdc_zero_dates",
)  # fmt: skip
