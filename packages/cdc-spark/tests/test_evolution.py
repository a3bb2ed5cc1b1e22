"""Schema evolution between a batch and a stored table on Spark types alone (no session): which type changes
are widenings, what a batch adds or widens, and the typed error for anything else. Fast enough for
``nox -s mutate -- cdc_spark.merge.evolution``; the ALTERs on real Delta and Iceberg tables are in
``test_apply.py``."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from cdc_core.errors import SchemaError
from cdc_spark.merge.evolution import Evolution, SchemaEvolutionError, evolve, is_widening

BYTE, SHORT, INT, LONG = T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType()


def strict(data_type: T.DataType) -> T.StructType:
    return T.StructType([T.StructField("a", data_type, False)])


WIDENINGS = [
    (INT, INT),
    (BYTE, SHORT),
    (SHORT, INT),
    (INT, LONG),
    (BYTE, LONG),
    (BYTE, T.DecimalType(3, 0)),  # TINYINT: 3 digits
    (SHORT, T.DecimalType(7, 2)),  # SMALLINT: 5 digits
    (INT, T.DecimalType(10, 0)),
    (INT, T.DecimalType(12, 2)),
    (LONG, T.DecimalType(19, 0)),
    (T.FloatType(), T.DoubleType()),
    (T.DecimalType(10, 2), T.DecimalType(12, 2)),
    (T.DecimalType(10, 2), T.DecimalType(11, 3)),
    (T.DecimalType(10, 2), T.DecimalType(10, 2)),
    (T.DateType(), T.TimestampNTZType()),
    (strict(INT), T.StructType([T.StructField("a", INT, True)])),  # nullability is no type change
    (T.ArrayType(INT, False), T.ArrayType(INT, True)),
    (T.MapType(T.StringType(), strict(INT), False), T.MapType(T.StringType(), T.StructType([T.StructField("a", INT)]))),
    (T.ArrayType(strict(LONG), False), T.ArrayType(T.StructType([T.StructField("a", LONG)]), True)),
]
NOT_WIDENINGS = [
    (LONG, INT),
    (INT, SHORT),
    (SHORT, BYTE),
    (BYTE, T.DecimalType(2, 0)),
    (SHORT, T.DecimalType(6, 2)),
    (INT, T.DecimalType(11, 2)),
    (LONG, T.DecimalType(20, 2)),
    (LONG, T.DoubleType()),  # past 2^53 a double is not exact
    (T.DoubleType(), T.FloatType()),
    (T.DecimalType(10, 2), T.DecimalType(10, 3)),  # fewer integer digits
    (T.DecimalType(10, 2), T.DecimalType(12, 1)),  # fewer fraction digits
    (T.DecimalType(10, 0), LONG),
    (T.DateType(), T.TimestampType()),  # a date at local midnight is no fixed instant
    (T.TimestampNTZType(), T.DateType()),
    (T.StringType(), INT),
    (INT, T.StringType()),
    (T.ArrayType(INT), T.ArrayType(LONG)),  # nested types must stay equal
    (strict(INT), T.StructType([T.StructField("a", INT), T.StructField("b", INT)])),
    (T.MapType(T.StringType(), INT), T.MapType(T.StringType(), LONG)),
    (T.MapType(INT, INT), T.MapType(LONG, INT)),
    (strict(INT), strict(LONG)),  # a nested field's type, not only its nullability
    (strict(INT), T.StructType([T.StructField("b", INT, False)])),  # a renamed nested field
    (
        T.StructType([T.StructField("a", INT), T.StructField("b", INT)]),
        T.StructType([T.StructField("b", INT), T.StructField("a", INT)]),
    ),
    (strict(INT), T.ArrayType(INT)),  # a different kind of nested type
    (T.ArrayType(INT), T.MapType(INT, INT)),
    (T.MapType(INT, INT), strict(INT)),
]


@pytest.mark.parametrize(("old", "new"), WIDENINGS, ids=str)
def test_widenings(old: T.DataType, new: T.DataType) -> None:
    assert is_widening(old, new)


@pytest.mark.parametrize(("old", "new"), NOT_WIDENINGS, ids=str)
def test_not_widenings(old: T.DataType, new: T.DataType) -> None:
    assert not is_widening(old, new)


STORED = T.StructType(
    [
        T.StructField("id", LONG, False),
        T.StructField("qty", INT),
        T.StructField("price", T.DecimalType(10, 2)),
        T.StructField("tags", T.ArrayType(T.StringType(), False)),
    ]
)


def test_a_batch_adds_and_widens_columns_and_narrower_types_are_cast_up() -> None:
    wanted = T.StructType(
        [
            T.StructField("id", INT, False),  # narrower than stored: cast up on write
            T.StructField("note", T.StringType(), False),
            T.StructField("qty", LONG, False),
            T.StructField("price", T.DecimalType(12, 4)),
            T.StructField("tags", T.ArrayType(T.StringType(), True)),
            T.StructField("seen", T.DateType()),
        ]
    )
    evolution = evolve("shop.orders", STORED, wanted)
    assert evolution == Evolution(
        added=(T.StructField("note", T.StringType(), True), T.StructField("seen", T.DateType(), True)),
        widened=(T.StructField("qty", LONG, True), T.StructField("price", T.DecimalType(12, 4), True)),
    )
    assert evolution


def test_the_same_or_fewer_columns_change_nothing() -> None:
    assert evolve("shop.orders", STORED, STORED) == Evolution()
    assert not evolve("shop.orders", STORED, T.StructType(STORED.fields[:2]))
    assert not Evolution()
    assert Evolution(added=(T.StructField("a", INT),))
    assert Evolution(widened=(T.StructField("a", INT),))


@pytest.mark.parametrize(
    ("field", "old_type", "new_type"),
    [
        (T.StructField("qty", T.StringType()), "int", "string"),
        (T.StructField("price", T.DecimalType(10, 3)), "decimal(10,2)", "decimal(10,3)"),
        (T.StructField("tags", T.ArrayType(INT)), "array<string>", "array<int>"),
    ],
)
def test_an_incompatible_change_names_the_table_column_and_types(
    field: T.StructField, old_type: str, new_type: str
) -> None:
    wanted = T.StructType([T.StructField("note", T.StringType()), field])
    with pytest.raises(SchemaEvolutionError) as caught:
        evolve("shop.orders", STORED, wanted)
    error = caught.value
    assert isinstance(error, SchemaError)
    assert (error.table, error.column, error.old_type, error.new_type) == (
        "shop.orders",
        field.name,
        old_type,
        new_type,
    )
    assert str(error) == (
        f"table shop.orders: column {field.name!r} changed type incompatibly from {old_type} to {new_type};"
        " only added columns and widened types are applied"
    )


def test_an_error_can_give_its_own_reason() -> None:
    error = SchemaEvolutionError("shop.orders", "qty", "int", "bigint", "Iceberg cannot widen a map value")
    assert str(error) == (
        "table shop.orders: column 'qty' changed type incompatibly from int to bigint; Iceberg cannot widen a map value"
    )
