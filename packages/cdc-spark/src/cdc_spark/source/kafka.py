"""``cdc-kafka``: a Spark Python data source reading Kafka with confluent-kafka, batch and streaming.

Options follow Spark's Kafka source: ``kafka.<librdkafka setting>`` (``kafka.bootstrap.servers`` required; SASL and
TLS settings pass through unchanged and never appear in errors), one of ``subscribe`` (comma-separated topics),
``subscribePattern`` (regular expression) or ``assign`` (JSON ``{"topic": [0, 1]}``), ``startingOffsets``,
``endingOffsets`` (batch), ``startingTimestamp``, ``maxOffsetsPerTrigger`` (streaming), ``pollTimeoutMs``.

Each input partition is one topic-partition offset range ``[start, end)``. A reader stops at ``end`` by offset, not
by count, so gaps (compacted topics, transaction markers) are fine; a range that makes no progress for
``pollTimeoutMs`` fails the task with a StorageError instead of returning fewer rows.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from cdc_core.errors import ConfigError, StorageError
from cdc_core.secrets import redact_text
from cdc_spark.source.columns import KAFKA_COLUMNS, Row, lowered, to_timestamp
from cdc_spark.source.offsets import EARLIEST, LATEST, Positions, TopicPartition, from_json, parse_spec, to_json

DEFAULT_POLL_TIMEOUT_MS: Final = 120_000
METADATA_TIMEOUT_S: Final = 30.0


class KafkaRange(InputPartition):
    """Offsets ``[start, end)`` of one topic-partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end


def client_config(options: Mapping[str, str]) -> dict[str, str]:
    """The librdkafka settings among the source options (``kafka.`` prefix removed)."""
    config = {name[len("kafka.") :]: value for name, value in options.items() if name.startswith("kafka.")}
    if not config.get("bootstrap.servers"):
        raise ConfigError("cdc-kafka: option kafka.bootstrap.servers is required")
    config.setdefault("group.id", f"cdc-spark-{uuid.uuid4().hex[:12]}")  # never committed: Spark keeps offsets
    config["enable.auto.commit"] = "false"
    config["enable.partition.eof"] = "true"
    return config


