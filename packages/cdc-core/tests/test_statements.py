"""The leading words of a statement, which the Canal and Debezium decoders classify DDL and rows-queries by."""

from __future__ import annotations

import pytest

from cdc_core.statements import first_keyword, leading_words


@pytest.mark.parametrize(
    ("sql", "word"),
    [
        ("/* a */ /* b */ drop database x", "DROP"),
        ("-- only a comment", ""),
        ("/* open", ""),
        ("GRANT ALL", "GRANT"),
        ("# replayed\nREPLACE INTO t VALUES (1)", "REPLACE"),
        ("  \n\tset_option = 1", "SET_OPTION"),
        ("`t` is no word", ""),
        ("", ""),
    ],
)
def test_the_first_keyword_skips_blanks_and_comments(sql: str, word: str) -> None:
    assert first_keyword(sql) == word


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("CREATE UNIQUE INDEX idx ON t (a)", ("CREATE", "UNIQUE", "INDEX")),
        ("create /* online */ index idx on t (a)", ("CREATE", "INDEX", "IDX")),
        ("-- by the migration\nDROP INDEX idx ON t", ("DROP", "INDEX", "IDX")),
        ("ALTER TABLE t ADD c int", ("ALTER", "TABLE", "T")),
        ("TRUNCATE t", ("TRUNCATE", "T")),
        ("RENAME TABLE `a` TO `b`", ("RENAME", "TABLE")),  # a quoted name ends the words
        ("/* unclosed CREATE INDEX", ()),
    ],
)
def test_leading_words_stop_at_the_count_or_at_what_is_no_word(sql: str, words: tuple[str, ...]) -> None:
    assert leading_words(sql, 3) == words
