"""The error tree: everything a codec or pipeline raises on purpose derives from `CdcError`.

Leaves also inherit the builtin a caller would naturally catch (`ValueError`, `LookupError`, ...), so code
that predates this library keeps working. Decoders may raise nothing outside this tree; adapters wrap
third-party exceptions with ``raise DecodeError(...) from exc``.

Every error says what kind of failure it is (:class:`Fault`, the ``cdc`` command's exit code): bad data
(`DataError`: a message may be skipped or dead-lettered), a wrong setting (`ConfigError`), or a service that is
down (`UnavailableError`: never bad data, so never skipped or dead-lettered; the run fails and a rerun goes on
from the last message that was applied or durably dead-lettered).
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from cdc_core.message import Message


_JSON_KINDS = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string"}
_JSON_KINDS |= {dict: "object", list: "array"}


def json_kind(value: object) -> str:
    """What a decoded JSON value is, in JSON's words, for messages such as "expected a string, got null"."""
    return _JSON_KINDS.get(type(value)) or type(value).__name__


class Fault(IntEnum):
    """What kind of failure ended a run; the value is the ``cdc`` command's exit code (docs/cli.md)."""

    DATA = 1  # a message or event that cannot be read or written, or more dead letters than allowed
    USAGE = 2  # a flag, option, URI, file or setting is wrong: nothing was read
    INFRASTRUCTURE = 3  # a broker, registry, object store or database unreachable or failing after the retries
    INTERNAL = 4  # an error the project did not foresee: a bug


class CdcError(Exception):
    """Root of every error this project raises deliberately (a wrong setting unless a subclass says otherwise)."""

    fault: ClassVar[Fault] = Fault.USAGE


def fault_of(error: BaseException) -> Fault:
    """The kind of failure ``error`` is: its class's :attr:`CdcError.fault`, INTERNAL outside the tree."""
    return error.fault if isinstance(error, CdcError) else Fault.INTERNAL


class ConfigError(CdcError, ValueError):
    """An option, URI or argument is invalid; the message names it and what is accepted."""


class CodecNotFoundError(CdcError, LookupError):
    """No installed package provides the requested protocol."""


class DataError(CdcError, ValueError):
    """A message, event or record is wrong in itself: the data's fault, not the setup's (skipped or dead-lettered
    when the run is told to)."""

    fault = Fault.DATA


class UnavailableError(CdcError, ConnectionError):
    """A service the run depends on (Kafka broker, schema registry, object store, database) could not be reached
    or kept failing after the configured retries. Never bad data: nothing is skipped or dead-lettered for it."""

    fault = Fault.INFRASTRUCTURE


class DeadLetterLimitError(DataError):
    """More messages failed than ``--max-dead-letters`` allows; the run stopped before committing past them."""


class SchemaError(DataError):
    """A table schema is inconsistent, unknown, or changed incompatibly."""


class EncodeError(DataError):
    """An event cannot be represented in the target protocol."""

    def __init__(self, protocol: str, reason: str, *, table: str | None = None, field: str | None = None) -> None:
        self.protocol = protocol
        self.reason = reason
        self.table = table
        self.field = field
        where = "".join(part for part in (f" table {table}" if table else "", f" field {field}" if field else ""))
        super().__init__(f"{protocol}: cannot encode{where}: {reason}")


class StorageError(CdcError, OSError):
    """A stored object a message refers to (a claim-check file) is missing or unreadable as stored: bad data."""

    fault = Fault.DATA


class StorageUnavailableError(UnavailableError, StorageError):
    """Claim-check or other external storage could not be reached, read or written: the store's fault."""


class LimitExceededError(DataError):
    """A configured safety limit (message size, decompressed size, nesting, held rows) was exceeded."""


class DecodeError(DataError):
    """A message could not be decoded.

    Carries the protocol, the message coordinates (topic/partition/offset) and a field path such as
    ``payload.after.col_int`` so that an operator can find the exact record and the exact field.
    """

    def __init__(
        self,
        protocol: str,
        reason: str,
        *,
        field: str | None = None,
        topic: str | None = None,
        partition: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.protocol = protocol
        self.reason = reason
        self.field = field
        self.topic = topic
        self.partition = partition
        self.offset = offset
        super().__init__(self._render())

    @classmethod
    def at(cls, message: Message | None, protocol: str, reason: str, *, field: str | None = None) -> DecodeError:
        """Build an error positioned at ``message``'s coordinates."""
        if message is None:
            return cls(protocol, reason, field=field)
        return cls(
            protocol, reason, field=field, topic=message.topic, partition=message.partition, offset=message.offset
        )

    def located(self, message: Message) -> DecodeError:
        """This error with coordinates filled in from ``message`` where it had none."""
        self.topic = self.topic if self.topic is not None else message.topic
        self.partition = self.partition if self.partition is not None else message.partition
        self.offset = self.offset if self.offset is not None else message.offset
        self.args = (self._render(),)
        return self

    @property
    def coordinates(self) -> str:
        if self.topic is None and self.partition is None and self.offset is None:
            return "message"
        partition = "?" if self.partition is None else self.partition
        offset = "?" if self.offset is None else self.offset
        return f"message {self.topic or '?'}[{partition}]@{offset}"

    def _render(self) -> str:
        field = f" field {self.field}" if self.field else ""
        return f"{self.protocol}: {self.coordinates}{field}: {self.reason}"

    def __str__(self) -> str:
        return self._render()


class ChecksumError(DecodeError):
    """A row's checksum does not match its values (corruption in transit or a codec mismatch)."""


class HeldRowsLimitError(LimitExceededError):
    """A decoder holding rows back until their schema arrives has reached its configured bound."""
