"""Usage errors of every ``cdc`` command are one line with exit code 2; a sink URI may leave protocol to --protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_core.cli import main

pytest.importorskip("cdc_simple")
WATERMARK = '{"version":1,"type":"WATERMARK","commitTs":447984124732375041,"buildTs":1708923816911}'  # the spec's

NO_PROTOCOL = "kafka://h:9092/t?kafka-version=2.4.0"  # TiCDC's Simple docs put protocol in the changefeed config


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("command", ["protocols", "decode", "encode", "convert", "tail", "produce"])
def test_an_unknown_flag_is_one_line(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error([command, "--no-such-flag"], capsys)
    assert line == f"cdc {command}: unrecognized arguments: --no-such-flag (cdc {command} --help)"


def test_bad_values_and_a_missing_command_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _usage_error([], capsys) == "cdc: the following arguments are required: COMMAND (cdc --help)"
    assert _usage_error(["decode", "--on-error", "drop"], capsys).startswith("cdc decode: argument --on-error: 'drop'")
    assert _usage_error(["decode", "--sink-uri", "ftp://h/t"], capsys).startswith(
        "cdc decode: argument --sink-uri: sink URI: scheme 'ftp'"
    )


def test_protocol_completes_a_sink_uri_without_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(WATERMARK + "\n", encoding="utf-8")
    assert main(["decode", "--protocol", "simple", "--sink-uri", NO_PROTOCOL, str(source)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["ts"] == 447984124732375041
    assert err.splitlines()[-1] == "cdc decode: 1 message read; no row changes; 1 other event; 0 dead letters"


def test_a_sink_uri_without_protocol_and_no_protocol_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--sink-uri", NO_PROTOCOL, "-"]) == 2
    assert capsys.readouterr().err == (
        "cdc decode: the sink URI names no protocol: give --protocol (or protocol=... in the URI)\n"
    )
    assert main(["convert", "--sink-uri", NO_PROTOCOL, "--to", "canal-json", "-"]) == 2
    assert "give --from" in capsys.readouterr().err


def test_a_protocol_that_contradicts_the_sink_uri(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "-p", "canal-json", "--sink-uri", "kafka://h:9092/t?protocol=simple", "-"]) == 2
    assert "--protocol canal-json contradicts the sink URI's protocol=simple" in capsys.readouterr().err
