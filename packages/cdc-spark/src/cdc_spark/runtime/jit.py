"""Whether the JVMs that run the decode compile Spark's large generated methods.

HotSpot leaves a method of more than 8,000 bytes of bytecode to the interpreter unless started with
``-XX:-DontCompileHugeMethods``. A whole-stage generated ``processNext`` that types every column of every table of a
batch is such a method: interpreted, it was 11% of a Canal-JSON decode's executor samples. :func:`build_session`
(``cdc_spark.session``) starts the JVMs of a local master with the option; a cluster's JVMs, or a session started
elsewhere, may not have it, and the decode then plans its typing without whole-stage code generation (small methods
the JIT compiles either way).

Measured, 400,000 Canal-JSON messages typed on ``local[2]``: 5.3 s by default, 4.2 s without whole-stage code
generation, 3.5 s with the option (4.0 s with both).
"""

from __future__ import annotations

import shlex
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from cdc_spark.runtime.masters import runs_in_driver

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

COMPILE_HUGE_METHODS: Final = "-XX:-DontCompileHugeMethods"
EXECUTOR_OPTIONS: Final = "spark.executor.extraJavaOptions"
_SWITCH: Final = "DontCompileHugeMethods"
# Per SparkContext (one per application; gone with it): whether its executors compile huge methods
_ANSWERS: Final[weakref.WeakKeyDictionary[SparkContext, bool]] = weakref.WeakKeyDictionary()


def compiles_huge_methods(options: Iterable[str]) -> bool:
    """Whether JVM ``options`` (in order; the last one given wins, as in HotSpot) compile huge methods."""
    compiled = False
    for option in options:
        if option == f"-XX:-{_SWITCH}":
            compiled = True
        elif option == f"-XX:+{_SWITCH}":
            compiled = False
    return compiled


def with_huge_methods(options: str | None) -> str:
    """``options`` (a JVM option string, or none) with huge methods compiled."""
    return f"{options} {COMPILE_HUGE_METHODS}" if options else COMPILE_HUGE_METHODS


def executors_compile_huge_methods(spark: SparkSession) -> bool:
    """Whether the session's executors compile huge methods: with a local master they are the driver's JVM (its
    own arguments tell), elsewhere they start with ``spark.executor.extraJavaOptions``. Neither changes while an
    application runs, so the JVM is asked once per application, not at every batch."""
    context = spark.sparkContext
    if (known := _ANSWERS.get(context)) is not None:
        return known
    if runs_in_driver(context.master or ""):
        jvm = context._jvm
        assert jvm is not None
        arguments = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
        answer = compiles_huge_methods(str(argument) for argument in arguments)
    else:
        answer = compiles_huge_methods(shlex.split(context.getConf().get(EXECUTOR_OPTIONS, "") or ""))
    _ANSWERS[context] = answer
    return answer


__all__ = [
    "COMPILE_HUGE_METHODS",
    "EXECUTOR_OPTIONS",
    "compiles_huge_methods",
    "executors_compile_huge_methods",
    "with_huge_methods",
]
