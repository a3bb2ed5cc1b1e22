"""The decoder's fast temporal readers agree with cdc-core's strict parsers on every input."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdc_avro.datum import reader_for
from cdc_core.textual import TextFormError, format_datetime, format_time, parse_text
from cdc_core.types import DataType, MySQLType
from cdc_core.values import ZeroTemporal

ZONE = dt.timezone(dt.timedelta(hours=-3, minutes=-30))
TYPES = [
    DataType(mysql_type=MySQLType.DATE),
    DataType(mysql_type=MySQLType.DATETIME, decimal=0),
    DataType(mysql_type=MySQLType.DATETIME, decimal=4),
    DataType(mysql_type=MySQLType.TIMESTAMP, decimal=6),
    DataType(mysql_type=MySQLType.TIME, decimal=3),
]
ODD = [
    "0000-00-00",
    "2021-00-15",
    "0000-00-00 00:00:00",
    "2021-02-30 00:00:00",
    "2024-03-01T12:30:45",
    "2024-03-01 12:30:45+08:00",
    "20240301",
    "2024-03-01 12:30:45.",
    "2024-03-01 12:30:45.1234567",
    "2024-03-01 12:30:4５",
    "",
    "-838:59:59.000000",
    "00:00:00",
    "1:02:03.5",
    "12:3:04",
    "12:03:04.1234567891",
    "1234:00:00",
    "-00:00:01",
    " 01:02:03 ",
    "01:02",
    "-",
]


def _reference(text: str, data_type: DataType) -> object:
    try:
        return parse_text(text, data_type, ZONE)
    except TextFormError as exc:
        return type(exc)


def _fast(text: str, data_type: DataType) -> object:
    try:
        return reader_for(data_type, "string", ZONE)(text)
    except TextFormError as exc:
        return type(exc)


@pytest.mark.parametrize("data_type", TYPES, ids=lambda t: t.type_text())
@pytest.mark.parametrize("text", ODD)
def test_odd_text_reads_as_cdc_core_reads_it(text: str, data_type: DataType) -> None:
    expected = _reference(text, data_type)
    if isinstance(expected, ZeroTemporal) and "." in expected.text:
        expected = ZeroTemporal(expected.text.partition(".")[0])
    assert _fast(text, data_type) == expected


@settings(max_examples=300, deadline=None)
@given(st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)), st.integers(0, 6))
def test_printed_values_read_back_as_cdc_core_reads_them(moment: dt.datetime, fsp: int) -> None:
    for data_type in TYPES:
        if data_type.mysql_type is MySQLType.TIME:
            text = format_time(moment - dt.datetime(5000, 1, 1), fsp)[-17:]  # beyond 838 h: core decides
        else:
            text = format_datetime(moment, fsp)[: 10 if data_type.mysql_type is MySQLType.DATE else None]
        assert _fast(text, data_type) == _reference(text, data_type)


def _written(value: object, data_type: DataType) -> object:
    from cdc_avro.datum import writer_for
    from cdc_avro.tidbtypes import BigintUnsignedMode, DecimalMode

    try:
        return writer_for(data_type, "string", DecimalMode.PRECISE, BigintUnsignedMode.LONG, ZONE)(value)
    except TextFormError as exc:
        return type(exc)


def _formatted(value: object, data_type: DataType) -> object:
    from cdc_core.textual import format_text

    try:
        return format_text(value, data_type, ZONE)
    except TextFormError as exc:
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(
    st.datetimes(dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)),
    st.integers(0, 6),
    st.sampled_from([None, dt.UTC, ZONE, dt.timezone(dt.timedelta(hours=13))]),
)
def test_fast_writers_print_as_cdc_core_prints(moment: dt.datetime, fsp: int, zone: dt.tzinfo | None) -> None:
    value = moment.replace(tzinfo=zone)
    for mysql_type in (MySQLType.DATE, MySQLType.DATETIME, MySQLType.TIMESTAMP):
        data_type = DataType(mysql_type=mysql_type, decimal=fsp if mysql_type is not MySQLType.DATE else None)
        for candidate in (value, value.date(), ZeroTemporal("0000-00-00 00:00:00"), "text"):
            assert _written(candidate, data_type) == _formatted(candidate, data_type)
