"""Shared wire helpers: TiCDC's name sanitizing, ENUM/SET member lists, JSON kinds in error messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdc_core.errors import json_kind
from cdc_core.naming import sanitize_name
from cdc_core.textual import join_members, split_members


@pytest.mark.parametrize(
    ("raw", "sanitized"),
    [
        # TiCDC's own cases (tiflow pkg/sink/codec/avro/avro_test.go)
        ("1ColumnNameStartWithNumber", "_1ColumnNameStartWithNumber"),
        ("A.B", "A_B"),
        ("columnNameWith中文", "columnNameWith__"),
        ("N-amespace", "N_amespace"),
        ("-a", "_a"),
        ("plain_Name9", "plain_Name9"),
        ("", ""),
    ],
)
def test_sanitize_name(raw: str, sanitized: str) -> None:
    assert sanitize_name(raw) == sanitized


@given(st.lists(st.text().filter(lambda m: not m.endswith("\\")), min_size=1))
def test_member_lists_round_trip(members: list[str]) -> None:
    # A member ending in a backslash is ambiguous in TiCDC's escaping (its comma reads as escaped).
    if members == [""]:
        members = ["", ""]  # one empty member alone is indistinguishable from no members
    assert split_members(join_members(members)) == tuple(members)


def test_member_list_escaping() -> None:
    assert join_members(["a,b", "c"]) == "a\\,b,c"
    assert split_members("a\\,b,c,") == ("a,b", "c", "")
    assert split_members("") == ()


def test_json_kind_names_values_in_json_words() -> None:
    kinds = [json_kind(v) for v in (None, True, 1, 1.5, "s", {}, [], b"x")]
    assert kinds == ["null", "boolean", "integer", "number", "string", "object", "array", "bytes"]
