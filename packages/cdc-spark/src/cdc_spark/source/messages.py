"""``cdc-messages``: files of message lines (the ``cdc decode`` input format) as a Kafka-shaped source.

Options: ``path`` (a file, a directory whose files are read in name order, or a glob), ``topic`` (for lines that
carry none; default: the file's stem). Lines without a partition go to
partition 0; lines without an offset get their position among the file's messages, so replays are stable. Each
file is one input partition; streaming offsets are ``{"files": N}``, the number of files (in name order) consumed.
A line that is not a message line fails the read with an error naming file and line: nothing is skipped silently.
Spark 4.1's Python sources have no read limits: a streaming read takes every file present at each trigger.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

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


def read_file(path: str, default_topic: str | None) -> Iterator[Row]:
    topic_fallback = default_topic or Path(path).stem
    position = 0
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            line = raw.strip()
            if not line:
                continue
            message = parse_line(line, line=number, source=path)
            offset = position if message.offset is None else message.offset
            partition = 0 if message.partition is None else message.partition
            yield message_row(message, topic=message.topic or topic_fallback, partition=partition, offset=offset)
            position += 1


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


class MessagesStreamReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = lowered(options)
        if "maxfilespertrigger" in self._options:
            raise ConfigError(
                "cdc-messages: maxFilesPerTrigger needs read limits, which Spark 4.1's Python sources lack"
            )

    def initialOffset(self) -> dict[str, int]:
        return {"files": 0}

    def latestOffset(self) -> dict[str, int]:
        return {"files": len(list_files(self._options))}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[MessageFile]:
        files = list_files(self._options)
        return [MessageFile(path) for path in files[int(start["files"]) : int(end["files"])]]

    def read(self, partition: InputPartition) -> Iterator[Row]:
        assert isinstance(partition, MessageFile)
        return read_file(partition.path, self._options.get("topic"))

    def commit(self, end: dict[str, Any]) -> None:
        """Files are never deleted or moved: the checkpoint alone records progress."""


class MessagesDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "cdc-messages"

    def schema(self) -> str:
        return KAFKA_COLUMNS

    def reader(self, schema: Any) -> MessagesBatchReader:
        return MessagesBatchReader(self.options)

    def streamReader(self, schema: Any) -> MessagesStreamReader:
        return MessagesStreamReader(self.options)
