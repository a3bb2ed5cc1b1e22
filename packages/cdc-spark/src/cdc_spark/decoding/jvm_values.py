"""Spark SQL expressions that type one column value in the JVM: TiDB's text forms and the shared pieces.

Every builder returns :class:`Typed`: the value in the contract's Spark type (:func:`spark_type`), whether the
input failed to convert (``bad``: its message then goes to the protocol's codec in Python, which decides), and for
temporal types the zero-date text (MySQL's ``0000-00-00``, null in the typed column).

Expressions use ``try_`` forms only, so a session with ANSI mode on turns a bad value into ``bad``, never into a
failed batch. They are Spark's own casts; temporal text is first held to the codecs' exact form with one regular
expression (Spark's casts trim blanks and newlines and take one-digit fields), so a text the codecs refuse is bad
here too, as is float text only Java reads (``1.5d``, ``0x1p3``); integer text is held to ``[-]digits`` (Spark's
cast trims blanks and reads a ``+``) and, for the protocols whose codecs bound integers, to its column's range
(:func:`bounded`). Every well-formed value reads exactly as the codecs read it (a test holds the two paths equal).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final

import attrs

from cdc_core.types import DataType, LogicalTypeVisitor, integer_range
from cdc_spark.decoding.spark_types import decimal_shape, spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column

# \z, not $: Java's $ also matches before a final newline, which the codecs refuse in an index or a bitmask
DIGITS: Final = r"^[0-9]+\z"
INTEGER_TEXT: Final = r"^-?[0-9]+\z"
# MySQL's TIME range, -838:59:59 to 838:59:59, in the form itself (as cdc_core.textual.parse_time refuses the rest)
TIME_TEXT: Final = r"^(-)?([0-9]{1,2}|[0-7][0-9]{2}|8[0-2][0-9]|83[0-8]):([0-5][0-9]):([0-5][0-9])(\.([0-9]{1,9}))?$"
# The exact shapes cdc_core.textual reads: Spark's casts also take blanks and a newline around the text (they trim),
# one-digit fields and a date followed by anything after a blank, which TiDB never prints. \z, not $ (which also
# matches before a final newline).
DATE_TEXT: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\z"
DATETIME_TEXT: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?\z"
# A hexadecimal float, or a digit or point followed by Java's type suffix (``inf`` and ``Infinity`` are not matched)
JAVA_ONLY_FLOAT: Final = r"[xX]|[0-9.][dDfF][\x00-\x20]*$"  # Spark trims the control characters and blanks
DECIMAL_TEXT: Final = r"^-?[0-9]+(\.[0-9]+)?\z"  # a newline would stay in the padded text


@attrs.frozen
class Typed:
    """One value of one row image: its Spark value, whether its input failed to convert, its zero-date text."""

    value: Column
    bad: Column
    zero: Column | None = None


def checked(text: Column, value: Column) -> Typed:
    """A conversion whose null result for a non-null input means the input was not of the expected form."""
    return Typed(value=value, bad=text.isNotNull() & value.isNull())


def integral(text: Column) -> Column:
    """``text`` when it is an integer as the codecs read one (``[-]digits``), else null: Spark's casts also trim
    blanks, read a ``+`` and, into a decimal, round a fraction or an exponent away."""
    from pyspark.sql import functions as F

    return F.when(text.rlike(INTEGER_TEXT), text)


def bounded(typed: Typed, data_type: DataType) -> Typed:
    """``typed`` held to its column type's range (:func:`cdc_core.types.integer_range`), for the protocols whose codecs
    refuse an integer the column cannot hold: the contract's Spark type is often wider (TINYINT UNSIGNED is a short,
    MEDIUMINT an int, BIT(n) a long)."""
    from pyspark.sql import functions as F

    bounds = integer_range(data_type)
    if bounds is None:
        return typed
    low, high = (F.lit(str(bound)).cast("decimal(20,0)") for bound in bounds)
    inside = typed.value.cast("decimal(20,0)").between(low, high)
    return attrs.evolve(typed, value=F.when(inside, typed.value), bad=typed.bad | (typed.value.isNotNull() & ~inside))


def integer_text(text: Column, data_type: DataType) -> Typed:
    return checked(text, integral(text).try_cast(spark_type(data_type)))


def fraction_digits(text: Column) -> Column:
    from pyspark.sql import functions as F

    point = F.instr(text, ".")
    return F.when(point > 0, F.length(text) - point).otherwise(F.lit(0))


def decimal_text(text: Column, data_type: DataType) -> Typed:
    """DECIMAL text; beyond 38 digits the contract keeps text, padded to the column's scale. More fractional
    digits than the scale, or an exponent, is the codec's to judge (rounding or refusing)."""
    from pyspark.sql import functions as F

    shape = decimal_shape(data_type)
    scale = data_type.scale if shape is None else shape[1]
    trimmed = F.trim(text)
    plain = (fraction_digits(trimmed) <= scale) & ~F.lower(trimmed).contains("e")
    if shape is not None:
        return checked(text, F.when(plain, trimmed.try_cast(spark_type(data_type))))
    return checked(text, F.when(plain & trimmed.rlike(DECIMAL_TEXT), padded_decimal(trimmed, data_type.scale)))


