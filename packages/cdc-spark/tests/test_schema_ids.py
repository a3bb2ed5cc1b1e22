"""The Confluent schema ids a batch's records name, read in the JVM as a distinct of the frame's headers reads them."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_spark.decoding import confluent
from cdc_spark.runtime.java_names import static_method
from cdc_testing.spark_frames import scanned_frame

pytestmark = pytest.mark.spark


def _framed(schema_id: int, body: bytes = b"\x02\x04") -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


# (key, value): framed ids, an id above 2^31 (read unsigned), a header alone, nulls, an empty record, short
# records, and records whose first byte is not the magic 0 (a TSO marker, Glue's framing)
ROWS = [
    (_framed(7), _framed(8)),
    (_framed(7), _framed(70_000)),
    (_framed(2**31 + 5), None),
    (None, _framed(9, b"")),
    (b"", b"\x00\x00\x01"),
    (b"\x03" + (1).to_bytes(8, "big"), b"\x02" + (2).to_bytes(8, "big")),
    (b"\x01\x00\x00\x00\x0b\x02", _framed(8, b"\x00" * 40)),
]


def test_the_jvm_reads_the_ids_a_distinct_of_the_headers_reads(spark: Any) -> None:
    frame = scanned_frame(spark, ROWS, "key BINARY, value BINARY")
    expected = ({7, 2**31 + 5}, {8, 70_000, 9})
    assert confluent.batch_ids(frame) == expected
    found = static_method(spark._jvm, "cdc.spark.rows.SchemaIds", "of")(frame._jdf, "key", "value")
    assert (set(found[0]), set(found[1])) == expected  # the JVM's answer, not the frame's fallback


def test_a_frame_without_binary_columns_is_read_as_a_frame(spark: Any) -> None:
    frame = scanned_frame(spark, [("k", _framed(3))], "key STRING, value BINARY")
    assert static_method(spark._jvm, "cdc.spark.rows.SchemaIds", "of")(frame._jdf, "key", "value") is None
    assert confluent.batch_ids(frame) == (set(), {3})  # a string key has no header to read (substring of text)
