"""cdc on Spark: decode Kafka change messages into typed change frames and apply them to tables.

Entry points: :func:`cdc_spark.apply.apply_changes` (one batch of one table), :mod:`cdc_spark.job` (the
streaming pipeline behind ``cdc apply``), :mod:`cdc_spark.sinks` (Delta via delta-rs, Spark MERGE).
"""

from importlib.metadata import version

__version__ = version("cdc-spark")  # the repository's VERSION file, through the package metadata
