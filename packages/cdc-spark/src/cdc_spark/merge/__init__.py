"""The merge plan of apply, independent of any table format: specs, batch preparation, SCD1 and SCD2
resolution, schema evolution rules and the SQL both table formats run.

Sinks (:mod:`cdc_spark.sinks`) build on this package; nothing here imports them.
"""

from cdc_spark.merge.batch import BatchSummary, Sequence
from cdc_spark.merge.evolution import SchemaEvolutionError, is_widening
from cdc_spark.merge.spec import CHANGE_OPS, DEFAULT_TOMBSTONE_RETENTION, ApplySpec, build_spec, data_columns

__all__ = [
    "CHANGE_OPS",
    "DEFAULT_TOMBSTONE_RETENTION",
    "ApplySpec",
    "BatchSummary",
    "SchemaEvolutionError",
    "Sequence",
    "build_spec",
    "data_columns",
    "is_widening",
]
