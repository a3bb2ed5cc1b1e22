"""The ``cdc`` command line: ``protocols``, ``decode``, ``encode``, ``convert``, ``tail``, and plugged-in commands.

Other packages add subcommands through the ``cdc_core.commands`` entry-point group: each entry point is a callable
``register(subparsers) -> None`` that adds one parser to the given ``argparse`` sub-parsers object and sets
``handler=<callable(args) -> int>`` as its default (``parser.set_defaults(handler=...)``). The handler's return
value is the exit code. cdc-spark registers ``apply`` this way.
"""

from cdc_core.cli.main import main

__all__ = ["main"]
