"""Spark's expressions interpreted for work on few rows, compiled for work on many.

Outside whole-stage code generation (wide rows, object operators, Delta's log replay, checkpointed frames read
back, the writers' statistics), Spark builds a projection, ordering or predicate for each task by generating its
Java source; the compiled class is cached, but the source is generated again in every task. On a micro-batch of a
few hundred changes into small tables that generation is most of what the executors do, so such work runs with
Spark's interpreted expressions (``spark.sql.codegen.factoryMode=NO_CODEGEN``; whole-stage code generation is
left as it is). Interpreted expressions cost more per row, so work that reads many rows stays compiled.

Measured on the 2-core machine (``benchmarks/bench_spark_apply_tables.py`` small batches and throwaway runs, two
job runs interleaved in one session): batches of 99 Canal-JSON changes over 3 tables took 2.80 s interpreted
against 3.39 s compiled on Delta, 2.10 s against 2.34 s on Iceberg; 100 changes into one table of 10,000 rows
2.55 s against 3.10 s, of 50,000 rows 4.25 s against 3.37 s, of 300,000 rows 12.2 s against 5.3 s. Hence
:data:`INTERPRETED_ROWS`.

A ``spark.sql.codegen.factoryMode`` in the Spark configuration (``--conf``) is the user's choice and is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from cdc_spark.session_conf import session_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FACTORY_MODE: Final = "spark.sql.codegen.factoryMode"
# Work that reads fewer rows than this (a batch's messages; a table's stored keys and changes) is interpreted.
INTERPRETED_ROWS: Final = 20_000
INTERPRETED: Final = "NO_CODEGEN"
COMPILED: Final = "FALLBACK"  # Spark's default: compiled, interpreted only where compiling fails


def expression_mode(rows: int | None) -> str:
    """The factory mode for work reading ``rows`` rows (None: not known, so compiled)."""
    return INTERPRETED if rows is not None and rows < INTERPRETED_ROWS else COMPILED


def chosen_by_user(spark: SparkSession) -> bool:
    """Whether the Spark configuration names a factory mode (the session's own settings are the job's)."""
    conf: Any = spark.sparkContext._conf
    return conf.get(FACTORY_MODE) is not None


@contextmanager
def expressions_for(spark: SparkSession, rows: int | None) -> Iterator[None]:
    """``spark`` runs the block's queries with the expressions :func:`expression_mode` gives for ``rows``; the
    setting is restored afterwards. Nothing changes when the user chose a mode."""
    if chosen_by_user(spark):
        yield
        return
    with session_conf(spark, {FACTORY_MODE: expression_mode(rows)}):
        yield


__all__ = ["COMPILED", "FACTORY_MODE", "INTERPRETED", "INTERPRETED_ROWS", "expression_mode", "expressions_for"]
