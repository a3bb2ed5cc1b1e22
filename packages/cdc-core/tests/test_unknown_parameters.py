"""Unknown column parameters: kept unknown in types and canonical JSON, values written with their own digits,
derived (or refused) where a format needs them, and every value changed to fit a known one reported."""

from __future__ import annotations

import copy
import datetime as dt
import json
import pickle
import warnings
from decimal import Decimal

import pytest

from cdc_core import canonical
from cdc_core.events import Op, RowChange
from cdc_core.fitting import (
    UnknownParameterError,
    UnknownParameterMode,
    UnknownParameters,
    ValueChangedWarning,
    change_to_fit,
    notice_for,
)
from cdc_core.schema import Column, TableSchema
from cdc_core.textual import format_datetime, format_decimal, format_time, format_timestamp, keeping_digits, parse_time
from cdc_core.types import DataType, LogicalType, MySQLType, parse_type_text
from cdc_core.values import ZeroTemporal, own_fsp, with_fsp, written_fsp

UTC = dt.UTC


def t(name: str, **params: int | None) -> DataType:
    return DataType(mysql_type=MySQLType(name), **params)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ types


@pytest.mark.parametrize(
    ("text", "length", "decimal"),
    [
        ("decimal", None, None),  # TiCDC's bare mysqlType: nothing known
        ("decimal(10)", 10, 0),  # a written precision declares the scale too
        ("decimal(10,4)", 10, 4),
        ("datetime", None, None),
        ("datetime(3)", None, 3),
        ("time(0)", None, 0),
    ],
)
def test_type_text_leaves_unwritten_parameters_unknown(text: str, length: int | None, decimal: int | None) -> None:
    data_type = parse_type_text(text)
    assert (data_type.length, data_type.decimal) == (length, decimal)


def test_type_text_writes_only_known_parameters() -> None:
    assert t("decimal").type_text() == "decimal"
    assert t("decimal", length=18, decimal=4).type_text() == "decimal(18,4)"
    assert t("datetime").type_text() == "datetime"
    assert t("time", decimal=3).type_text() == "time(3)"
    assert t("datetime").known_fsp is None and t("datetime", decimal=0).known_fsp == 0
    assert t("decimal").known_scale is None and t("decimal", length=5, decimal=2).known_precision == 5


# ------------------------------------------------------------------------------------------- own digits


def test_unknown_scale_writes_the_decimals_own_digits() -> None:
    assert format_decimal(Decimal("12345678901234.5678"), None) == "12345678901234.5678"
    assert format_decimal(Decimal("-0.0001"), None) == "-0.0001"
    assert format_decimal(Decimal("1.50"), None) == "1.50"
    assert format_decimal(Decimal("12345678901234.5678"), 0) == "12345678901235"  # a known scale: TiDB's text


def test_unknown_fsp_writes_the_digits_the_text_had() -> None:
    read = keeping_digits(parse_time)
    assert [format_time(read(text), None) for text in ("838:59:59.000", "-12:34:56.789", "00:00:01")] == [
        "838:59:59.000",
        "-12:34:56.789",
        "00:00:01",
    ]
    moment = with_fsp(dt.datetime(2024, 2, 29, 12, 34, 56, 120000), 6)
    assert format_datetime(moment, None) == "2024-02-29 12:34:56.120000"
    stamp = with_fsp(dt.datetime(2024, 2, 29, 12, 34, 56, tzinfo=UTC), 3)
    assert format_timestamp(stamp, None, dt.timezone(dt.timedelta(hours=8))) == "2024-02-29 20:34:56.000"
    # a value with no written digits: ISO's own rule (none without microseconds, all six with)
    assert format_datetime(dt.datetime(2024, 1, 1, 0, 0, 0, 5), None) == "2024-01-01 00:00:00.000005"
    assert format_datetime(ZeroTemporal("0000-00-00 00:00:00.00"), None) == "0000-00-00 00:00:00.00"


