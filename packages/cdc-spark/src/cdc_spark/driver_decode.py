"""Decode a Kafka-shaped micro-batch on the driver with the installed codec, into the change-frame contract.

The job uses ``cdc_spark.decode.decode`` (Spark-native and executor-side) when that module is installed and
this driver-side decoder otherwise. Both produce :class:`DecodedChanges` in the same contract (see
``docs/spark.md``): one typed change frame per table, a control frame (DDL, watermarks, bootstraps) and a
dead-letter frame. Here every message of the batch is decoded in the driver's Python process, which is
exact for every protocol but bounded by the driver: use it for moderate batch sizes (``maxOffsetsPerTrigger``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.canonical import schema_to_json
from cdc_core.codec import Decoder, SchemaHoldingDecoder
from cdc_core.errors import CdcError
from cdc_core.events import Bootstrap, DDLEvent, DDLType, RowChange, Watermark
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.textual import WIDE_DECIMAL
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType
from cdc_core.values import EnumIndex, SetBits, ZeroTemporal
from cdc_spark.partition_clock import PartitionClock, PartitionKey

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
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
_INT_WIDTH: Final = {
    MySQLType.TINYINT: 1,
    MySQLType.SMALLINT: 2,
    MySQLType.MEDIUMINT: 3,
    MySQLType.INT: 4,
    MySQLType.BIGINT: 8,
}


class _SparkType(LogicalTypeVisitor["SparkType"]):
    """The contract's Spark type of a column (summarised in docs/spark.md)."""

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
        if data_type.length is None:  # the protocol did not say (e.g. Debezium's tidb_type "decimal")
            return self.T.DecimalType(38, UNDECLARED_SCALE)
        if data_type.precision > 38:
            return self.T.StringType()
        return self.T.DecimalType(data_type.precision, data_type.scale)

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
        return self.T.DecimalType(20, 0) if data_type.bit_width > 63 else self.T.LongType()

    def visit_json(self, data_type: DataType) -> SparkType:
        return self.T.StringType()

    def visit_vector(self, data_type: DataType) -> SparkType:
        return self.T.ArrayType(self.T.FloatType())

    def visit_geometry(self, data_type: DataType) -> SparkType:
        wkb = self.T.StructField("wkb", self.T.BinaryType(), False)
        return self.T.StructType([wkb, self.T.StructField("srid", self.T.IntegerType(), True)])

    def visit_array(self, data_type: DataType) -> SparkType:
        # an element type the protocol did not say: its values as text
        return self.T.ArrayType(self.visit(data_type.item) if data_type.item else self.T.StringType())


def spark_type(data_type: DataType) -> SparkType:
    """The contract's Spark type of a column (spark_types.py mapping, summarised in docs/spark.md)."""
    return _SparkType().visit(data_type)


class ValueRangeError(CdcError, ValueError):
    """A decoded value that its column's Spark type cannot hold (the producer wrote beyond the declared type)."""


def _fitted_decimal(number: Decimal, precision: int, scale: int) -> Decimal:
    try:
        exact = number.quantize(Decimal(1).scaleb(-scale), context=WIDE_DECIMAL)
    except InvalidOperation:
        exact = None
    if exact is None or (exact and exact.adjusted() >= precision - scale):
        raise ValueRangeError(f"{number} does not fit decimal({precision},{scale})")
    return exact


def _same(value: Any) -> Any:
    return value


def _integer(data_type: DataType) -> Callable[[Any], Any]:
    if spark_type(data_type).typeName() == "decimal":  # BIGINT UNSIGNED, BIT(64): beyond a long
        return lambda value: Decimal(int(value))
    return int


def _decimal(data_type: DataType) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
        if data_type.length is None:
            return _fitted_decimal(number, 38, UNDECLARED_SCALE)
        if data_type.precision > 38:
            return str(number)
        return _fitted_decimal(number, data_type.precision, data_type.scale)

    return convert


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
        return _same

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
        return lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))

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
    return _SPARK_VALUE.visit(data_type)(value)


def change_schema(schema: TableSchema) -> StructType:
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


@attrs.frozen
class _Change:
    """A row change (or a table truncate) waiting for its table's latest schema of the batch."""

    op: str
    database: str
    table: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    changed: tuple[str, ...] | None
    commit_ts: int | None
    schema_version: int | None
    message: Message
    position: int
    order_ts: int | None  # commit_ts, else inferred from its partition (see cdc_spark.partition_clock)


@attrs.define
class DecodedChanges:
    """The decode output contract: per-table change frames, schemas, control rows, dead letters."""

    spark: SparkSession
    _rows: dict[tuple[str, str], list[tuple[Any, ...]]]
    _schemas: dict[tuple[str, str], TableSchema]
    _control: list[tuple[Any, ...]]
    _dead: list[tuple[Any, ...]]
    _clock: dict[PartitionKey, int] = attrs.field(factory=dict)

    def tables(self) -> list[tuple[str, str]]:
        return sorted(self._rows)

    def partition_commit_ts(self) -> dict[PartitionKey, int]:
        """The newest commit ts per topic-partition after this batch: the next batch's ``partition_ts``."""
        return dict(self._clock)

    def table(self, database: str, table: str) -> DataFrame:
        frame: DataFrame = self.spark.createDataFrame(
            self._rows[(database, table)], change_schema(self._schemas[(database, table)])
        )
        return frame

    def schemas(self) -> dict[tuple[str, str], TableSchema]:
        return dict(self._schemas)

    def control(self) -> DataFrame:
        frame: DataFrame = self.spark.createDataFrame(self._control, CONTROL_SCHEMA)
        return frame

    def dead_letters(self) -> DataFrame:
        frame: DataFrame = self.spark.createDataFrame(self._dead, DEAD_LETTER_SCHEMA)
        return frame


