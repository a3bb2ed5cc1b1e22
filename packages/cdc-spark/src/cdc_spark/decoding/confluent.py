"""Confluent-framed Avro records on the JVM path, as every registry protocol (TiCDC Avro, Debezium Avro) has them.

Every key and value starts with the Confluent header (magic 0, 4-byte schema id). A batch's schema ids are found
first (:func:`batch_ids`: one small job over the 5-byte headers, no payload), their writer schemas fetched on the
driver through cdc-core's registry client (:func:`registry`: one per registry for the process, whose schema cache
holds each id, as an id never changes), and each record read by one ``from_avro`` per schema id with the header
cut off (:func:`avro_body`).

``from_avro`` in PERMISSIVE mode turns an unreadable record into a row of nulls, not a null: each record is read
with an end marker appended (a ``long`` field after the writer's fields, fed a fixed number appended to the datum),
so a record is good when the marker reads back (:func:`with_end_marker`, :func:`read_whole`). That also catches
trailing bytes after a datum, as the codecs do, unless they begin with the marker's own ten bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from cdc_core.schema_registry import Registry, RegistrySettings
from cdc_spark.runtime.java_names import static_method

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

HEADER: Final = 5  # magic byte 0 + big-endian schema id
END_MARKER: Final = 0x5EC0DEC0FFEE  # read back from the end of every record: the record was read whole
_REGISTRIES: dict[RegistrySettings, Registry] = {}  # one client (and schema cache) per registry, for the process


def _zigzag_varint(number: int) -> bytes:
    """Avro's encoding of a non-negative ``long``."""
    value = number << 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


END_BYTES: Final = _zigzag_varint(END_MARKER)


def registry(settings: RegistrySettings) -> Registry:
    """The process's client of the registry ``settings`` name."""
    found = _REGISTRIES.get(settings)
    if found is None:
        found = _REGISTRIES[settings] = Registry(settings)
    return found


def header(data: Column) -> Column:
    from pyspark.sql import functions as F

    return F.substring(data, 1, HEADER)


def confluent_id(head: bytes | bytearray | None) -> int | None:
    """The schema id of a collected 5-byte header, None where it is not Confluent's."""
    if head is None or len(head) != HEADER or head[0] != 0:
        return None
    return int.from_bytes(head[1:], "big")


def header_of(schema_id: int) -> bytearray:
    return bytearray(b"\x00" + schema_id.to_bytes(4, "big"))


def known_id(data: Column, schema_ids: Iterable[int]) -> Column:
    """The schema id of the record in ``data`` where its header names one of ``schema_ids``, else null. Found once
    per record: a comparison of its header bytes copies them out of the row each time (every per-id value tested
    it)."""
    from pyspark.sql import functions as F

    head = header(data)
    found: Column = F.lit(None).cast("long")
    for schema_id in schema_ids:
        found = F.when(head == F.lit(header_of(schema_id)), F.lit(schema_id).cast("long")).otherwise(found)
    return found


def batch_ids(messages: DataFrame) -> tuple[set[int], set[int]]:
    """The schema ids of the batch's keys and of its values, from one small job over the headers: in the JVM where
    the project's Java code is here (``cdc.spark.rows.SchemaIds``: one stage, nothing planned but the messages'
    scan), else a distinct of the headers."""
    from pyspark.sql import functions as F

    from cdc_spark.runtime.java_code import callable_here

    spark = messages.sparkSession
    if callable_here(spark):
        found = static_method(spark._jvm, "cdc.spark.rows.SchemaIds", "of")(messages._jdf, "key", "value")
        if found is not None:
            return set(found[0]), set(found[1])
    headers = messages.select(header(F.col("key")).alias("k"), header(F.col("value")).alias("v")).distinct().collect()
    keys = {i for i in (confluent_id(r["k"]) for r in headers) if i is not None}
    values = {i for i in (confluent_id(r["v"]) for r in headers) if i is not None}
    return keys, values


def avro_body(data: Column) -> Column:
    """The datum of a framed record with the end marker appended, for a schema :func:`with_end_marker` made."""
    from pyspark.sql import functions as F

    return F.concat(F.substring(data, HEADER + 1, 1 << 30), F.lit(bytearray(END_BYTES)))


def with_end_marker(document: dict[str, Any], names: Iterable[str]) -> tuple[dict[str, Any], str]:
    """A record schema with the end marker's ``long`` field after its fields (named apart from ``names``)."""
    end_field = "__cdc_end"
    taken = set(names)
    while end_field in taken:
        end_field += "_"
    return {**document, "fields": [*document["fields"], {"name": end_field, "type": "long"}]}, end_field


def read_whole(record: Column, end_field: str) -> Column:
    """Whether ``from_avro`` read the whole record: the end marker came back."""
    return record[end_field] == END_MARKER


__all__ = [
    "END_BYTES",
    "END_MARKER",
    "HEADER",
    "avro_body",
    "batch_ids",
    "confluent_id",
    "header",
    "header_of",
    "known_id",
    "read_whole",
    "registry",
    "with_end_marker",
]