def padded_decimal(text: Column, scale: int) -> Column:
    """Decimal text with at least ``scale`` fractional digits (zeros appended), as the codecs read it."""
    from pyspark.sql import functions as F

    if scale <= 0:
        return text
    fraction = F.when(F.instr(text, ".") > 0, F.length(text) - F.instr(text, ".")).otherwise(F.lit(0))
    missing = F.greatest(F.lit(scale) - fraction, F.lit(0))
    point = F.when(F.instr(text, ".") > 0, F.lit("")).otherwise(F.lit("."))
    return F.concat(text, point, F.repeat(F.lit("0"), missing))


def float_text(text: Column, data_type: DataType) -> Typed:
    """A FLOAT rounds from the double the text names, as the codecs' ``to_float32(float(text))`` does.

    Spark's cast is Java's ``Double.parseDouble``, which also reads a type suffix (``1.5d``, ``2f``) and hexadecimal
    (``0x1p3``); Python's ``float()`` reads neither, so such text is left to the codec (which refuses it)."""
    from pyspark.sql import functions as F

    value = F.when(~text.rlike(JAVA_ONLY_FLOAT), text.try_cast("double").try_cast(spark_type(data_type)))
    return checked(text, value)


def zero_date(text: Column) -> Column:
    """MySQL's zero and partial-zero dates (year, month or day 0), which Spark cannot hold."""
    from pyspark.sql import functions as F

    dashes = (F.substring(text, 5, 1) == "-") & (F.substring(text, 8, 1) == "-") & (F.length(text) >= 10)
    zeros = (F.substring(text, 1, 4) == "0000") | (F.substring(text, 6, 2) == "00") | (F.substring(text, 9, 2) == "00")
    return dashes & zeros


def _temporal(text: Column, shaped: Column, value: Column) -> Typed:
    """``value`` of a text of the exact ``shaped`` form; a zero date of that form is kept as text, anything else
    null in ``value`` is bad (the codec then refuses it: an impossible date such as ``2024-02-30`` or a malformed
    text)."""
    from pyspark.sql import functions as F

    zero = shaped & zero_date(text)
    # Spark's cast reads year 0 with a real month and day as a date (a zero month or day it does not read): MySQL's
    # is a zero date. The year is tested alone, as the whole zero-date test would then run twice.
    value = F.when(shaped & ~text.startswith("0000"), value)
    return Typed(value=value, bad=text.isNotNull() & ~zero & value.isNull(), zero=F.when(zero, text))


def date_text(text: Column) -> Typed:
    """DATE text."""
    return _temporal(text, text.rlike(DATE_TEXT), text.try_cast("date"))


def datetime_text(text: Column) -> Typed:
    """DATETIME text. Spark keeps six fractional digits, as the codecs do (TiDB never sends more)."""
    return _temporal(text, text.rlike(DATETIME_TEXT), text.try_cast("timestamp_ntz"))