def spark_image(schema: TableSchema, image: Mapping[str, Any] | None) -> tuple[list[Any], dict[str, str]]:
    """``image``'s values in ``schema``'s stored-column order, typed for Spark, and its zero dates as text.

    Raises :class:`ValueRangeError` naming the column when a value does not fit its column's Spark type.
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
    return values, zeros


def _dead_letter(message: Message, error_type: str, error: str) -> tuple[Any, ...]:
    """A row of :data:`DEAD_LETTER_SCHEMA`."""
    return (message.topic, message.partition, message.offset, message.key, message.value, error_type, error)


def decode(
    df: DataFrame,
    protocol: str,
    options: Mapping[str, object] | None = None,
    schemas: Mapping[tuple[str, str], TableSchema] | None = None,
    *,
    partition_ts: Mapping[PartitionKey, int] | None = None,
    known_versions: Sequence[TableSchema] = (),
) -> DecodedChanges:
    """Decode every message of ``df`` (Kafka source columns) with the ``protocol`` codec on the driver."""
    decoder: Decoder = get_codec(protocol).decoder(dict(options or {}))
    if isinstance(decoder, SchemaHoldingDecoder):
        for learned in [*known_versions, *(schemas or {}).values()]:
            decoder.prime(learned)
    clock = PartitionClock(partition_ts)
    known: dict[tuple[str, str], TableSchema] = dict(schemas or {})
    known_at: dict[tuple[str, str], int] = {}  # commit ts of the schema kept: the newest wins, not the last read

    def learn(schema: TableSchema, commit_ts: int | None) -> None:
        name = (schema.database, schema.table)
        ts = commit_ts if commit_ts is not None else -1
        if name not in known or ts >= known_at.get(name, -1):
            known[name], known_at[name] = schema, ts

    pending: list[_Change] = []
    control: list[tuple[Any, ...]] = []
    dead: list[tuple[Any, ...]] = []
    batch = df.select("key", "value", "topic", "partition", "offset", "timestamp").orderBy("partition", "offset")
    for record in batch.toLocalIterator():
        stamp = record["timestamp"]
        message = Message(
            value=record["value"],
            key=record["key"],
            topic=record["topic"],
            partition=record["partition"],
            offset=record["offset"],
            timestamp=None if stamp is None else int(stamp.timestamp() * 1000),
        )
        try:
            events = decoder.decode(message)
        except CdcError as exc:
            dead.append(_dead_letter(message, type(exc).__name__, str(exc)))
            continue
        where = (message.topic, message.partition)
        for position, event in enumerate(events):
            if isinstance(event, RowChange):
                if event.schema is not None:
                    learn(event.schema, event.commit_ts)
                pending.append(
                    _Change(op=event.op.value, database=event.database, table=event.table, before=event.before,
                            after=event.after, changed=event.changed_columns, commit_ts=event.commit_ts,
                            schema_version=event.schema_version, message=message, position=position,
                            order_ts=clock.order_ts(where, event.commit_ts))
                )  # fmt: skip
            elif isinstance(event, Watermark):
                control.append(("watermark", None, None, event.ts, None, None, None, message.partition, message.offset))
            elif isinstance(event, DDLEvent | Bootstrap):
                table_schema = event.table_schema
                if table_schema is not None:
                    learn(table_schema, event.commit_ts if isinstance(event, DDLEvent) else None)
                if isinstance(event, Bootstrap):
                    text = json.dumps(schema_to_json(event.table_schema))
                    control.append(("bootstrap", event.database, event.table, None, None, None, text,
                                    message.partition, message.offset))  # fmt: skip
                    continue
                assert isinstance(event, DDLEvent)
                control.append(("ddl", event.database, event.table, event.commit_ts, event.sql, event.ddl_type.value,
                                None if table_schema is None else json.dumps(schema_to_json(table_schema)),
                                message.partition, message.offset))  # fmt: skip
                if event.ddl_type is DDLType.TRUNCATE and event.database and event.table:
                    pending.append(
                        _Change(op="truncate", database=event.database, table=event.table, before=None, after=None,
                                changed=None, commit_ts=event.commit_ts, schema_version=None, message=message,
                                position=position, order_ts=clock.order_ts(where, event.commit_ts))
                    )  # fmt: skip
        clock.see(where, events)
    if isinstance(decoder, SchemaHoldingDecoder):  # rows whose schema never came: reported, not dropped
        for message, reason in decoder.unreleased():
            dead.append(_dead_letter(message, "SchemaError", reason))
    rows: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for change in pending:
        message = change.message
        name = (change.database, change.table)
        schema = known.get(name)
        if schema is None:
            dead.append(
                _dead_letter(message, "SchemaError", f"no schema known for table {change.database}.{change.table}")
            )
            continue
        image = change.before if change.op == "delete" else change.after
        try:
            values, zeros = spark_image(schema, image)
            before = None if change.before is None else tuple(spark_image(schema, change.before)[0])
        except ValueRangeError as exc:
            dead.append(_dead_letter(message, type(exc).__name__, str(exc)))
            continue
        changed = None if change.changed is None else list(change.changed)
        if image is not None and changed is None and any(c.name not in image for c in schema.stored_columns):
            changed = [c.name for c in schema.stored_columns if c.name in image]  # an older, narrower schema
        sequence = (change.order_ts, message.partition, message.offset, change.position)
        rows.setdefault(name, []).append(
            (*values, change.op, change.commit_ts, sequence,
             before, changed, change.database, change.table, change.schema_version, message.topic,
             message.partition, message.offset, zeros or None)
        )  # fmt: skip
    return DecodedChanges(df.sparkSession, rows, known, control, dead, clock.snapshot())