def test_written_digits_travel_with_the_value() -> None:
    moment = with_fsp(dt.datetime(2024, 2, 29, 12, 34, 56, 789000, tzinfo=UTC), 3)
    assert moment == dt.datetime(2024, 2, 29, 12, 34, 56, 789000, tzinfo=UTC)
    assert [written_fsp(x) for x in (moment, pickle.loads(pickle.dumps(moment)), copy.deepcopy(moment))] == [3, 3, 3]
    duration = with_fsp(dt.timedelta(hours=838, minutes=59, seconds=59), 3)
    assert written_fsp(pickle.loads(pickle.dumps(duration))) == 3
    # digits a plain value is written with anyway need no remembering
    plain = with_fsp(dt.timedelta(seconds=1), 0)
    assert type(plain) is dt.timedelta and own_fsp(plain) == 0
    assert type(with_fsp(moment, 6)) is dt.datetime


# ----------------------------------------------------------------------------------------- canonical JSON

SCHEMA = TableSchema(
    database="shop",
    table="orders",
    columns=[
        Column(name="id", data_type=t("int", length=11), nullable=False),
        Column(name="price", data_type=t("decimal")),
        Column(name="placed", data_type=t("datetime")),
        Column(name="wait", data_type=t("time", decimal=0)),
    ],
)


def test_canonical_json_says_unknown_by_leaving_the_parameter_out() -> None:
    columns = canonical.schema_to_json(SCHEMA)["columns"]
    assert [c["data_type"] for c in columns] == [
        {"mysql_type": "int", "length": 11},
        {"mysql_type": "decimal"},
        {"mysql_type": "datetime"},
        {"mysql_type": "time", "decimal": 0},  # a known fsp 0 is written out
    ]
    assert canonical.schema_from_json(canonical.schema_to_json(SCHEMA)) == SCHEMA


def test_canonical_json_keeps_the_digits_of_a_value_of_unknown_fsp() -> None:
    after = {
        "id": 1,
        "price": Decimal("-0.0001"),
        "placed": with_fsp(dt.datetime(2024, 2, 29, 12, 34, 56, 120000), 6),
        "wait": dt.timedelta(hours=838, minutes=59, seconds=59),
    }
    event = RowChange(op=Op.INSERT, database="shop", table="orders", after=after, schema=SCHEMA)
    line = canonical.dumps(event)
    assert '"placed":"2024-02-29T12:34:56.120000"' in line and '"price":"-0.0001"' in line
    short = canonical.loads(line.replace("56.120000", "56.789"))
    assert isinstance(short, RowChange) and short.after is not None
    assert written_fsp(short.after["placed"]) == 3
    assert format_datetime(short.after["placed"], None) == "2024-02-29 12:34:56.789"


def test_old_documents_with_explicit_parameters_read_the_same() -> None:
    old = {
        "kind": "row",
        "op": "insert",
        "database": "shop",
        "table": "orders",
        "after": {"id": 1, "price": "12.50", "placed": "2024-05-01T08:30:00.125000"},
        "schema": {
            "database": "shop",
            "table": "orders",
            "columns": [
                {"name": "id", "data_type": {"mysql_type": "int"}, "nullable": False},
                {"name": "price", "data_type": {"mysql_type": "decimal", "length": 10, "decimal": 2}},
                {"name": "placed", "data_type": {"mysql_type": "datetime", "decimal": 3}},
            ],
        },
    }
    event = canonical.from_canonical(json.loads(json.dumps(old)))
    assert isinstance(event, RowChange) and event.schema is not None and event.after is not None
    assert event.schema.column("price").data_type == t("decimal", length=10, decimal=2)
    assert event.schema.column("placed").data_type.known_fsp == 3
    assert type(event.after["placed"]) is dt.datetime  # a known fsp: no digits to remember
    assert event.after["price"] == Decimal("12.50")


# ------------------------------------------------------------------------------ changed values, derived ones


@pytest.mark.parametrize(
    ("data_type", "value", "reason"),
    [
        (t("decimal", length=10, decimal=2), Decimal("1.234"), "DECIMAL rounded to scale 2"),
        (t("datetime", decimal=3), dt.datetime(2024, 1, 1, 0, 0, 0, 123456), "fractional seconds cut to fsp 3"),
        (t("time", decimal=0), dt.timedelta(microseconds=5), "fractional seconds cut to fsp 0"),
    ],
)
def test_a_value_cut_to_a_known_parameter_is_a_change(data_type: DataType, value: object, reason: str) -> None:
    change = change_to_fit(value, data_type)
    assert change is not None and change[0] == reason


