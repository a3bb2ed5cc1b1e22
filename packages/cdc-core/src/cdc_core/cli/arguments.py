"""Argument parsing shared by the subcommands: codec options and the error policy."""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from cdc_core.errors import ConfigError
from cdc_core.sinkuri import SinkUri


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


def add_sink_uri(parser: argparse.ArgumentParser, flag: str = "--sink-uri") -> None:
    parser.add_argument(
        flag,
        type=_sink_uri,
        metavar="URI",
        help="the changefeed's TiCDC sink URI, kafka://HOST:PORT/TOPIC?protocol=...&...: protocol, topic, brokers "
        "and codec options in one (--option adds or overrides; producer-only parameters are ignored with a note)",
    )


def _sink_uri(text: str) -> SinkUri:
    try:
        return SinkUri.parse(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def codec_choice(
    protocol: str | None, uri: SinkUri | None, pairs: list[str] | None, *, flag: str
) -> tuple[str, dict[str, object]]:
    """The protocol and options from ``--protocol``/``--option`` and a sink URI (``--option`` wins)."""
    options: dict[str, object] = dict(uri.parameters) if uri is not None else {}
    options.update(parse_options(pairs))
    if uri is not None and protocol is not None and protocol != uri.protocol:
        raise ConfigError(f"{flag} {protocol} contradicts the sink URI's protocol={uri.protocol}")
    chosen = protocol or (uri.protocol if uri is not None else None)
    if chosen is None:
        raise ConfigError(f"give {flag} or a sink URI")
    return chosen, options


def add_error_policy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--on-error",
        type=ErrorPolicy.parse,
        default=ErrorPolicy("fail"),
        metavar="fail|skip|dead-letter=FILE",
        help="a message that cannot be decoded: stop with exit code 1 (default), skip it with a note on stderr, "
        "or append it with the error to FILE as a JSON line",
    )
