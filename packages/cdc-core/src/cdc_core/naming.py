"""Names as TiCDC makes them safe for Avro and Kafka Connect schemas (its ``common.SanitizeName``)."""

from __future__ import annotations


def _valid(char: str, *, first: bool) -> bool:
    return char == "_" or "a" <= char <= "z" or "A" <= char <= "Z" or (not first and "0" <= char <= "9")


def sanitize_name(name: str) -> str:
    """Avro-safe name: a leading digit gets a ``_`` prefix, every other disallowed character becomes ``_``.

    Go iterates runes, so one non-ASCII character becomes one underscore (``中文`` -> ``__``); a name
    starting with any other invalid character has it replaced (``-a`` -> ``_a``).
    """
    out: list[str] = []
    for i, char in enumerate(name):
        if _valid(char, first=i == 0):
            out.append(char)
        elif i == 0 and "0" <= char <= "9":
            out.append("_" + char)
        else:
            out.append("_")
    return "".join(out)
