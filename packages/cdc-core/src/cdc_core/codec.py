"""The codec contract: options, decoders, encoders, and the object an adapter registers.

A decoder is stateful (Simple caches schemas, holds rows back, tracks watermarks) and turns one message
into zero or more events. An encoder turns one event into zero or more messages, each with the partition
TiCDC would choose. Option names are spelled exactly as in TiCDC's sink URI.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from cdc_core.errors import ConfigError
from cdc_core.events import Event
from cdc_core.message import Message
from cdc_core.schema import TableSchema
from cdc_core.secrets import redact_options
from cdc_core.sinkparams import DECODER_ALIASES, TICDC_PARAMETERS

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _parse_value(kind: type, text: str) -> Any:
    if kind is bool:
        return parse_bool(text)
    if kind is int:
        return int(text.strip())
    if kind is float:
        return float(text.strip())
    return text


@attrs.frozen(kw_only=True)
class OptionSpec:
    """One codec option. ``kind`` is bool, int, float or str; ``choices`` restricts str options."""

    name: str
    kind: type
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    for_decoder: bool = True
    for_encoder: bool = True

    def parse(self, raw: object) -> Any:
        if raw is None:
            return self.default
        if isinstance(raw, str):
            try:
                value = _parse_value(self.kind, raw)
            except ValueError as exc:
                raise ConfigError(f"option {self.name}: {exc}") from exc
        elif self.kind is float and isinstance(raw, int) and not isinstance(raw, bool):
            value = float(raw)
        elif isinstance(raw, self.kind) and not (self.kind is int and isinstance(raw, bool)):
            value = raw
        else:
            raise ConfigError(f"option {self.name}: expected {self.kind.__name__}, got {type(raw).__name__}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"option {self.name}: {value!r} is not one of {', '.join(self.choices)}")
        return value


class Options(Mapping[str, Any]):
    """Parsed, typed options of one codec: every declared option present, with its default if not given."""

    def __init__(self, specs: Sequence[OptionSpec], raw: Mapping[str, object] | None = None, *, protocol: str) -> None:
        known = {spec.name: spec for spec in specs}
        given = dict(raw or {})
        unknown = sorted(map(str, set(given) - set(known)))
        if unknown:
            raise ConfigError(
                f"{protocol}: unknown option(s) {', '.join(unknown)}; valid options: {', '.join(sorted(known))} "
                "(and TiCDC's sink-URI parameters)"
            )
        self._values = {name: spec.parse(given.get(name)) for name, spec in known.items()}
        self.protocol = protocol

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({self.protocol}, {redact_options(self._values)!r})"  # a registry URL may hold a password


@runtime_checkable
class Decoder(Protocol):
    def decode(self, message: Message) -> list[Event]:
        """Events carried by ``message``, in order. Raises only `cdc_core.errors.CdcError` subclasses."""
        ...


@runtime_checkable
class SchemaHoldingDecoder(Decoder, Protocol):
    """A decoder that holds rows back until their table's schema arrives (TiCDC Simple).

    A host that decodes a stream in pieces (a Spark task per micro-batch) cannot keep the decoder between pieces:
    it primes each new decoder with the schemas it learned before, and at the end of a piece reports what is
    still held, so that no row waits in a decoder that is about to be dropped.
    """

    def prime(self, schema: TableSchema) -> None:
        """Know ``schema`` (with its ``version``) as if a message had brought it."""
        ...

    def unreleased(self) -> list[tuple[Message, str]]:
        """The messages still held, in arrival order, each with the reason."""
        ...

    def awaited(self) -> list[Awaited]:
        """The messages still held, in arrival order, each with the schema it waits for. A host that decodes
        partitions apart may have learned that schema from another partition."""
        ...


@attrs.frozen
class Awaited:
    """A message held for its schema: the schema's table and version, and the row's commit ts (for the host's
    clock, which an undecoded row would not move)."""

    message: Message
    database: str
    table: str
    version: int
    commit_ts: int | None


@runtime_checkable
class Encoder(Protocol):
    def encode(self, event: Event) -> list[Message]:
        """Messages for ``event`` (with partitions set), in send order."""
        ...


@attrs.frozen(kw_only=True)
class Codec:
    """What an adapter registers under the ``cdc_core.codecs`` entry-point group."""

    name: str
    description: str
    options: tuple[OptionSpec, ...]
    make_decoder: Callable[[Options], Decoder]
    make_encoder: Callable[[Options], Encoder]
    package: str
    keyed_deletes: bool = False
    """A tombstone (null value) is a delete that only its key identifies (TiCDC Avro)."""
    watermarks: bool = False
    """Its messages may carry TiCDC's watermarks (a stream can be gated at them: ``cdc apply --option watermark``)."""

    def decoder(self, options: Mapping[str, object] | None = None) -> Decoder:
        """A decoder. ``options`` may hold the whole sink-URI parameter set of the changefeed: options of the
        encoder side and TiCDC parameters this codec has no use for are ignored (`IgnoredOptionsWarning`)."""
        return self.make_decoder(self._options(options, decoder=True))

    def encoder(self, options: Mapping[str, object] | None = None) -> Encoder:
        """An encoder; decoder-side options and TiCDC's Kafka client parameters are ignored with a warning."""
        return self.make_encoder(self._options(options, decoder=False))

    def decoder_options(self, options: Mapping[str, object] | None = None) -> Options:
        """The options a decoder made with ``options`` reads, parsed as it parses them (for a host that reads the
        protocol's messages itself, as the Spark JVM decode does, and must read them as the decoder would)."""
        return self._options(options, decoder=True)

    def _options(self, options: Mapping[str, object] | None, *, decoder: bool) -> Options:
        specs = [s for s in self.options if (s.for_decoder if decoder else s.for_encoder)]
        return Options(specs, self.used_options(options, decoder=decoder, stacklevel=4), protocol=self.name)

    def used_options(
        self, options: Mapping[str, object] | None, *, decoder: bool = True, stacklevel: int = 2
    ) -> dict[str, object]:
        """``options`` less those this side ignores (warned about once, as `IgnoredOptionsWarning`), TiCDC's
        names of options it knows under its own turned into those. Unknown names stay, for `Options` to refuse."""
        names = {s.name for s in self.options if (s.for_decoder if decoder else s.for_encoder)}
        given = dict(options or {})
        if decoder:
            for (protocol, ticdc_name), own in DECODER_ALIASES.items():
                if protocol == self.name and ticdc_name in given and own in names:
                    value = given.pop(ticdc_name)
                    given.setdefault(own, value)
        other_side = {s.name for s in self.options} - names
        ignored = sorted(n for n in given if n not in names and (n in other_side or n in TICDC_PARAMETERS))
        if ignored:
            side = "decoding" if decoder else "encoding"
            warnings.warn(
                IgnoredOptionsWarning(
                    f"{self.name} {side} ignores {', '.join(ignored)} (they shape only the other side's "
                    "messages or TiCDC's Kafka client)"
                ),
                stacklevel=stacklevel,
            )
        return {k: v for k, v in given.items() if k not in ignored}


class IgnoredOptionsWarning(UserWarning):
    """Options a codec accepts but has no use for on this side: TiCDC sink-URI parameters that shape only the
    producer's output or its Kafka client, and options of the other side (a decoder given encoder options)."""


def decode_all(decoder: Decoder, messages: Iterable[Message]) -> list[Event]:
    """Every event of ``messages`` through one decoder, in order."""
    out: list[Event] = []
    for message in messages:
        out.extend(decoder.decode(message))
    return out
