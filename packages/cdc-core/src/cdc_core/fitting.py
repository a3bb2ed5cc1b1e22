"""Values that do not fit their target: reporting a change, and parameters a target needs but the source lacked.

Two things can stand between a decoded value and the message an encoder writes:

* a **known** parameter smaller than the value (a DECIMAL(10,2) column given ``1.234``, a DATETIME(3) given
  microseconds): the encoder writes what the target holds, as TiDB would, and says so with a
  `ValueChangedWarning` (once per column in ``cdc encode`` and ``cdc convert``; ``--strict`` makes it an error,
  since the warning is an `EncodeError` too);
* an **unknown** parameter the target format cannot do without (the scale of an Avro decimal, Debezium's choice
  between milliseconds and microseconds): `UnknownParameters` derives it from the event's own values, so no
  value changes, or refuses with `UnknownParameterError` under ``unknown-parameters=error``.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Iterable, Mapping
from decimal import Context, Decimal
from enum import StrEnum
from typing import Final

import attrs

from cdc_core.codec import OptionSpec
from cdc_core.errors import EncodeError
from cdc_core.schema import TableSchema
from cdc_core.types import DataType, LogicalType
from cdc_core.values import RowImage, Value, own_fsp

ChangeNotice = Callable[[str, str], None]
"""Told ``(reason, example)`` when an encoder changed a value to fit its target."""

_WIDE: Final = Context(prec=100)  # DECIMAL(65,30) quantized without overflowing the default 28 digits


class ValueChangedWarning(EncodeError, UserWarning):
    """An encoder changed a value to fit its target (rounded, cut, replaced); the data is not what was read.

    ``reason`` is the same for every value of a column changed the same way, and so is the warning's text: Python
    shows it once per column, and so does the ``cdc`` command. ``example`` shows the value at hand. It is an
    `EncodeError` as well, so a run that turns warnings of this category into errors (``--strict``) fails the
    message like any other that cannot be encoded.
    """

    def __init__(
        self, protocol: str, reason: str, *, table: str | None = None, field: str | None = None, example: str = ""
    ) -> None:
        super().__init__(protocol, reason, table=table, field=field)
        self.example = example
        where = "".join(part for part in (f" table {table}" if table else "", f" field {field}" if field else ""))
        self.args = (f"{protocol}:{where}: value changed to fit: {reason}",)

    @property
    def column_key(self) -> tuple[str, str | None, str | None, str]:
        """What "once per column" means: the protocol, table, column and kind of change."""
        return self.protocol, self.table, self.field, self.reason


Change = tuple[str, str] | None
"""``(reason, example)`` of a value changed to fit, or None when it was written as it is."""


def change_to_fit(value: Value, data_type: DataType) -> Change:
    """Whether a text encoder rounds or cuts ``value`` to the known scale or fsp of ``data_type`` (as TiDB does):
    ``(reason, example)``, or None when the value's digits fit (or the parameter is unknown, so it is written with
    its own)."""
    logical = data_type.logical
    if logical is LogicalType.DECIMAL:
        return _decimal_change(value, data_type.decimal)
    if logical in _FSP_TYPES:
        return _fraction_change(value, data_type.decimal)
    return None


_FSP_TYPES: Final = frozenset({LogicalType.DATETIME, LogicalType.TIMESTAMP, LogicalType.TIME})
FITTED: Final = frozenset({LogicalType.DECIMAL, *_FSP_TYPES})
"""The types whose values `change_to_fit` may find changed (an encoder skips the check for the others)."""


def _decimal_change(value: Value, scale: int | None) -> Change:
    if scale is None or not isinstance(value, Decimal) or not value.is_finite():
        return None
    exponent = value.as_tuple().exponent
    if not isinstance(exponent, int) or -exponent <= scale:
        return None
    rounded = value.quantize(Decimal(1).scaleb(-scale), context=_WIDE)
    if rounded == value:
        return None  # only zeros beyond the scale: the same number
    return f"DECIMAL rounded to scale {scale}", f"{value:f} written as {rounded:f}"


def _fraction_change(value: Value, fsp: int | None) -> Change:
    if fsp is None or fsp >= 6 or not isinstance(value, dt.datetime | dt.timedelta):
        return None
    micro = value.microsecond if isinstance(value, dt.datetime) else value.microseconds
    if micro % 10 ** (6 - fsp) == 0:
        return None
    digits = f"{micro:06d}"
    return f"fractional seconds cut to fsp {fsp}", f".{digits} written as " + (f".{digits[:fsp]}" if fsp else "none")


def notice_for(protocol: str, table: str | None, column: str | None) -> ChangeNotice:
    """A `ChangeNotice` that warns with `ValueChangedWarning` for one column of one table."""

    def notice(reason: str, example: str) -> None:
        warnings.warn(ValueChangedWarning(protocol, reason, table=table, field=column, example=example), stacklevel=2)

    return notice


# ------------------------------------------------------------------------------------------ unknown parameters


class UnknownParameterMode(StrEnum):
    """``unknown-parameters``: what an encoder does when its format needs a parameter the event lacks."""

    DERIVE = "derive"
    ERROR = "error"


UNKNOWN_PARAMETERS_OPTION: Final = OptionSpec(
    name="unknown-parameters",
    kind=str,
    default=UnknownParameterMode.DERIVE.value,
    choices=tuple(m.value for m in UnknownParameterMode),
    help="a column parameter the format needs but the source did not carry (DECIMAL scale, fsp, BIT width): "
    "derive it from the event's values (no value changes) or refuse the event (error)",
    for_decoder=False,
)


class UnknownParameterError(EncodeError):
    """The target format needs a column parameter the event's schema does not know (``unknown-parameters=error``)."""