@pytest.mark.parametrize(
    ("data_type", "value"),
    [
        (t("decimal", length=10, decimal=2), Decimal("1.230")),  # zeros beyond the scale: the same number
        (t("decimal"), Decimal("1.23456789")),  # unknown: written with its own digits
        (t("datetime", decimal=3), dt.datetime(2024, 1, 1, 0, 0, 0, 123000)),
        (t("datetime"), dt.datetime(2024, 1, 1, 0, 0, 0, 123456)),
        (t("int"), 5),
    ],
)
def test_a_value_that_fits_is_no_change(data_type: DataType, value: object) -> None:
    assert change_to_fit(value, data_type) is None


def test_changes_warn_and_a_strict_run_refuses_them() -> None:
    notice = notice_for("canal-json", "shop.orders", "price")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notice("DECIMAL rounded to scale 2", "1.234 written as 1.23")
    (warning,) = caught
    assert isinstance(warning.message, ValueChangedWarning)
    assert (
        str(warning.message)
        == "canal-json: table shop.orders field price: value changed to fit: DECIMAL rounded to scale 2"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ValueChangedWarning)
        with pytest.raises(ValueChangedWarning) as refused:
            notice("DECIMAL rounded to scale 2", "1.234 written as 1.23")
    assert refused.value.example == "1.234 written as 1.23" and refused.value.field == "price"


NEEDED = frozenset({LogicalType.DECIMAL, LogicalType.DATETIME, LogicalType.BIT})
TABLE = TableSchema(
    database="d",
    table="t",
    columns=[
        Column(name="amount", data_type=t("decimal")),
        Column(name="at", data_type=t("datetime")),
        Column(name="flags", data_type=t("bit")),
        Column(name="known", data_type=t("decimal", length=5, decimal=1)),
    ],
)


def test_derived_parameters_hold_every_value_with_its_own_digits() -> None:
    unknowns = UnknownParameters("avro", UnknownParameterMode.DERIVE, NEEDED)
    before = {"amount": Decimal("-0.0001"), "at": with_fsp(dt.datetime(2024, 1, 1), 3), "flags": 5, "known": None}
    after = {"amount": Decimal("12345678901234.5678"), "at": None, "flags": 300, "known": Decimal("1.5")}
    derived = unknowns.complete(TABLE, [before, after])
    types = {c.name: c.data_type for c in derived.columns}
    assert (types["amount"].length, types["amount"].decimal) == (18, 4)
    assert types["at"].decimal == 3 and types["flags"].length == 9
    assert types["known"] == TABLE.column("known").data_type
    assert unknowns.complete(TABLE, [before, after]) is derived  # the same shape: the same schema object
    assert unknowns.complete(derived, [after]) is derived  # nothing unknown left


def test_an_all_null_column_takes_mysqls_defaults() -> None:
    derived = UnknownParameters("avro", UnknownParameterMode.DERIVE, NEEDED).complete(TABLE, [{"amount": None}])
    assert (derived.column("amount").data_type.length, derived.column("amount").data_type.decimal) == (10, 0)
    assert derived.column("flags").data_type.length == 1


def test_error_mode_refuses_an_unknown_parameter_the_format_needs() -> None:
    unknowns = UnknownParameters("avro", UnknownParameterMode.ERROR, frozenset({LogicalType.DECIMAL}))
    with pytest.raises(UnknownParameterError) as refused:
        unknowns.complete(TABLE, [{"amount": Decimal("1.5")}])
    assert refused.value.field == "amount" and "precision and scale" in str(refused.value)
    only_time = UnknownParameters("avro", UnknownParameterMode.ERROR, frozenset({LogicalType.TIME}))
    assert only_time.complete(TABLE, []) is TABLE  # nothing the format needs is unknown
