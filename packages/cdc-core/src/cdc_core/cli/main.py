"""Entry point of the ``cdc`` console script."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Final

from cdc_core import __version__
from cdc_core.cli import codecs, tail
from cdc_core.cli.streams import StopOnError
from cdc_core.errors import CdcError

COMMANDS_GROUP: Final = "cdc_core.commands"

Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdc", description="Read and write CDC messages as typed events.")
    parser.add_argument("--version", action="version", version=f"cdc {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    codecs.register(subparsers)
    tail.register(subparsers)
    for point in entry_points(group=COMMANDS_GROUP):
        registrar: Registrar = point.load()
        registrar(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