_PARAMETER: Final[Mapping[LogicalType, str]] = {
    LogicalType.DECIMAL: "precision and scale",
    LogicalType.DATETIME: "fractional-seconds precision",
    LogicalType.TIMESTAMP: "fractional-seconds precision",
    LogicalType.TIME: "fractional-seconds precision",
    LogicalType.BIT: "width",
}


def is_unknown(data_type: DataType) -> bool:
    """Whether the one parameter that shapes ``data_type``'s values (see `_PARAMETER`) is unknown."""
    logical = data_type.logical
    if logical is LogicalType.DECIMAL:
        return data_type.length is None or data_type.decimal is None
    if logical is LogicalType.BIT:
        return data_type.length is None
    return logical in _PARAMETER and data_type.decimal is None


def _decimal_shape(values: list[Value]) -> tuple[int, int]:
    """(precision, scale) holding every value with its own digits (MySQL's 10,0 for no value at all)."""
    if not values:
        return 10, 0
    scale = 0
    whole = 1
    for value in values:
        digits = Decimal(value).as_tuple()
        exponent = digits.exponent if isinstance(digits.exponent, int) else 0
        scale = max(scale, -exponent)
        whole = max(whole, len(digits.digits) + exponent)
    return whole + scale, scale


def _fsp(values: list[Value]) -> int:
    return max((own_fsp(v) for v in values if isinstance(v, dt.datetime | dt.timedelta)), default=0)


def _bit_width(values: list[Value]) -> int:
    return max((v.bit_length() for v in values if isinstance(v, int)), default=1) or 1


def derived_type(data_type: DataType, values: list[Value]) -> DataType:
    """``data_type`` with its unknown parameter taken from ``values`` (the non-NULL values of one event)."""
    logical = data_type.logical
    if logical is LogicalType.DECIMAL:
        precision, scale = _decimal_shape(values)
        if data_type.decimal is not None:
            scale = data_type.decimal
        return attrs.evolve(data_type, length=data_type.length or max(precision, scale, 1), decimal=scale)
    if logical is LogicalType.BIT:
        return attrs.evolve(data_type, length=_bit_width(values))
    return attrs.evolve(data_type, decimal=_fsp(values))


class UnknownParameters:
    """Completes, per event, the parameters a target format needs (``needed``) and the event's schema lacks.

    One per encoder: derived schemas are kept (bounded) by the schema and the derived parameters, so that events
    with the same values' shape get the same schema object and the encoder's per-schema caches keep hitting.
    """

    LIMIT: Final = 256

    def __init__(self, protocol: str, mode: UnknownParameterMode, needed: frozenset[LogicalType]) -> None:
        self.protocol = protocol
        self.mode = mode
        self.needed = needed
        self._derived: dict[tuple[int, tuple[DataType, ...]], tuple[TableSchema, TableSchema]] = {}

    def complete(self, schema: TableSchema, images: Iterable[RowImage | None]) -> TableSchema:
        """``schema``, or a copy whose needed unknown parameters come from the values in ``images``."""
        lacking = [c for c in schema.columns if c.data_type.logical in self.needed and is_unknown(c.data_type)]
        if not lacking:
            return schema
        if self.mode is UnknownParameterMode.ERROR:
            column = lacking[0]
            raise UnknownParameterError(
                self.protocol,
                f"the {_PARAMETER[column.data_type.logical]} of {column.data_type.type_text()} is unknown (the source "
                "did not carry it); unknown-parameters=derive takes it from the values",
                table=schema.qualified_name,
                field=column.name,
            )
        present = [image for image in images if image is not None]
        types = {
            c.name: derived_type(c.data_type, [v for image in present if (v := image.get(c.name)) is not None])
            for c in lacking
        }
        key = (id(schema), tuple(types[c.name] for c in lacking))
        cached = self._derived.get(key)
        if cached is not None and cached[0] is schema:
            return cached[1]
        columns = [attrs.evolve(c, data_type=types[c.name]) if c.name in types else c for c in schema.columns]
        derived = attrs.evolve(schema, columns=columns)
        if len(self._derived) >= self.LIMIT:
            self._derived.clear()
        self._derived[key] = (schema, derived)
        return derived


__all__ = [
    "FITTED",
    "UNKNOWN_PARAMETERS_OPTION",
    "Change",
    "ChangeNotice",
    "UnknownParameterError",
    "UnknownParameterMode",
    "UnknownParameters",
    "ValueChangedWarning",
    "change_to_fit",
    "derived_type",
    "is_unknown",
    "notice_for",
]
