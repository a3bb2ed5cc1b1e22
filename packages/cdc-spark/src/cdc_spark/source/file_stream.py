"""``file://`` as a stream: files of message lines read by Spark's own file source, in the Kafka source's columns.

Spark's file source (format ``binaryFile``, one row per file) supports ``Trigger.AvailableNow`` and
``maxFilesPerTrigger``, which Spark 4.1's Python sources lack; it lists each new file once, as its checkpoint
records, and the file's lines are read here and become rows as the ``cdc-messages`` batch source makes them (the
same reader: same topic, partition and offset rules), a line at a time, so a file of any size streams. A location
that does not exist is a :class:`ConfigError` before the query starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from cdc_core.errors import ConfigError
from cdc_spark.source.columns import KAFKA_COLUMNS, lowered
from cdc_spark.source.messages import read_file

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

FILE_COLUMNS: Final = "path string, modificationTime timestamp, length long, content binary"
_GLOB_SPECIAL: Final = re.compile(r"([\\*?\[\]{},])")
_ROWS_PER_BATCH: Final = 4096


def _is_glob(location: str) -> bool:
    return any(ch in location for ch in "*?[{")


def stream_path(location: str) -> str:
    """What to give the file source for ``location``: a directory or a glob as they are; one file as a glob that
    matches just that file (the source reads directories and globs only)."""
    path = location.removeprefix("file://")
    if os.path.isdir(path):
        return path
    if os.path.isfile(path):
        folder, name = os.path.split(os.path.abspath(path))
        escaped = _GLOB_SPECIAL.sub(lambda m: "\\" + m[1], name)
        return f"{folder}/{{{escaped}}}"
    if _is_glob(path):
        folder = os.path.dirname(path) or "."
        if _is_glob(folder) or os.path.isdir(folder):
            return path
        raise ConfigError(f"source file://{path}: no directory {folder}: give a file, a directory or a glob")
    raise ConfigError(f"source file://{path}: no such file or directory: give a file, a directory or a glob")


def listing_uri(location: str) -> str:
    """:func:`stream_path` as a local URI: a bare path would be the cluster's default file system (HDFS on YARN),
    where ``file://`` does not point and the lines' reader does not look."""
    return "file:" + os.path.abspath(stream_path(location))


def _to_messages(default_topic: str | None) -> Any:
    """The ``mapInArrow`` function: each listed file's lines as rows of the Kafka source's columns, read from the
    file here a line at a time (the source lists the files without reading them: a file held whole as one binary
    value, as ``binaryFile`` reads its content, ran a 1 GB driver out of heap at 257 MB)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    parsed = _parse_datatype_string(KAFKA_COLUMNS)  # on the driver: it needs the session
    assert isinstance(parsed, StructType)
    schema = to_arrow_schema(parsed)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        names = schema.names
        rows: list[dict[str, Any]] = []
        for batch in batches:
            for listed in batch.column("path").to_pylist():
                for row in read_file(str(listed).removeprefix("file:"), default_topic):
                    values = dict(zip(names, row, strict=True))
                    if values["headers"] is not None:
                        values["headers"] = [{"key": k, "value": v} for k, v in values["headers"]]
                    rows.append(values)
                    if len(rows) >= _ROWS_PER_BATCH:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
                        rows = []
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)

    return run


def message_stream(spark: SparkSession, location: str, options: Mapping[str, str] | None = None) -> DataFrame:
    """A streaming frame of the Kafka source's columns over the message-line files at ``location`` (a file, a
    directory of files, or a glob). ``options``: ``topic`` (for lines that carry none; default: the file's name
    without extension), and any of Spark's file source options (``maxFilesPerTrigger``, ``latestFirst``, ...)."""
    given = dict(options or {})
    topic = lowered(given).get("topic")
    reader = spark.readStream.format("binaryFile").schema(FILE_COLUMNS)
    for key, value in given.items():
        if key.lower() != "topic":
            reader = reader.option(key, value)
    # only the path selected: the source then lists each new file without reading its content
    return reader.load(listing_uri(location)).select("path").mapInArrow(_to_messages(topic), KAFKA_COLUMNS)


__all__ = ["FILE_COLUMNS", "listing_uri", "message_stream", "stream_path"]
