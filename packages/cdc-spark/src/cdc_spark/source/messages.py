"""``cdc-messages``: files of message lines (the ``cdc decode`` input format) as a Kafka-shaped batch source.

Options: ``path`` (a file, a directory whose files are read in name order, or a glob), ``topic`` (for lines that
carry none; default: the file's stem). Lines without a partition go to
partition 0; lines without an offset get their position among the file's messages, so replays are stable. Each
file is one input partition. A line that is not a message line fails the read with an error naming file and line:
nothing is skipped silently. Streaming reads go through Spark's own file source
(:func:`cdc_spark.source.file_stream.message_stream`), which Trigger.AvailableNow and read limits need.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from cdc_core.errors import ConfigError
from cdc_core.messagelines import parse_line
from cdc_spark.source.columns import KAFKA_COLUMNS, Row, lowered, message_row


class MessageFile(InputPartition):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def list_files(options: Mapping[str, str]) -> list[str]:
    location = options.get("path")
    if not location:
        raise ConfigError("cdc-messages: option path is required")
    if location.startswith("file://"):
        location = location[len("file://") :]
    if os.path.isdir(location):
        names = [str(p) for p in Path(location).iterdir() if p.is_file() and not p.name.startswith((".", "_"))]
    elif any(ch in location for ch in "*?["):
        names = [name for name in glob.glob(location) if os.path.isfile(name)]
    else:
        names = [location] if os.path.isfile(location) else []
    return sorted(names)


def file_rows(lines: Iterable[bytes], path: str, default_topic: str) -> Iterator[Row]:
    """The rows of one file's lines: blank lines left out, coordinates a line lacks filled in."""
    position = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        message = parse_line(line, line=number, source=path)
        offset = position if message.offset is None else message.offset
        partition = 0 if message.partition is None else message.partition
        yield message_row(message, topic=message.topic or default_topic, partition=partition, offset=offset)
        position += 1


def read_file(path: str, default_topic: str | None) -> Iterator[Row]:
    with open(path, "rb") as stream:
        yield from file_rows(stream, path, default_topic or Path(path).stem)


class MessagesBatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = lowered(options)

    def partitions(self) -> Sequence[MessageFile]:
        files = list_files(self._options)
        if not files:
            raise ConfigError(f"cdc-messages: no files at {self._options.get('path')!r}")
        return [MessageFile(path) for path in files]

    def read(self, partition: InputPartition) -> Iterator[Row]:
        assert isinstance(partition, MessageFile)
        return read_file(partition.path, self._options.get("topic"))


class MessagesDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "cdc-messages"

    def schema(self) -> str:
        return KAFKA_COLUMNS

    def reader(self, schema: Any) -> MessagesBatchReader:
        return MessagesBatchReader(self.options)
