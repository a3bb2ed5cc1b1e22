"""``cdc protocols``, ``cdc decode``, ``cdc encode`` and ``cdc convert``."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable, Iterable
from contextlib import ExitStack, nullcontext

import attrs

from cdc_core import canonical
from cdc_core.cli.arguments import add_codec_options, add_error_policy, add_sink_uri, codec_choice
from cdc_core.cli.changes import add_strict, reported_changes
from cdc_core.cli.failed_messages import FailedMessages
from cdc_core.cli.held import HeldMessages
from cdc_core.cli.streams import Handled, open_input, run_lines
from cdc_core.cli.summary import RunSummary
from cdc_core.codec import Codec
from cdc_core.events import Event
from cdc_core.messagelines import format_line, parse_line
from cdc_core.registry import PROVIDERS, broken_codecs, get_codec, installed_codecs


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    protocols = subparsers.add_parser("protocols", help="list installed protocols and their options")
    protocols.set_defaults(handler=list_protocols)

    decode = subparsers.add_parser("decode", help="messages (message lines) in, canonical JSON events out")
    decode.add_argument("--protocol", "-p", help="the protocol (or give --sink-uri)")
    add_sink_uri(decode)
    add_codec_options(decode)
    add_error_policy(decode)
    decode.add_argument("--no-schema", action="store_true", help="leave table schemas out of row events")
    decode.add_argument(
        "--document", action="store_true", help="the whole input is one message value (e.g. a pretty-printed file)"
    )
    decode.add_argument("input", nargs="?", default="-", help="file of message lines, or - for stdin (default)")
    decode.set_defaults(handler=decode_command)

    encode = subparsers.add_parser("encode", help="canonical JSON events in, message lines out")
    encode.add_argument("--protocol", "-p", help="the protocol (or give --sink-uri)")
    add_sink_uri(encode)
    add_codec_options(encode)
    add_error_policy(encode, "an event that cannot be read or encoded")
    add_strict(encode)
    encode.add_argument("input", nargs="?", default="-", help="file of canonical events, or - for stdin (default)")
    encode.set_defaults(handler=encode_command)

    convert = subparsers.add_parser("convert", help="messages of one protocol in, the same events in another out")
    convert.add_argument(
        "--from", dest="source_protocol", metavar="PROTOCOL", help="the protocol of the input (or give --sink-uri)"
    )
    convert.add_argument(
        "--to", dest="target_protocol", metavar="PROTOCOL", help="the protocol to write (or give --to-sink-uri)"
    )
    add_sink_uri(convert)
    add_sink_uri(convert, "--to-sink-uri")
    add_codec_options(convert, "--from-option", side=" of the decoder (--from)")
    add_codec_options(convert, "--to-option", side=" of the encoder (--to)")
    add_error_policy(convert, "a message that cannot be decoded, or an event that cannot be encoded")
    add_strict(convert)
    convert.add_argument("input", nargs="?", default="-", help="file of message lines, or - for stdin (default)")
    convert.set_defaults(handler=convert_command)


def _describe(codec: Codec) -> Iterable[str]:
    yield f"{codec.name}  ({codec.package}) {codec.description}"
    for spec in codec.options:
        sides = [side for side, on in (("decode", spec.for_decoder), ("encode", spec.for_encoder)) if on]
        choices = f" one of {', '.join(spec.choices)};" if spec.choices else ""
        default = "" if spec.default is None else f" default {spec.default!r};"
        yield f"    {spec.name} ({spec.kind.__name__};{choices}{default} {'/'.join(sides)}): {spec.help}"


def list_protocols(_args: argparse.Namespace) -> int:
    codecs = installed_codecs()
    for name in sorted(codecs):
        for line in _describe(codecs[name]):
            print(line)
    broken = broken_codecs()
    missing = sorted(set(PROVIDERS) - set(codecs) - set(broken))
    if not codecs:
        print("no protocols installed")
    for name, reason in sorted(broken.items()):
        print(f"broken: {name}: {reason}")
    for name in missing:
        print(f"not installed: {name} (pip install {PROVIDERS[name]})")
    return 0


def _run(
    args: argparse.Namespace,
    handle: Callable[[bytes, int], Handled],
    *,
    noun: str = "message",
    held: HeldMessages | None = None,
) -> int:
    """The line loop of a codec command, ending with its summary line on stderr; ``held``: the messages the
    decoder still holds at the end of the input are dead letters."""
    summary = RunSummary(noun=noun)
    failures = FailedMessages(args.on_error, args.max_dead_letters)
    with ExitStack() as stack:
        stack.enter_context(failures)  # a dead-letter file that cannot be written fails here, before any input
        stream, source = open_input(args.input, stack)
        if getattr(args, "document", False):
            stream = io.BytesIO(b" ".join(stream.read().split()))
        # encode and convert: values changed to fit are noted (before the summary line), or refused with --strict
        changes = reported_changes(args.command, strict=args.strict) if hasattr(args, "strict") else nullcontext()
        try:
            with changes:
                run_lines(stream, source, handle, failures=failures, summary=summary, out=sys.stdout)
                if held is not None:
                    held.drain(failures, source=source)
            sys.stdout.flush()
        finally:  # a failed run says what it did before its error line
            print(summary.line(args.command, dead_letters=failures.count, where=failures.where), file=sys.stderr)
    return 0


def decode_command(args: argparse.Namespace) -> int:
    protocol, options = codec_choice(args.protocol, args.sink_uri, args.option, flag="--protocol")
    decoder = get_codec(protocol).decoder(options)
    held = HeldMessages(decoder)
    include_schema = not args.no_schema

    def handle(line: bytes, number: int) -> Handled:
        message = parse_line(line, line=number)
        events = decoder.decode(message)
        held.note(message, events, number=number, line=line)
        return [canonical.dumps(event, include_schema=include_schema) for event in events], events

    return _run(args, handle, held=held)


def encode_command(args: argparse.Namespace) -> int:
    protocol, options = codec_choice(args.protocol, args.sink_uri, args.option, flag="--protocol")
    encoder = get_codec(protocol).encoder(options)
    topic = args.sink_uri.topic if args.sink_uri is not None else None

    def handle(line: bytes, _number: int) -> Handled:
        event = canonical.loads(line)
        messages = encoder.encode(event)
        if topic is not None:  # the sink URI's topic, where the encoder names none itself (Avro's topic template)
            messages = [m if m.topic is not None else attrs.evolve(m, topic=topic) for m in messages]
        return [format_line(message) for message in messages], [event]

    return _run(args, handle, noun="event")


def convert_command(args: argparse.Namespace) -> int:
    source, from_options = codec_choice(args.source_protocol, args.sink_uri, args.from_option, flag="--from")
    target, to_options = codec_choice(args.target_protocol, args.to_sink_uri, args.to_option, flag="--to")
    decoder = get_codec(source).decoder(from_options)
    encoder = get_codec(target).encoder(to_options)
    held = HeldMessages(decoder)

    def handle(line: bytes, number: int) -> Handled:
        out: list[str] = []
        message = parse_line(line, line=number)
        events: list[Event] = decoder.decode(message)
        held.note(message, events, number=number, line=line)
        for event in events:
            out.extend(format_line(message) for message in encoder.encode(event))
        return out, events

    return _run(args, handle, held=held)
