"""Decode Kafka-shaped change messages into typed change frames: the JVM where it can, the codec for the rest.

``decode(df, protocol, options=None, schemas=None)`` returns :class:`DecodedChanges` whatever the path (see
docs/spark-source-decode.md). Plans: ``jvm`` (the default) parses and types every message it can with Spark's own
functions (:mod:`cdc_spark.decoding.jvm`) and hands the residue to the protocol's codec in the executors;
``python`` decodes every message with the codec (:mod:`cdc_spark.decoding.python_path`), the reference the JVM
path is tested against; ``driver`` runs the same codec on the driver over the messages collected, for a batch known
to be small. A protocol without JVM rules uses ``python`` for ``jvm``. What a decode keeps for the next batch
(built expressions, described shapes, checked options) belongs to a :class:`Decoder`: the application's own unless
one is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from cdc_core.schema import TableSchema
from cdc_spark.decoding.contract import DecodedChanges
from cdc_spark.decoding.decoder import PLANS, Decoder
from cdc_spark.partition_clock import PartitionKey

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def decode(
    df: DataFrame,
    protocol: str,
    options: Mapping[str, object] | None = None,
    schemas: Mapping[tuple[str, str], TableSchema] | None = None,
    *,
    plan: str = "jvm",
    time_as: str = "interval",
    partition_ts: Mapping[PartitionKey, int] | None = None,
    known_versions: Sequence[TableSchema] = (),
    decoder: Decoder | None = None,
) -> DecodedChanges:
    """Decode ``df`` (the columns of Spark's Kafka source) into the change-frame contract.

    ``schemas``: the newest schema of each table from earlier batches (types rows whose messages carry none).
    ``partition_ts``: the previous batch's :meth:`DecodedChanges.partition_commit_ts`, so that changes without a
    commit ts (TiCDC Avro's tombstone deletes) are ordered after what preceded them. ``known_versions``: every
    schema version earlier batches brought (BOOTSTRAP, DDL), for protocols whose rows name a version (Simple).
    ``time_as``: ``interval`` (TIME as ``interval day to second``) or ``string`` (TiDB's text). ``decoder``: whose
    caches serve (default: :meth:`Decoder.shared`, the Spark application's).
    """
    chosen = decoder if decoder is not None else Decoder.shared(df.sparkSession)
    return chosen.decode(df, protocol, options, schemas, plan=plan, time_as=time_as, partition_ts=partition_ts,
                         known_versions=known_versions)  # fmt: skip


__all__ = ["PLANS", "DecodedChanges", "Decoder", "decode"]
