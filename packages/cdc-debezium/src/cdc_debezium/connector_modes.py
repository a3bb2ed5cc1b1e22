"""The Debezium connector settings that decide the wire form of a field the message gives no schema for
(``decimal.handling.mode``, ``binary.handling.mode``, ``time.precision.mode``), and the zone TIMESTAMPs are read
in. A module of its own: the codec declares its options with these names without loading the converters."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

import attrs


class DecimalMode(StrEnum):
    PRECISE = "precise"
    STRING = "string"
    DOUBLE = "double"


class BinaryMode(StrEnum):
    BASE64 = "base64"
    BASE64_URL_SAFE = "base64-url-safe"
    HEX = "hex"
    BYTES = "bytes"


class TimePrecisionMode(StrEnum):
    ADAPTIVE_TIME_MICROSECONDS = "adaptive_time_microseconds"
    ADAPTIVE = "adaptive"
    CONNECT = "connect"


@attrs.frozen(kw_only=True)
class Modes:
    """The Debezium connector settings a schemaless stream was written with, and the zone for TIMESTAMPs."""

    decimal: DecimalMode = DecimalMode.DOUBLE
    binary: BinaryMode = BinaryMode.BASE64
    time_precision: TimePrecisionMode = TimePrecisionMode.ADAPTIVE_TIME_MICROSECONDS
    zone: dt.tzinfo = dt.UTC
