"""docs/cli.md in step with ``--help``: the synopsis of every command names exactly the flags its parser has, and
the exit codes it documents are the ones the error tree gives."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from cdc_core.cli.main import build_parser
from cdc_core.errors import Fault

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _synopsis() -> dict[str, set[str]]:
    """Each command of the synopsis block and the long flags its lines name."""
    text = DOCS.read_text(encoding="utf-8")
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    flags: dict[str, set[str]] = {}
    command = ""
    for line in block.splitlines():
        if line.startswith("cdc "):
            command = line.split()[1]
            flags[command] = set()
        flags[command] |= set(FLAG.findall(line))
    return flags


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _long_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings if s.startswith("--")} - {"--help"}


def test_every_command_is_in_the_synopsis() -> None:
    assert set(_synopsis()) == set(_commands())


@pytest.mark.parametrize("command", sorted(_commands()))
def test_the_synopsis_names_exactly_the_flags_of_the_command(command: str) -> None:
    documented = _synopsis()[command]
    actual = _long_flags(_commands()[command])
    assert documented - actual == set(), f"documented for cdc {command} but not a flag: {documented - actual}"
    assert actual - documented == set(), f"flags of cdc {command} missing in docs/cli.md: {actual - documented}"


def test_the_documented_exit_codes_are_the_faults() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("## Exit codes and failures", 1)[1].split("\n\n", 2)[1]
    codes = {int(m) for m in re.findall(r"^\| `(\d+)` \|", table, re.MULTILINE)}
    assert codes == {0, 130} | {int(fault) for fault in Fault}