def timestamp_text(text: Column, zone: str, session_zone: str) -> Typed:
    """TIMESTAMP text: local time in ``zone`` (the changefeed's), made an instant."""
    from pyspark.sql import functions as F

    instant = F.convert_timezone(F.lit(zone), F.lit(session_zone), text.try_cast("timestamp_ntz")).cast("timestamp")
    return _temporal(text, text.rlike(DATETIME_TEXT), instant)


def interval_from_micros(micros: Column) -> Column:
    """A day-time interval of ``micros`` microseconds (negative allowed)."""
    from pyspark.sql import functions as F

    seconds = (micros.cast("decimal(20,0)") / F.lit(1_000_000)).cast("decimal(18,6)")
    return F.make_dt_interval(F.lit(0), F.lit(0), F.lit(0), seconds)


def time_text(text: Column) -> Typed:
    """MySQL TIME ``[-]hhh:mm:ss[.ffffff]`` (beyond 6 fractional digits truncated) as an interval.

    One regular expression checks the form; the parts are then cut at the separators, which costs a fraction of
    extracting each group with its own match.
    """
    from pyspark.sql import functions as F

    trimmed = F.trim(text)
    body = F.ltrim(trimmed, F.lit("-"))  # the form allows one leading sign at most
    seconds = F.substring_index(body, ":", -1)  # ss[.fraction]
    digits = F.when(F.instr(seconds, ".") > 0, F.substring_index(seconds, ".", -1)).otherwise(F.lit(""))
    fraction = F.rpad(F.substring(digits, 1, 6), 6, "0")
    micros = (
        F.substring_index(body, ":", 1).cast("long") * 3_600_000_000
        + F.substring_index(F.substring_index(body, ":", 2), ":", -1).cast("long") * 60_000_000
        + F.substring_index(seconds, ".", 1).cast("long") * 1_000_000
        + fraction.cast("long")
    )
    signed = F.when(trimmed.startswith("-"), -micros).otherwise(micros)
    value = F.when(trimmed.rlike(TIME_TEXT), interval_from_micros(signed))
    return checked(text, value)


def json_text(text: Column) -> Typed:
    """A JSON object or array as the contract's compact text (members in document order; Jackson re-prints it).

    A scalar document goes to the codec: ``get_json_object`` returns a string document without its quotes.
    """
    from pyspark.sql import functions as F

    trimmed = F.ltrim(text)
    container = trimmed.startswith("{") | trimmed.startswith("[")
    return checked(text, F.when(container, F.get_json_object(text, "$")))


def vector_text(text: Column) -> Typed:
    """TiDB VECTOR text ``[1,2.5]`` as ``array<float>``."""
    from pyspark.sql import functions as F

    trimmed = F.trim(text)
    inner = F.trim(F.substring(trimmed, 2, F.length(trimmed) - 2))
    shaped = trimmed.startswith("[") & trimmed.endswith("]")
    parts = F.transform(F.split(inner, ","), lambda part: F.trim(part).try_cast("float"))
    value = F.when(shaped & (inner == ""), F.array().cast("array<float>")).when(
        shaped & F.forall(parts, lambda v: v.isNotNull()), parts
    )
    return checked(text, value)


def enum_name(text: Column, data_type: DataType) -> Column:
    """ENUM: a 1-based index (0 is MySQL's invalid ``""``) or the name; without member names, the index itself as
    text (``EnumIndex`` in the codecs)."""
    from pyspark.sql import functions as F

    elements = list(data_type.elements or ())
    digits = text.rlike(DIGITS)
    number = text.try_cast("long")
    if not elements:
        return F.when(digits & (number == 0), F.lit("")).when(digits, number.cast("string")).when(text == "", text)
    names = F.array(*[F.lit(e) for e in elements])
    return (
        F.when(digits & (number == 0), F.lit(""))
        .when(digits & (number >= 1) & (number <= len(elements)), F.element_at(names, number.cast("int")))
        .when(~digits & (text.isin(*elements) | (text == "")), text)
    )


def set_names(text: Column, data_type: DataType) -> Column:
    """SET: a bitmask or comma-joined names; without member names, the bitmask itself as text (``SetBits`` in the
    codecs)."""
    from pyspark.sql import functions as F

    elements = list(data_type.elements or ())
    digits = text.rlike(DIGITS)
    number = text.try_cast("long")
    if not elements:
        return F.when(digits & number.isNotNull(), F.array(number.cast("string")))
    return F.when(digits, set_from_bits(number, elements)).when(~digits, _set_from_names(text, elements))


