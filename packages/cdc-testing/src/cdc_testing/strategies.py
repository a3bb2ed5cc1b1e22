"""Hypothesis strategies: table schemas covering every column type, and valid typed values for them.

Round-trip tests in every adapter draw from here, so that ``decode(encode(event)) == event`` is checked
over the same kitchen sink everywhere. Values respect MySQL's ranges and each column's declared precision
(fsp, scale, width), because that is what a real TiDB hands to the encoders.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from cdc_core.events import Op, RowChange
from cdc_core.schema import Column, Index, TableSchema
from cdc_core.textual import WIDE_DECIMAL, float32_value
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType, integer_range
from cdc_core.values import Value, ZeroTemporal


def _dt(name: str, **kwargs: Any) -> DataType:
    return DataType(mysql_type=MySQLType(name), **kwargs)


# One column per type variant a codec must handle (name -> type), in a realistic table order.
KITCHEN_SINK_TYPES: dict[str, DataType] = {
    "c_tinyint": _dt("tinyint", length=4),
    "c_tinyint_u": _dt("tinyint", length=3, unsigned=True),
    "c_smallint": _dt("smallint", length=6),
    "c_smallint_u": _dt("smallint", length=5, unsigned=True),
    "c_mediumint": _dt("mediumint", length=9),
    "c_mediumint_u": _dt("mediumint", length=8, unsigned=True),
    "c_int": _dt("int", length=11),
    "c_int_u": _dt("int", length=10, unsigned=True),
    "c_bigint": _dt("bigint", length=20),
    "c_bigint_u": _dt("bigint", length=20, unsigned=True),
    "c_float": _dt("float", length=12),
    "c_double": _dt("double", length=22),
    "c_decimal": _dt("decimal", length=10, decimal=4),
    "c_decimal_wide": _dt("decimal", length=38, decimal=10),
    "c_decimal_int": _dt("decimal", length=20, decimal=0),
    "c_date": _dt("date"),
    "c_datetime": _dt("datetime", decimal=0),
    "c_datetime_3": _dt("datetime", decimal=3),
    "c_datetime_6": _dt("datetime", decimal=6),
    "c_timestamp": _dt("timestamp", decimal=0),
    "c_timestamp_6": _dt("timestamp", decimal=6),
    "c_time": _dt("time", decimal=0),
    "c_time_3": _dt("time", decimal=3),
    "c_year": _dt("year", length=4, unsigned=True, zerofill=True),
    "c_char": _dt("char", length=10, charset="utf8mb4", collation="utf8mb4_bin"),
    "c_varchar": _dt("varchar", length=64, charset="utf8mb4", collation="utf8mb4_bin"),
    "c_text": _dt("text", charset="utf8mb4", collation="utf8mb4_bin"),
    "c_binary": _dt("binary", length=8, charset="binary", collation="binary"),
    "c_varbinary": _dt("varbinary", length=32, charset="binary", collation="binary"),
    "c_blob": _dt("blob", charset="binary", collation="binary"),
    "c_enum": _dt("enum", elements=("red", "green", "blue"), charset="utf8mb4", collation="utf8mb4_bin"),
    "c_set": _dt("set", elements=("x", "y", "z"), charset="utf8mb4", collation="utf8mb4_bin"),
    "c_bit_1": _dt("bit", length=1, unsigned=True),
    "c_bit_12": _dt("bit", length=12, unsigned=True),
    "c_bit_64": _dt("bit", length=64, unsigned=True),
    "c_json": _dt("json"),
}


def kitchen_sink_schema(
    *, database: str = "test", table: str = "kitchen_sink", nullable: bool = True, version: int | None = 1
) -> TableSchema:
    """An ``id INT PRIMARY KEY`` plus one column of every type variant in `KITCHEN_SINK_TYPES`."""
    columns: list[Column] = [Column(name="id", data_type=_dt("int", length=11), nullable=False)]
    columns += [Column(name=name, data_type=t, nullable=nullable) for name, t in KITCHEN_SINK_TYPES.items()]
    return TableSchema(
        database=database,
        table=table,
        columns=columns,
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
        table_id=100,
        version=version,
    )


_TS_MIN = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)
_TS_MAX = dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=dt.UTC)
_TIME_MAX_US = (838 * 3600 + 59 * 60 + 59) * 1_000_000


def _truncate_micros(micros: int, fsp: int) -> int:
    unit: int = 10 ** (6 - fsp)
    return micros - micros % unit


def _text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(st.characters(exclude_categories=["Cs"]), max_size=max_size)


def _json_docs() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text(12)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text(8), inner, max_size=4),
        max_leaves=12,
    )


_Values = st.SearchStrategy[Value]


class _ValuesFor(LogicalTypeVisitor[_Values]):
    """Valid non-NULL values of one column type, as a real TiDB could hand them to an encoder."""

    def __init__(self, *, zero_dates: bool) -> None:
        self.zero_dates = zero_dates

    def visit_int(self, data_type: DataType) -> _Values:
        bounds = integer_range(data_type)
        assert bounds is not None, data_type  # every integer type has a width (test_type_tables.py)
        return st.integers(*bounds)

    def visit_float(self, data_type: DataType) -> _Values:
        return st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda f: float32_value(f) + 0.0)

    def visit_double(self, data_type: DataType) -> _Values:
        return st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f + 0.0)

    def visit_decimal(self, data_type: DataType) -> _Values:
        precision, scale = data_type.precision, data_type.scale
        bound = 10**precision - 1
        # scaleb in the default 28-digit context would round wide values past the column's precision.
        return st.integers(-bound, bound).map(lambda n: Decimal(n).scaleb(-scale, context=WIDE_DECIMAL))

    def visit_date(self, data_type: DataType) -> _Values:
        dates: _Values = st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31))
        return dates | st.just(ZeroTemporal("0000-00-00")) if self.zero_dates else dates

    def visit_datetime(self, data_type: DataType) -> _Values:
        fsp = data_type.fsp
        bounds = dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)
        stamps: _Values = st.datetimes(*bounds).map(
            lambda d: d.replace(microsecond=_truncate_micros(d.microsecond, fsp))
        )
        return stamps | st.just(ZeroTemporal("0000-00-00 00:00:00")) if self.zero_dates else stamps

    def visit_timestamp(self, data_type: DataType) -> _Values:
        fsp = data_type.fsp
        return st.datetimes(_TS_MIN.replace(tzinfo=None), _TS_MAX.replace(tzinfo=None)).map(
            lambda d: d.replace(microsecond=_truncate_micros(d.microsecond, fsp), tzinfo=dt.UTC)
        )

    def visit_time(self, data_type: DataType) -> _Values:
        fsp = data_type.fsp
        return st.integers(-_TIME_MAX_US, _TIME_MAX_US).map(
            lambda us: dt.timedelta(microseconds=_truncate_micros(abs(us), fsp) * (1 if us >= 0 else -1))
        )

    def visit_year(self, data_type: DataType) -> _Values:
        return st.integers(1901, 2155)

    def visit_string(self, data_type: DataType) -> _Values:
        t = data_type.mysql_type
        size = data_type.length if data_type.length and t in (MySQLType.CHAR, MySQLType.VARCHAR) else 40
        text = _text(size)
        # CHAR drops trailing spaces on read, so a stored CHAR value never ends with one.
        return text.map(lambda s: s.rstrip(" ")) if t is MySQLType.CHAR else text

    def visit_bytes(self, data_type: DataType) -> _Values:
        if data_type.mysql_type is MySQLType.BINARY:
            width = data_type.length or 1
            return st.binary(max_size=width).map(lambda b: b.ljust(width, b"\x00"))
        return st.binary(max_size=data_type.length or 48)

    def visit_enum(self, data_type: DataType) -> _Values:
        return st.sampled_from(data_type.elements or ("",))

    def visit_set(self, data_type: DataType) -> _Values:
        elements = data_type.elements or ()
        return st.sets(st.sampled_from(elements) if elements else st.nothing()).map(
            lambda chosen: tuple(e for e in elements if e in chosen)
        )

    def visit_bit(self, data_type: DataType) -> _Values:
        return st.integers(0, (1 << data_type.bit_width) - 1)

    def visit_json(self, data_type: DataType) -> _Values:
        return _json_docs().filter(lambda d: d is not None)

    def visit_vector(self, data_type: DataType) -> _Values:
        return st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda f: f + 0.0), max_size=6)

    def visit_geometry(self, data_type: DataType) -> _Values:
        raise AssertionError(f"no strategy for {data_type}: TiDB has no such column")

    def visit_array(self, data_type: DataType) -> _Values:
        raise AssertionError(f"no strategy for {data_type}: TiDB has no such column")


def values_for(data_type: DataType, *, zero_dates: bool = False) -> st.SearchStrategy[Value]:
    """Valid non-NULL values of one column type, as a real TiDB could hand them to an encoder."""
    return _ValuesFor(zero_dates=zero_dates).visit(data_type)


def row_images(schema: TableSchema, *, zero_dates: bool = False) -> st.SearchStrategy[dict[str, Value]]:
    """Full row images of ``schema`` (NULL allowed where the column is nullable)."""
    fields: dict[str, st.SearchStrategy[Value]] = {}
    for column in schema.stored_columns:
        values = values_for(column.data_type, zero_dates=zero_dates)
        fields[column.name] = st.none() | values if column.nullable else values
    order = [column.name for column in schema.stored_columns]
    # fixed_dictionaries does not keep insertion order; row images are in column order.
    return st.fixed_dictionaries(fields).map(lambda row: {name: row[name] for name in order})


@st.composite
def table_schemas(draw: st.DrawFn, *, min_columns: int = 1) -> TableSchema:
    """Random tables: an integer primary key plus a random subset of the kitchen-sink column types."""
    names = draw(st.lists(st.sampled_from(sorted(KITCHEN_SINK_TYPES)), min_size=min_columns, unique=True, max_size=12))
    nullable = draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    columns: list[Column] = [Column(name="id", data_type=_dt("bigint", length=20), nullable=False)]
    columns += [
        Column(name=n, data_type=KITCHEN_SINK_TYPES[n], nullable=nl) for n, nl in zip(names, nullable, strict=True)
    ]
    return TableSchema(
        database=draw(st.sampled_from(["test", "shop", "app_db"])),
        table=draw(st.sampled_from(["t", "orders", "users_2"])),
        columns=columns,
        indexes=[Index(name="PRIMARY", columns=["id"], unique=True, primary=True)],
        table_id=draw(st.integers(1, 10_000)),
        version=draw(st.integers(1, 2**62)),
    )


@st.composite
def row_changes(
    draw: st.DrawFn, schema: TableSchema | None = None, *, zero_dates: bool = False, ops: tuple[Op, ...] = tuple(Op)
) -> RowChange:
    """An insert, update or delete of ``schema`` (drawn from `table_schemas` when not given)."""
    table = schema if schema is not None else draw(table_schemas())
    op = draw(st.sampled_from(ops))
    images = row_images(table, zero_dates=zero_dates)
    before = draw(images) if op in (Op.UPDATE, Op.DELETE) else None
    after = draw(images) if op in (Op.INSERT, Op.UPDATE) else None
    if before is not None and after is not None:
        after["id"] = before["id"]
    return RowChange(
        op=op,
        database=table.database,
        table=table.table,
        before=before,
        after=after,
        commit_ts=draw(st.integers(1 << 18, (1 << 62) - 1)),
        table_id=table.table_id,
        schema_version=table.version,
        schema=table,
    )
