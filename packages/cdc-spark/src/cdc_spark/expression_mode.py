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

A batch of many tables is wide as well as long: its decode keeps a struct column per table, past what whole-stage
generation takes, so every task generates the source of projections that grow with the tables. Its decode and
summary are therefore interpreted up to :data:`INTERPRETED_ROWS_A_TABLE` rows per table: the decode's choice goes
by the tables of the batch before it (a changefeed's tables change little from one batch to the next, and they are
known only once decoded), the summary's by the batch's own. Measured at 200 tables (a throwaway script over
``bench_spark_apply_tables.py``'s changefeed, batches alternating in one session): 50,000 messages decoded and each
table's frame written in 14.8-16.1 s interpreted against 73.3-86.7 s compiled.

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


# ... and work over many tables at once, fewer than this many rows per table: a task's generated source grows with
# the tables (about 45 ms a table a batch at 200 tables), interpreting costs per row (about 20 us more)
INTERPRETED_ROWS_A_TABLE: Final = 2_000


def expression_mode(rows: int | None, tables: int | None = None) -> str:
    """The factory mode for work reading ``rows`` rows (None: not known, so compiled), of ``tables`` tables at once
    where given (a batch's decode and summary; one table's work goes by its rows alone)."""
    if rows is None:
        return COMPILED
    line = INTERPRETED_ROWS if tables is None else max(INTERPRETED_ROWS, INTERPRETED_ROWS_A_TABLE * tables)
    return INTERPRETED if rows < line else COMPILED


def chosen_by_user(spark: SparkSession) -> bool:
    """Whether the Spark configuration names a factory mode (the session's own settings are the job's)."""
    conf: Any = spark.sparkContext._conf
    return conf.get(FACTORY_MODE) is not None


@contextmanager
def expressions_for(spark: SparkSession, rows: int | None, tables: int | None = None) -> Iterator[None]:
    """``spark`` runs the block's queries with the expressions :func:`expression_mode` gives for ``rows`` of
    ``tables`` tables; the setting is restored afterwards. Nothing changes when the user chose a mode."""
    if chosen_by_user(spark):
        yield
        return
    with session_conf(spark, {FACTORY_MODE: expression_mode(rows, tables)}):
        yield


__all__ = [
    "COMPILED",
    "FACTORY_MODE",
    "INTERPRETED",
    "INTERPRETED_ROWS",
    "INTERPRETED_ROWS_A_TABLE",
    "expression_mode",
    "expressions_for",
]
