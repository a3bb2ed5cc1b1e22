"""Entry point of the ``cdc`` console script."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Final

from cdc_core import __version__
from cdc_core.cli import codecs, produce, tail
from cdc_core.cli.streams import StopOnError
from cdc_core.codec import IgnoredOptionsWarning
from cdc_core.errors import CdcError

COMMANDS_GROUP: Final = "cdc_core.commands"

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdc", description="Read and write CDC messages as typed events.")
    parser.add_argument("--version", action="version", version=f"cdc {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    codecs.register(subparsers)
    tail.register(subparsers)
    produce.register(subparsers)
    for point in entry_points(group=COMMANDS_GROUP):
        registrar: Registrar = point.load()
        registrar(subparsers)
    return parser


def _note_ignored(command: str, show: Callable[..., None]) -> Callable[..., None]:
    """Ignored options become one ``cdc COMMAND: note: ...`` line on stderr; other warnings show as usual."""

    def showwarning(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        if issubclass(category, IgnoredOptionsWarning):
            print(f"cdc {command}: note: {message}", file=sys.stderr)
        else:
            show(message, category, *args, **kwargs)

    return showwarning


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _note_ignored(args.command, warnings.showwarning)
            code: int = args.handler(args)
    except StopOnError:
        return 1
    except CdcError as exc:
        print(f"cdc {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `cdc decode ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
