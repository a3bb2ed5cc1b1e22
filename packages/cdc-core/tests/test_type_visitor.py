"""The exhaustive switch over LogicalType: every member has a visitor method and a table entry, and adding a
member fails the type check (mypy --strict) in core and in every adapter until it is handled."""

from __future__ import annotations

import inspect

import pytest

from cdc_core.types import DataType, LogicalType, LogicalTypeVisitor, MySQLType, by_logical_type

MEMBERS = [member.name.lower() for member in LogicalType]


def test_the_visitor_the_table_and_the_enum_agree() -> None:
    abstract = set(LogicalTypeVisitor.__abstractmethods__)
    assert abstract == {f"visit_{m}" for m in MEMBERS}
    assert list(inspect.signature(by_logical_type).parameters) == MEMBERS  # in the enum's order
    table = by_logical_type(**{m: m for m in MEMBERS})
    assert dict(table.items()) == {m: m.name.lower() for m in LogicalType}


class _Names(LogicalTypeVisitor[str]):
    """Answers with the name of the method called."""


for _member in MEMBERS:
    setattr(_Names, f"visit_{_member}", lambda self, data_type, _m=_member: _m)
_Names.__abstractmethods__ = frozenset()


@pytest.mark.parametrize("mysql_type", list(MySQLType))
def test_visit_calls_the_method_of_the_types_logical_type(mysql_type: MySQLType) -> None:
    data_type = DataType(mysql_type=mysql_type)
    assert _Names().visit(data_type) == data_type.logical.name.lower()


@pytest.mark.parametrize("missing", MEMBERS)
def test_a_visitor_lacking_one_method_cannot_be_made(missing: str) -> None:
    methods = {f"visit_{m}": (lambda self, data_type, _m=m: _m) for m in MEMBERS if m != missing}
    partial = type("Partial", (LogicalTypeVisitor,), methods)
    with pytest.raises(TypeError, match=f"visit_{missing}"):
        partial()
