"""Coverage-guided fuzzing of the installed decoders with atheris (``nox -s fuzz``; long runs, not in CI).

Every input is decoded as a message value (and, for protocols that read keys, also as a key); anything but a
``CdcError`` subclass escaping the decoder is a finding: atheris stops and writes the crashing input. The seeds
are the same as the CI contract test's (golden corpus plus the codec's own encoder output), written to a corpus
directory that atheris extends as it finds new coverage.

    nox -s fuzz -- --protocol debezium -- -max_total_time=600
    nox -s fuzz -- --protocol avro --option schema-registry=http://127.0.0.1:8081 -- -runs=100000

Arguments after a second ``--`` go to libFuzzer; its closing ``Done N runs`` line is the number of inputs tried.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from cdc_core.codec import Decoder
    from cdc_core.errors import CdcError
    from cdc_core.message import Message
    from cdc_core.registry import get_codec
    from cdc_testing.seeds import seed_messages


def _arguments(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--protocol", required=True, help="an installed protocol (see `cdc protocols`)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="decoder option")
    parser.add_argument("--corpus", type=Path, help="corpus directory (default: a fresh temporary one)")
    cut = argv.index("--") if "--" in argv else len(argv)
    return parser.parse_args(argv[:cut]), argv[cut + 1 :]


def _options(pairs: list[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--option {pair!r}: expected NAME=VALUE")
        options[name] = value
    return options


def main(argv: list[str]) -> int:
    args, fuzzer_args = _arguments(argv)
    options = _options(args.option)
    # The protocol package is imported here, by the registry: inside the block so that its code is instrumented
    # and libFuzzer's coverage counts the decoder's branches, not only cdc-core's.
    with atheris.instrument_imports():
        codec = get_codec(args.protocol)
        try:
            codec.decoder(options)
        except CdcError as exc:
            raise SystemExit(f"{args.protocol}: {exc}") from exc
    corpus = args.corpus or Path(tempfile.mkdtemp(prefix=f"fuzz-{args.protocol}-"))
    corpus.mkdir(parents=True, exist_ok=True)
    for number, seed in enumerate(seed_messages(codec, args.protocol)):
        assert seed.value is not None
        (corpus / f"seed-{number:04d}").write_bytes(seed.value)
    tried = 0

    def one_input(data: bytes) -> None:
        nonlocal tried
        tried += 1
        decoder: Decoder = codec.decoder(options)  # fresh: no state carried between inputs
        for message in (Message(value=data, topic="fuzz", partition=0, offset=tried), Message(value=b"{}", key=data)):
            with contextlib.suppress(CdcError):
                decoder.decode(message)

    print(f"fuzzing {args.protocol} from {corpus}", file=sys.stderr)
    atheris.Setup([sys.argv[0], str(corpus), *fuzzer_args], one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
