"""Entry point of the ``cdc`` console script."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Final, NoReturn

from cdc_core import __version__
from cdc_core.cli import codecs, produce, tail
from cdc_core.cli.failures import DEBUG_HELP, INTERRUPTED, debug_wanted, report
from cdc_core.codec import IgnoredOptionsWarning

COMMANDS_GROUP: Final = "cdc_core.commands"

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


USAGE_ERROR: Final = 2


class CommandParser(argparse.ArgumentParser):
    """A usage error is one line, ``cdc decode: what is wrong (cdc decode --help)``, with exit code 2.

    Sub-parsers, plugged-in commands' too, are of the parser's own class, so every ``cdc`` command errs this way.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: {' '.join(message.split())} ({self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    description = "Read and write CDC messages as typed events."
    parser: argparse.ArgumentParser = CommandParser(prog="cdc", description=description)
    parser.add_argument("--version", action="version", version=f"cdc {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    codecs.register(subparsers)
    tail.register(subparsers)
    produce.register(subparsers)
    for point in entry_points(group=COMMANDS_GROUP):
        registrar: Registrar = point.load()
        registrar(subparsers)
    for command in subparsers.choices.values():  # `cdc apply ... --debug` as well as `cdc --debug apply ...`
        if "--debug" not in command._option_string_actions:
            command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; an argument the subcommand does not know is reported with the subcommand's own usage."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        subcommands.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _note_ignored(command: str, show: Callable[..., None]) -> Callable[..., None]:
    """Ignored options become one ``cdc COMMAND: note: ...`` line on stderr; other warnings show as usual."""

    def showwarning(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        if issubclass(category, IgnoredOptionsWarning):
            print(f"cdc {command}: note: {message}", file=sys.stderr)
        else:
            show(message, category, *args, **kwargs)

    return showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure ends as one line on stderr and its exit code (see docs/cli.md)."""
    args = parse(build_parser(), argv)
    debug = debug_wanted(args.debug)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _note_ignored(args.command, warnings.showwarning)
            code: int = args.handler(args)
    except BrokenPipeError:  # `cdc decode ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:  # every failure, foreseen or not, ends as one line: the trace only with --debug
        return report(args.command, exc, debug=debug)
    return code


if __name__ == "__main__":
    sys.exit(main())
