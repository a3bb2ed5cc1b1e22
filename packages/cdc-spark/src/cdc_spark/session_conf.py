"""Session settings for a block of work, restored afterwards: the sinks' MERGE options, the decode's caches; and
frames as temporary views for the statements of a block."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


# Off while a MERGE or a resolve is planned: on a wide table it grows the resolve's write flags into Or trees whose
# canonical forms exhaust the driver's heap, and the plans gain nothing from the constraints it would infer.
CONSTRAINT_PROPAGATION: Final = "spark.sql.constraintPropagation.enabled"


@contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in the session while the block runs, then each key as it was (unset if it was)."""
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


@contextmanager
def temporary_views(spark: SparkSession, *frames: DataFrame, prefix: str) -> Iterator[tuple[str, ...]]:
    """``frames`` as temporary views of names of their own (``prefix`` and a random part) while the block runs,
    dropped from ``spark`` after it. A statement planned in the block keeps their plans once the views are gone.

    The views are dropped from the session's catalog alone: ``spark.catalog.dropTempView`` (and ``DROP VIEW``) also
    uncaches every cached plan equal to the view's, so a caller's ``frame.cache()`` would be freed by the first
    statement over it and every later read would compute the frame again from its source."""
    names = tuple(f"{prefix}_{uuid.uuid4().hex}" for _ in frames)
    for name, frame in zip(names, frames, strict=True):
        frame.createOrReplaceTempView(name)
    try:
        yield names
    finally:
        catalog = session_catalog(spark)
        for name in names:
            catalog.dropTempView(name)


def session_catalog(spark: SparkSession) -> Any:
    """``spark``'s session catalog (a JVM object): its ``dropTempView`` drops a view and leaves the cache alone."""
    jsession: Any = spark._jsparkSession
    return jsession.sessionState().catalog()


def union_all(frames: Sequence[DataFrame], prefix: str) -> DataFrame:
    """The rows of ``frames`` (one session, the same column names) as one frame, by name, analysed once: a union
    grown a frame at a time is analysed again at every step (seconds for a batch of fifty tables)."""
    spark = frames[0].sparkSession
    columns = ", ".join("`" + name.replace("`", "``") + "`" for name in frames[0].columns)
    with temporary_views(spark, *frames, prefix=prefix) as views:
        return spark.sql(" UNION ALL ".join(f"SELECT {columns} FROM {view}" for view in views))


__all__ = ["CONSTRAINT_PROPAGATION", "session_catalog", "session_conf", "temporary_views", "union_all"]
