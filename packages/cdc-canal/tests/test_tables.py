"""Completeness of the wire tables and of the protocol page."""

from __future__ import annotations

from pathlib import Path

from cdc_canal import OPTIONS
from cdc_canal.names import SQL_CODE_FALLBACK, SQL_TYPE_CODES, UNSIGNED_PROMOTION, sql_type_code
from cdc_core.types import MySQLType

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocols" / "canal-json.md"


def test_every_mysql_type_has_a_sql_type_code() -> None:
    assert set(SQL_TYPE_CODES) == set(MySQLType)


def test_fallback_codes_invert_to_types_with_that_code() -> None:
    for code, mysql_type in SQL_CODE_FALLBACK.items():
        assert SQL_TYPE_CODES[mysql_type] == code
    assert set(SQL_CODE_FALLBACK) == set(SQL_TYPE_CODES.values())


def test_promotion_only_for_unsigned_values_above_the_signed_maximum() -> None:
    for mysql_type, (limit, code) in UNSIGNED_PROMOTION.items():
        assert sql_type_code(mysql_type, True, limit) == SQL_TYPE_CODES[mysql_type]
        assert sql_type_code(mysql_type, True, limit + 1) == code
        assert sql_type_code(mysql_type, False, limit + 1) == SQL_TYPE_CODES[mysql_type]
        assert sql_type_code(mysql_type, True, None) == SQL_TYPE_CODES[mysql_type]
    assert sql_type_code(MySQLType.MEDIUMINT, True, 16777215) == 4


def test_the_protocol_page_documents_every_option() -> None:
    text = DOC.read_text(encoding="utf-8")
    for option in OPTIONS:
        assert f"| `{option.name}` |" in text, option.name


def test_runtime_dependencies_are_core_and_orjson_only() -> None:
    from importlib.metadata import requires, version

    required = requires("cdc-canal") or []
    core = f"cdc-core=={version('cdc-canal')}"  # lockstep: the same version as this package
    assert sorted(r for r in required if "extra ==" not in r) == [core, "orjson>=3.9"]
    # the optional extras only switch on cdc-core's own (compression codecs, fsspec storage)
    assert all(r.startswith("cdc-core[") for r in required if "extra ==" in r)


def test_every_logical_type_has_a_parser_and_a_writer() -> None:
    from cdc_canal.inbound import PARSERS
    from cdc_canal.outbound import FORMATTERS
    from cdc_core.types import LogicalType

    assert set(PARSERS) == set(LogicalType)
    assert set(FORMATTERS) == set(LogicalType)


def test_vector_values_both_ways() -> None:
    from cdc_canal.inbound import make_parser
    from cdc_canal.outbound import make_formatter
    from cdc_core.textual import UTC
    from cdc_core.types import DataType

    vector = DataType(mysql_type=MySQLType.VECTOR)
    text = make_formatter(vector, UTC, member_names=False)([1.0, 2.5, -0.125])
    assert text == "[1,2.5,-0.125]"
    assert make_parser(vector, UTC)(text) == [1.0, 2.5, -0.125]
