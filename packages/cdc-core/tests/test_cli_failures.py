"""How a failed run ends: one line naming what failed and what to do, and the exit code of its kind."""

from __future__ import annotations

import io

import pytest

from cdc_core.cli.failures import debug_wanted, one_line, report
from cdc_core.errors import (
    CdcError,
    ConfigError,
    DataError,
    DeadLetterLimitError,
    DecodeError,
    Fault,
    SchemaError,
    StorageError,
    StorageUnavailableError,
    UnavailableError,
    fault_of,
)


@pytest.mark.parametrize(
    ("error", "fault"),
    [
        (DecodeError("debezium", "bad"), Fault.DATA),
        (SchemaError("incompatible"), Fault.DATA),
        (DeadLetterLimitError("too many"), Fault.DATA),
        (StorageError("claim-check file missing"), Fault.DATA),  # the message names what the store lacks
        (ConfigError("unknown option"), Fault.USAGE),
        (CdcError("a setting"), Fault.USAGE),
        (UnavailableError("broker down"), Fault.INFRASTRUCTURE),
        (StorageUnavailableError("store down"), Fault.INFRASTRUCTURE),  # a storage error, but the store's fault
        (KeyError("x"), Fault.INTERNAL),
    ],
)
def test_every_error_has_the_kind_its_exit_code_says(error: BaseException, fault: Fault) -> None:
    assert fault_of(error) is fault
    assert report("decode", error, debug=False, stream=io.StringIO()) == int(fault)


def test_a_service_fault_says_nothing_was_committed_past_it() -> None:
    line = one_line("tail", UnavailableError("kafka: no broker answered"))
    assert line == (
        "cdc tail: kafka: no broker answered (nothing past the last message applied or dead-lettered was "
        "committed: rerun once it is back)"
    )


def test_an_unforeseen_error_is_an_internal_error_in_one_line() -> None:
    error = RuntimeError("first line\n  second line\tand more")
    assert one_line("apply", error) == (
        "cdc apply: internal error: RuntimeError: first line second line and more (this is a bug: rerun with "
        "--debug (or CDC_DEBUG=1) for the whole trace and report it)"
    )


def test_bad_data_and_settings_say_it_in_their_own_words() -> None:
    assert one_line("decode", DataError("in.jsonl:2: bad")) == "cdc decode: in.jsonl:2: bad"
    assert one_line("apply", ConfigError("pass --keys shop.t=COLUMNS")) == "cdc apply: pass --keys shop.t=COLUMNS"


def test_debug_prints_the_trace_before_the_line() -> None:
    out = io.StringIO()
    try:
        raise ConfigError("wrong")
    except ConfigError as exc:
        assert report("decode", exc, debug=True, stream=out) == 2
    lines = out.getvalue().splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1] == "cdc decode: wrong"


@pytest.mark.parametrize(("flag", "env", "wanted"), [(True, "", True), (False, "1", True), (False, "0", False),
                                                     (False, "", False), (None, "yes", True)])  # fmt: skip
def test_debug_by_flag_or_environment(
    monkeypatch: pytest.MonkeyPatch, flag: bool | None, env: str, wanted: bool
) -> None:
    monkeypatch.setenv("CDC_DEBUG", env)
    assert debug_wanted(flag) is wanted
