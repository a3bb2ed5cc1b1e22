"""Bounds on what a decoder accepts, so hostile or broken input fails fast with bounded memory.

Defaults follow TiCDC where it has a limit (``max-message-bytes`` is 10 MiB) and are generous elsewhere; every
bound is configurable and documented in docs/core.md.
"""

from __future__ import annotations

from typing import Final

import attrs

from cdc_core.errors import HeldRowsLimitError, LimitExceededError

MiB: Final = 1024 * 1024


def _positive(_instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value}")


@attrs.frozen(kw_only=True)
class Limits:
    """``max_message_bytes``: a message value as received; ``max_decompressed_bytes``: after decompression
    (a decompression bomb stops here); ``max_nesting_depth``: JSON arrays/objects inside each other;
    ``max_held_rows`` / ``max_held_bytes``: rows a decoder holds back until their schema arrives."""

    max_message_bytes: int = attrs.field(default=10 * MiB, validator=_positive)
    max_decompressed_bytes: int = attrs.field(default=64 * MiB, validator=_positive)
    max_nesting_depth: int = attrs.field(default=128, validator=_positive)
    max_held_rows: int = attrs.field(default=100_000, validator=_positive)
    max_held_bytes: int = attrs.field(default=256 * MiB, validator=_positive)

    def check_message(self, size: int, *, protocol: str, where: str = "message") -> None:
        if size > self.max_message_bytes:
            raise LimitExceededError(
                f"{protocol}: {where} is {size} bytes, over the limit of {self.max_message_bytes} (max_message_bytes)"
            )

    def check_held(self, rows: int, size: int, *, protocol: str) -> None:
        if rows > self.max_held_rows or size > self.max_held_bytes:
            raise HeldRowsLimitError(
                f"{protocol}: {rows} rows ({size} bytes) are held waiting for their table schema, over the limit of "
                f"{self.max_held_rows} rows / {self.max_held_bytes} bytes; a BOOTSTRAP or DDL message for their "
                "tables never came (start the consumer earlier in the topic or raise max_held_rows/max_held_bytes)"
            )


def json_depth(data: bytes, limit: int) -> int:
    """Deepest nesting of brackets outside strings, stopping as soon as it passes ``limit``; cheap, no parse."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


DEFAULT_LIMITS: Final = Limits()
