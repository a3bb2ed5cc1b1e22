"""Argument parsing shared by the subcommands: codec options, the error policy and its limit."""

from __future__ import annotations

import argparse

from cdc_core.cli.failed_messages import ErrorPolicy
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


def add_codec_options(parser: argparse.ArgumentParser, flag: str = "--option", *, side: str = "") -> None:
    flags = [flag, "-o"] if flag == "--option" else [flag]
    parser.add_argument(
        *flags,
        action="append",
        dest=flag.removeprefix("--").replace("-", "_"),
        metavar="NAME=VALUE",
        help=f"a codec option{side}, spelled as in TiCDC's sink URI (repeatable; see `cdc protocols`)",
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
    """The parsed URI; one without ``protocol`` gets an empty one, for ``--protocol`` to give (`codec_choice`)."""
    try:
        # TiCDC's Simple docs set protocol in the changefeed's config, not the URI: --protocol may give it
        return SinkUri.parse(text, protocol_required=False)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def codec_choice(
    protocol: str | None, uri: SinkUri | None, pairs: list[str] | None, *, flag: str
) -> tuple[str, dict[str, object]]:
    """The protocol and options from ``--protocol``/``--option`` and a sink URI (``--option`` wins)."""
    options: dict[str, object] = dict(uri.parameters) if uri is not None else {}
    options.update(parse_options(pairs))
    if uri is not None:
        return uri.protocol_given(protocol, flag=flag), options
    if protocol is None:
        raise ConfigError(f"give {flag} or a sink URI")
    return protocol, options


def broker_config(args: argparse.Namespace) -> dict[str, object]:
    """The librdkafka settings of ``--sink-uri`` (brokers, SASL/TLS) with ``--bootstrap-servers`` on top."""
    config: dict[str, object] = args.sink_uri.consumer_config() if args.sink_uri is not None else {}
    if args.bootstrap_servers:
        config["bootstrap.servers"] = args.bootstrap_servers
    if "bootstrap.servers" not in config:
        raise ConfigError("give --bootstrap-servers or --sink-uri")
    return config


def count_argument(text: str) -> int:
    """An argparse type: a whole number of 0 or more."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of 0 or more")
    return int(text)


def add_error_policy(parser: argparse.ArgumentParser, what: str = "a message that cannot be decoded") -> None:
    parser.add_argument(
        "--on-error",
        type=ErrorPolicy.parse,
        default=ErrorPolicy("fail"),
        metavar="fail|skip|dead-letter=FILE",
        help=f"{what}: stop with exit code 1 (default), skip it with a note on stderr, or append it with the error "
        "to FILE as a JSON line, synced to disk before the run goes on (a registry or broker that is down is never "
        "skipped: the run ends with exit code 3)",
    )
    parser.add_argument(
        "--max-dead-letters",
        type=count_argument,
        metavar="N",
        help="with skip or dead-letter=FILE: stop with exit code 1 at the first failed message beyond N "
        "(0: any; default: no limit); that message and what follows it are not committed",
    )