def set_from_bits(number: Column, elements: list[str]) -> Column:
    """SET member names from a bitmask (null when a bit names no member)."""
    from pyspark.sql import functions as F

    in_range = number.isNotNull() & (F.shiftright(number, len(elements)) == 0) if len(elements) < 63 else number >= 0
    bits = [F.when(F.shiftright(number, i).bitwiseAND(1) == 1, F.lit(e)) for i, e in enumerate(elements)]
    return F.when(in_range, F.array_compact(F.array(*bits)))


def _set_from_names(text: Column, elements: list[str]) -> Column:
    from pyspark.sql import functions as F

    given = F.when(text == "", F.array().cast("array<string>")).otherwise(F.split(text, ","))
    known = F.size(F.array_except(given, F.array(*[F.lit(e) for e in elements]))) == 0
    ordered = F.array_compact(F.array(*[F.when(F.array_contains(given, e), F.lit(e)) for e in elements]))
    return F.when(known, ordered)


Reader = Callable[["Column"], Typed]  # adapter.Reader (adapter imports this module)


class TextReader(LogicalTypeVisitor[Reader | None]):
    """How a value in TiDB's text form (Canal-JSON, Simple JSON) is typed; None for a type without one here (binary
    columns are protocol-specific, spatial and array columns are not TiDB's). Protocols override what differs."""

    def __init__(self, zone: str, session_zone: str) -> None:
        self.zone, self.session_zone = zone, session_zone

    def visit_int(self, data_type: DataType) -> Reader | None:
        return lambda text: integer_text(text, data_type)

    def visit_year(self, data_type: DataType) -> Reader | None:
        return lambda text: integer_text(text, data_type)

    def visit_bit(self, data_type: DataType) -> Reader | None:
        return lambda text: integer_text(text, data_type)

    def visit_float(self, data_type: DataType) -> Reader | None:
        return lambda text: float_text(text, data_type)

    def visit_double(self, data_type: DataType) -> Reader | None:
        return lambda text: float_text(text, data_type)

    def visit_decimal(self, data_type: DataType) -> Reader | None:
        return lambda text: decimal_text(text, data_type)

    def visit_date(self, data_type: DataType) -> Reader | None:
        return date_text

    def visit_datetime(self, data_type: DataType) -> Reader | None:
        return datetime_text

    def visit_timestamp(self, data_type: DataType) -> Reader | None:
        zone, session_zone = self.zone, self.session_zone
        return lambda text: timestamp_text(text, zone, session_zone)

    def visit_time(self, data_type: DataType) -> Reader | None:
        return time_text

    def visit_enum(self, data_type: DataType) -> Reader | None:
        return lambda text: checked(text, enum_name(text, data_type))

    def visit_set(self, data_type: DataType) -> Reader | None:
        return lambda text: checked(text, set_names(text, data_type))

    def visit_json(self, data_type: DataType) -> Reader | None:
        return json_text

    def visit_vector(self, data_type: DataType) -> Reader | None:
        return vector_text

    def visit_string(self, data_type: DataType) -> Reader | None:
        return lambda text: Typed(value=text, bad=_false())

    def visit_bytes(self, data_type: DataType) -> Reader | None:
        return None

    def visit_geometry(self, data_type: DataType) -> Reader | None:
        return None

    def visit_array(self, data_type: DataType) -> Reader | None:
        return None


def every_reader(readers: Iterable[tuple[str, Reader | None]]) -> dict[str, Reader] | None:
    """The columns' readers, or None when one has none (its shape then goes to the codec)."""
    found: dict[str, Reader] = {}
    for name, reader in readers:
        if reader is None:
            return None
        found[name] = reader
    return found


def _false() -> Column:
    from pyspark.sql import functions as F

    return F.lit(False)


__all__ = [
    "Reader",
    "TextReader",
    "Typed",
    "checked",
    "enum_name",
    "every_reader",
    "interval_from_micros",
    "set_names",
    "time_text",
]
