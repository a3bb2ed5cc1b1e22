"""The leading words of a SQL statement as the protocols carry it (a DDL event's or a rows-query's text)."""

from __future__ import annotations


def leading_words(sql: str, count: int) -> tuple[str, ...]:
    """Up to ``count`` words the statement starts with, upper case, past blanks and comments (``/* */``, ``-- ``
    and ``#`` to the line's end) before each; a word is letters and underscores. Fewer where the text ends or
    something else comes first (a quote, a number, an unclosed comment)."""
    words: list[str] = []
    text = sql
    while len(words) < count:
        text = _past_comments(text)
        end = 0
        while end < len(text) and (text[end].isalpha() or text[end] == "_"):
            end += 1
        if not end:
            break
        words.append(text[:end].upper())
        text = text[end:]
    return tuple(words)


def first_keyword(sql: str) -> str:
    """The statement's first word (:func:`leading_words`), or ``""``."""
    words = leading_words(sql, 1)
    return words[0] if words else ""


def _past_comments(text: str) -> str:
    text = text.lstrip()
    while text:
        if text.startswith("/*"):
            end = text.find("*/", 2)
            text = "" if end < 0 else text[end + 2 :].lstrip()
        elif text.startswith(("-- ", "#")):
            end = text.find("\n")
            text = "" if end < 0 else text[end + 1 :].lstrip()
        else:
            break
    return text


__all__ = ["first_keyword", "leading_words"]
