"""Before a query starts: the source must exist, and every wait on Kafka has a bound; a frame given to a batch
function must not be a stream.

``file://``: a location that is neither a file, a directory nor a glob in an existing directory is a
:class:`ConfigError` (:func:`cdc_spark.source.file_stream.stream_path`). ``kafka://``: the brokers are asked for
their topics with the Kafka client Spark's source uses (in the driver JVM, with the same ``source.kafka.*``
settings), within the broker timeout; no answer is an :class:`UnavailableError`, a missing topic a
:class:`ConfigError`. Spark's Kafka source then gets timeouts of the same bound unless ``source.*`` sets them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from cdc_core.errors import ConfigError, UnavailableError
from cdc_core.secrets import redact_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_BROKER_TIMEOUT_S: Final = 30.0


def batch_frame(frame: DataFrame, function: str) -> None:
    """A :class:`ConfigError` where ``frame`` is streaming (``spark.readStream``): ``function`` runs Spark jobs over
    a batch's rows, which Spark refuses on a stream with an analysis error that names neither the function nor what
    to do instead."""
    if frame.isStreaming:
        raise ConfigError(
            f"{function} takes a batch frame, and this one is streaming (spark.readStream): call it on each"
            " micro-batch, in stream.writeStream.foreachBatch(lambda batch, batch_id: ...), or run `cdc apply`,"
            " which does so and commits each batch exactly once"
        )


def kafka_source_defaults(timeout_s: float) -> dict[str, str]:
    """Spark Kafka source options that bound its waits on the brokers (``source.*`` given by the user wins)."""
    millis = str(int(timeout_s * 1000))
    return {
        "kafka.default.api.timeout.ms": millis,  # offset lookups of the admin client and the consumer
        "kafka.request.timeout.ms": millis,
        "fetchOffset.numRetries": "3",
    }


def check_kafka_topics(
    spark: SparkSession, brokers: str, topics: tuple[str, ...], settings: Mapping[str, str], timeout_s: float
) -> None:
    """The brokers answer within ``timeout_s`` and have every topic of ``topics``."""
    jvm: Any = spark.sparkContext._jvm
    properties = jvm.java.util.Properties()
    for key, value in settings.items():  # source.kafka.* as Spark's source gets them
        if key.startswith("kafka."):
            properties.put(key.removeprefix("kafka."), value)
    millis = str(int(timeout_s * 1000))
    for key, value in {"bootstrap.servers": brokers, "request.timeout.ms": millis}.items():
        properties.put(key, value)
    properties.putIfAbsent("default.api.timeout.ms", millis)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(properties)
    try:
        listed = admin.listTopics().names()
        names = set(listed.get(int(timeout_s * 1000), jvm.java.util.concurrent.TimeUnit.MILLISECONDS))
    except Exception as exc:  # py4j carries Java's TimeoutException and ExecutionException alike
        from cdc_spark.failures import reason

        raise UnavailableError(
            f"kafka: no broker of {brokers} answered within {timeout_s:g} s (--broker-timeout): "
            f"{redact_text(reason(exc), settings)}"
        ) from None
    finally:
        admin.close(jvm.java.time.Duration.ofSeconds(1))
    missing = [topic for topic in topics if topic not in names]
    if missing:
        raise ConfigError(f"kafka: no topic {', '.join(missing)} on {brokers}: check --source")


def quiet_logs(spark: SparkSession, debug: bool) -> None:
    """Spark's and the Kafka clients' log lines off the console, and py4j's log of a failed ``foreachBatch`` call:
    a failure is reported as one line, and ``--debug`` prints it whole (with these logs kept)."""
    if debug:
        return
    py4j = logging.getLogger("py4j")
    py4j.addHandler(logging.NullHandler())
    py4j.propagate = False
    spark.sparkContext.setLogLevel("OFF")  # a failed query logs its Java trace, a failed task its Python one


__all__ = ["DEFAULT_BROKER_TIMEOUT_S", "check_kafka_topics", "kafka_source_defaults", "quiet_logs"]
