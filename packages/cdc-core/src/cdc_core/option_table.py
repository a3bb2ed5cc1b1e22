"""Codec option tables written once: a row per option that says which side reads it, and the options several
protocols share, with TiCDC's names and defaults (each protocol gives its own help text, as their meanings differ
in detail: the zone TIMESTAMP text is in, or the zone values are returned in).

A codec's table reads as its options do in TiCDC's docs::

    OPTIONS = (
        time_zone("zone of TIMESTAMP strings"),
        decoding("table.include", str, "", "regular expression a table name must fully match"),
        encoding("flavour", str, "ticdc", "whose Canal-JSON to write", choices=("ticdc", "canal")),
    )
"""

from __future__ import annotations

from typing import Final, Literal

from cdc_core.codec import OptionSpec

Side = Literal["decode", "encode", "both"]
Choices = tuple[str, ...] | None
MESSAGE_BYTES: Final = 10 * 1024 * 1024  # TiCDC's default max-message-bytes


def option(
    name: str, kind: type, default: object, help: str, *, choices: Choices = None, side: Side = "both"
) -> OptionSpec:
    """One option, read by the decoder, the encoder or ``both``."""
    return OptionSpec(
        name=name, kind=kind, default=default, help=help, choices=choices,
        for_decoder=side != "encode", for_encoder=side != "decode",
    )  # fmt: skip


def encoding(name: str, kind: type, default: object, help: str, *, choices: Choices = None) -> OptionSpec:
    """An option of the encoder alone (it shapes the messages written; a decoder is told it only as a warning)."""
    return option(name, kind, default, help, choices=choices, side="encode")


def decoding(name: str, kind: type, default: object, help: str, *, choices: Choices = None) -> OptionSpec:
    """An option of the decoder alone."""
    return option(name, kind, default, help, choices=choices, side="decode")


def time_zone(help: str, *, side: Side = "both") -> OptionSpec:
    """``time-zone`` (TiCDC's ``--tz``), UTC unless given."""
    return option("time-zone", str, "UTC", help, side=side)


def max_message_bytes(help: str, *, side: Side = "both") -> OptionSpec:
    """``max-message-bytes``, TiCDC's 10 MiB unless given."""
    return option("max-message-bytes", int, MESSAGE_BYTES, help, side=side)


def partition_num(help: str) -> OptionSpec:
    """``partition-num``: the partitions of the topic the encoder spreads its messages over."""
    return encoding("partition-num", int, 1, help)


def tidb_extension(help: str) -> OptionSpec:
    """``enable-tidb-extension``: TiDB's fields (commit ts and more) in what the encoder writes."""
    return encoding("enable-tidb-extension", bool, False, help)


__all__ = [
    "MESSAGE_BYTES",
    "Choices",
    "Side",
    "decoding",
    "encoding",
    "max_message_bytes",
    "option",
    "partition_num",
    "tidb_extension",
    "time_zone",
]
