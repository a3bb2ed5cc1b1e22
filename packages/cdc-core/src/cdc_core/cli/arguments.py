"""Argument parsing shared by the subcommands: codec options and the error policy."""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from cdc_core.errors import ConfigError


def parse_options(pairs: list[str] | None) -> dict[str, str]:
    """``["k=v", ...]`` → ``{"k": "v"}``; option names keep TiCDC's spelling."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--option {pair!r}: expected NAME=VALUE")
        options[name.strip()] = value
    return options


@attrs.frozen
class ErrorPolicy:
    """What to do with a message that fails: stop (``fail``), go on (``skip``), or record it (``dead-letter``)."""

    mode: str
    dead_letter: Path | None = None

    @classmethod
    def parse(cls, text: str) -> ErrorPolicy:
        if text in ("fail", "skip"):
            return cls(text)
        name, sep, path = text.partition("=")
        if name == "dead-letter" and sep and path:
            return cls("dead-letter", Path(path))
        raise argparse.ArgumentTypeError(f"{text!r}: expected fail, skip or dead-letter=FILE")


def add_codec_options(parser: argparse.ArgumentParser, flag: str = "--option") -> None:
    parser.add_argument(
        flag,
        action="append",
        metavar="NAME=VALUE",
        help="a codec option, spelled as in TiCDC's sink URI (repeatable; see `cdc protocols`)",
    )


def add_error_policy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--on-error",
        type=ErrorPolicy.parse,
        default=ErrorPolicy("fail"),
        metavar="fail|skip|dead-letter=FILE",
        help="a message that cannot be decoded: stop with exit code 1 (default), skip it with a note on stderr, "
        "or append it with the error to FILE as a JSON line",
    )