class KafkaMetadata:
    """Driver-side topic, partition and offset lookups (one consumer, created on first use, never pickled)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._config = client_config(options)
        self._servers = self._config["bootstrap.servers"]
        self._options = lowered(options)
        self._consumer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_consumer": None}

    def _client(self) -> Any:
        if self._consumer is None:
            self._consumer = new_consumer(self._config)
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def topic_partitions(self) -> list[TopicPartition]:
        options = self._options
        chosen = [name for name in ("subscribe", "subscribepattern", "assign") if options.get(name)]
        if len(chosen) != 1:
            raise ConfigError("cdc-kafka: give exactly one of the options subscribe, subscribePattern, assign")
        if options.get("assign"):
            assigned = from_json(_assign_document(options["assign"]), name="assign")
            return sorted(assigned)
        try:
            metadata = self._client().list_topics(timeout=METADATA_TIMEOUT_S)
        except Exception as exc:  # KafkaException from librdkafka
            raise StorageError(f"cdc-kafka: cannot list topics on {self._servers}: {exc}") from exc
        if options.get("subscribe"):
            wanted = [topic.strip() for topic in options["subscribe"].split(",") if topic.strip()]
            missing = [topic for topic in wanted if topic not in metadata.topics]
            if missing:
                raise StorageError(f"cdc-kafka: topic(s) {', '.join(missing)} not found on {self._servers}")
        else:
            pattern = re.compile(options["subscribepattern"])
            wanted = [topic for topic in metadata.topics if pattern.fullmatch(topic)]
        return sorted((topic, p) for topic in wanted for p in metadata.topics[topic].partitions)

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        try:
            low, high = self._client().get_watermark_offsets(
                KafkaTopicPartition(topic, partition), timeout=METADATA_TIMEOUT_S
            )
        except Exception as exc:
            raise StorageError(f"cdc-kafka: no offsets for {topic}[{partition}] on {self._servers}: {exc}") from exc
        return int(low), int(high)

    def offsets_for_time(self, partitions: Sequence[TopicPartition], epoch_ms: int) -> Positions:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        query = [KafkaTopicPartition(topic, partition, epoch_ms) for topic, partition in partitions]
        try:
            answers = self._client().offsets_for_times(query, timeout=METADATA_TIMEOUT_S)
        except Exception as exc:
            raise StorageError(f"cdc-kafka: offsets for time {epoch_ms} failed on {self._servers}: {exc}") from exc
        found: Positions = {}
        for answer in answers:
            # -1: no message at or after the time, so start at the end.
            offset = answer.offset if answer.offset >= 0 else self.watermarks(answer.topic, answer.partition)[1]
            found[(answer.topic, answer.partition)] = int(offset)
        return found

    def resolve(self, spec: str | None, *, default: int, name: str) -> Positions:
        """Concrete offsets of every subscribed partition for an offsets option."""
        partitions = self.topic_partitions()
        if name == "startingoffsets" and self._options.get("startingtimestamp"):
            return self.offsets_for_time(partitions, _int_option(self._options, "startingtimestamp"))
        fallback, explicit = parse_spec(spec, default=default, name=name)
        unknown = sorted(set(explicit) - set(partitions))
        if unknown:
            raise ConfigError(f"cdc-kafka: option {name} names partitions not subscribed: {unknown}")
        resolved: Positions = {}
        for tp in partitions:
            wanted = explicit.get(tp, fallback)
            if wanted in (EARLIEST, LATEST):
                low, high = self.watermarks(*tp)
                resolved[tp] = low if wanted == EARLIEST else high
            else:
                resolved[tp] = wanted
        return resolved

    def latest(self) -> Positions:
        return {tp: self.watermarks(*tp)[1] for tp in self.topic_partitions()}

    def earliest(self, tp: TopicPartition) -> int:
        return self.watermarks(*tp)[0]


def _assign_document(text: str) -> dict[str, dict[str, int]]:
    import json

    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"cdc-kafka: option assign is not JSON: {exc}") from exc
    if not isinstance(document, dict) or not all(isinstance(p, list) for p in document.values()):
        raise ConfigError('cdc-kafka: option assign must look like {"topic": [0, 1]}')
    return {topic: {str(p): 0 for p in partitions} for topic, partitions in document.items()}


def _int_option(options: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = options.get(name)
    if raw is None:
        if default is None:
            raise ConfigError(f"cdc-kafka: option {name} is required")
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ConfigError(f"cdc-kafka: option {name} must be an integer, got {raw!r}") from exc


def ranges(start: Positions, end: Positions, metadata: KafkaMetadata | None = None) -> list[KafkaRange]:
    """Non-empty ranges; a partition new since ``start`` begins at its earliest offset."""
    out: list[KafkaRange] = []
    for tp, stop in sorted(end.items()):
        begin = start.get(tp)
        if begin is None:
            begin = metadata.earliest(tp) if metadata is not None else 0
        if stop > begin:
            out.append(KafkaRange(tp[0], tp[1], begin, stop))
    return out


def new_consumer(config: Mapping[str, str]) -> Any:
    """A confluent-kafka consumer; a rejected setting is a ConfigError that quotes no credential."""
    from confluent_kafka import Consumer, KafkaException

    try:
        return Consumer(dict(config))
    except KafkaException as exc:  # librdkafka may quote the rejected value
        raise ConfigError(f"cdc-kafka: kafka client settings rejected: {redact_text(str(exc), config)}") from None


def read_range(config: Mapping[str, str], part: KafkaRange, poll_timeout_ms: int) -> Iterator[Row]:
    """Every record of ``part`` in offset order (runs in the executors)."""
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    consumer = new_consumer(config)
    where = f"{part.topic}[{part.partition}] offsets {part.start}..{part.end}"
    try:
        consumer.assign([KafkaTopicPartition(part.topic, part.partition, part.start)])
        position = part.start
        progressed = time.monotonic()
        while position < part.end:
            record = consumer.poll(1.0)
            if record is None:
                if (time.monotonic() - progressed) * 1000 > poll_timeout_ms:
                    raise StorageError(f"cdc-kafka: no progress reading {where} at offset {position}")
                continue
            error = record.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    # At the log end: offsets up to it that never arrived were gaps (markers, compaction).
                    position = max(position, record.offset() or position)
                    progressed = time.monotonic()
                    continue
                raise StorageError(f"cdc-kafka: reading {where}: {error}")
            offset = record.offset()
            if offset is None or offset >= part.end:
                break
            progressed = time.monotonic()
            position = offset + 1
            kind, stamp = record.timestamp()
            headers = [(str(pair[0]), _header_bytes(pair[1])) for pair in record.headers() or ()]
            yield (
                record.key(),
                record.value(),
                part.topic,
                part.partition,
                offset,
                to_timestamp(stamp),
                max(kind - 1, 0),  # librdkafka: 1 create time, 2 log append time; Spark: 0 and 1
                headers or None,
            )
        if position < part.end:
            raise StorageError(f"cdc-kafka: {where} ended at offset {position}, before {part.end}")
    finally:
        consumer.close()


def _header_bytes(value: str | bytes | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


class KafkaBatchReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = lowered(options)
        self._config = client_config(options)
        self._timeout = _int_option(self._options, "polltimeoutms", DEFAULT_POLL_TIMEOUT_MS)

    def partitions(self) -> Sequence[KafkaRange]:
        metadata = KafkaMetadata(self._options)
        try:
            start = metadata.resolve(self._options.get("startingoffsets"), default=EARLIEST, name="startingoffsets")
            end = metadata.resolve(self._options.get("endingoffsets"), default=LATEST, name="endingoffsets")
        finally:
            metadata.close()
        return ranges(start, end)

    def read(self, partition: InputPartition) -> Iterator[Row]:
        assert isinstance(partition, KafkaRange)
        return read_range(self._config, partition, self._timeout)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{"topic": {"partition": next_offset}}``; Spark checkpoints them, nothing is committed to Kafka."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._options = lowered(options)
        self._config = client_config(options)
        self._timeout = _int_option(self._options, "polltimeoutms", DEFAULT_POLL_TIMEOUT_MS)
        raw_limit = self._options.get("maxoffsetspertrigger")
        self._max_per_trigger = None if raw_limit is None else _int_option(self._options, "maxoffsetspertrigger")
        self._metadata = KafkaMetadata(options)
        self._target: Positions | None = None

    def initialOffset(self) -> dict[str, dict[str, int]]:
        spec = self._options.get("startingoffsets")
        return to_json(self._metadata.resolve(spec, default=LATEST, name="startingoffsets"))

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self._max_per_trigger is None else ReadMaxRows(self._max_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._metadata.latest()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, dict[str, int]]:
        begin = from_json(start, name="offset")
        latest = self._metadata.latest()
        if self._target is not None:
            latest = {tp: min(high, self._target.get(tp, begin.get(tp, 0))) for tp, high in latest.items()}
        for tp, offset in begin.items():
            latest[tp] = max(latest.get(tp, offset), offset)  # never move backwards
        if isinstance(limit, ReadMaxRows):
            latest = capped(begin, latest, limit.max_rows)
        return to_json(latest)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[KafkaRange]:
        return ranges(from_json(start, name="offset"), from_json(end, name="offset"), self._metadata)

    def read(self, partition: InputPartition) -> Iterator[Row]:
        assert isinstance(partition, KafkaRange)
        return read_range(self._config, partition, self._timeout)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: the checkpoint is the record of progress."""

    def stop(self) -> None:
        self._metadata.close()


def capped(start: Positions, latest: Positions, max_rows: int) -> Positions:
    """End offsets reading at most ``max_rows`` offsets in all, shared in proportion to what each partition has."""
    available = {tp: high - start.get(tp, high) for tp, high in latest.items()}
    total = sum(n for n in available.values() if n > 0)
    if total <= max_rows:
        return latest
    end = dict(latest)
    budget = max_rows
    for tp, count in sorted(available.items()):
        if count <= 0:
            continue
        share = min(count, max_rows * count // total)
        end[tp] = start[tp] + share
        budget -= share
    for tp, count in sorted(available.items()):  # rounding leftovers, in partition order
        if budget <= 0:
            break
        extra = min(budget, latest[tp] - end[tp]) if count > 0 else 0
        end[tp] += extra
        budget -= extra
    return end


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "cdc-kafka"

    def schema(self) -> str:
        return KAFKA_COLUMNS

    def reader(self, schema: Any) -> KafkaBatchReader:
        return KafkaBatchReader(self.options)

    def streamReader(self, schema: Any) -> KafkaStreamReader:
        return KafkaStreamReader(self.options)
