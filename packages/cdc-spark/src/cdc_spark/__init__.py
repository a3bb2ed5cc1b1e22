"""cdc on Spark: decode Kafka change messages into typed change frames and apply them to tables.

The public API (everything else is private and free to move):

* :func:`decode` and :class:`DecodedChanges`: Kafka-shaped rows in, typed change frames, control rows and dead
  letters out, parsed and typed in the JVM where the protocol allows (docs/spark-source-decode.md); a
  :class:`Decoder` owns what decoding keeps from one batch to the next;
* :func:`apply_changes`, :class:`Sink` and :class:`BatchInfo`: one batch of one table applied to a target;
* :func:`build_session`: a SparkSession with the pinned Kafka, Avro, Delta Lake and Iceberg connectors;
* :mod:`cdc_spark.job`: the streaming pipeline behind ``cdc apply``;
* :class:`Settings` and :func:`run_settings`: ``cdc apply``'s settings (flags, a TOML or YAML file, or keywords) and
  the run they describe (:mod:`cdc_spark.config`).
"""

from importlib.metadata import version

from cdc_spark.apply import apply_changes
from cdc_spark.config import Settings
from cdc_spark.config import run as run_settings
from cdc_spark.decoding import DecodedChanges, Decoder, decode
from cdc_spark.runtime.worker_imports import settle_worker
from cdc_spark.session import build_session
from cdc_spark.sinks import BatchInfo, Sink

settle_worker()  # a worker unpickling any of the package's functions sheds a fixed cost of each later task

__version__ = version("cdc-spark")  # the repository's VERSION file, through the package metadata

__all__ = [
    "BatchInfo",
    "DecodedChanges",
    "Decoder",
    "Settings",
    "Sink",
    "apply_changes",
    "build_session",
    "decode",
    "run_settings",
]
