"""Spark's and py4j's errors as the project's typed errors, at the boundary where they reach the driver.

A failure reaches ``cdc apply`` wrapped by Spark: a typed error raised in an executor (a bad message line, a
registry that is down) comes back as a ``PythonException`` holding its traceback as text; a JVM failure (Kafka
unreachable, a target that cannot be written) as a ``CapturedException`` or ``Py4JJavaError`` with the Java
trace. :func:`typed` finds the cause in that text and returns one error of the tree (:mod:`cdc_core.errors`) whose
kind (:class:`~cdc_core.errors.Fault`) says whether the run may retry it and which exit code it ends with, and
whose message is one readable line; the original stays its ``__cause__`` for ``--debug``.
"""

from __future__ import annotations

import importlib
import re
from typing import Final

from cdc_core.errors import (
    CdcError,
    ConfigError,
    DataError,
    Fault,
    StorageUnavailableError,
    UnavailableError,
)


class SparkError(CdcError, RuntimeError):
    """A Spark failure the project has no better name for (a bug, or a cause not mapped yet): its first line."""

    fault = Fault.INTERNAL


# the last line of a Python traceback raised by one of the project's errors: "cdc_core.errors.DecodeError: ..."
_PYTHON_ERROR: Final = re.compile(r"^(cdc_[a-z_]+(?:\.[a-z_]+)*)\.([A-Z]\w*): (.+)$", re.MULTILINE)
# Java causes by what they say, first match wins: (markers, kind, what to say)
_JAVA_CAUSES: Final = (
    (
        ("java.lang.OutOfMemoryError",),
        ConfigError,
        "the JVM ran out of memory: give it more (--conf spark.driver.memory=4g on a local master, "
        "spark.executor.memory on a cluster) or read less a batch",
    ),
    (
        ("UnknownTopicOrPartitionException",),
        ConfigError,
        "kafka: a source topic does not exist: check --source",
    ),
    (
        (
            "Timed out waiting for a node assignment",
            "org.apache.kafka.common.errors.TimeoutException",
            "org.apache.kafka.common.errors.DisconnectException",
            "org.apache.kafka.common.errors.NetworkException",
        ),
        UnavailableError,
        "kafka: the brokers did not answer in time",
    ),
    (
        ("java.nio.file.AccessDeniedException", "AccessControlException", "Permission denied"),
        ConfigError,
        "permission denied writing the tables or the checkpoint: check --target and --checkpoint",
    ),
    (
        ("ParentNotDirectoryException", "FileAlreadyExistsException", "Mkdirs failed", "Not a directory"),
        ConfigError,
        "the tables or the checkpoint cannot be created there (a file is in the way): check --target and --checkpoint",
    ),
    (
        ("java.net.ConnectException", "java.net.UnknownHostException", "java.net.SocketTimeoutException"),
        UnavailableError,
        "a service did not answer",
    ),
    (("java.sql.SQLException", "java.sql.SQLTransient"), UnavailableError, "the catalog's database failed"),
    (("java.io.IOException",), StorageUnavailableError, "reading or writing storage failed"),
)
# typed errors rebuilt from text take the base class of their kind (their own constructors want more than text)
_BY_FAULT: Final[dict[Fault, type[CdcError]]] = {
    Fault.DATA: DataError,
    Fault.USAGE: ConfigError,
    Fault.INFRASTRUCTURE: UnavailableError,
}


def _text(error: BaseException) -> str:
    """Everything the error says: its message, and the JVM's trace where Spark captured one."""
    parts = [str(getattr(error, "_desc", "") or error)]
    trace = getattr(error, "_stackTrace", None)
    if isinstance(trace, str):
        parts.append(trace)
    return "\n".join(parts)


def _python_error(text: str) -> CdcError | None:
    """The last of the project's errors in a Python traceback quoted by ``text``, rebuilt with its message."""
    for match in reversed(list(_PYTHON_ERROR.finditer(text))):
        module, name, message = match.groups()
        try:
            kind = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(kind, type) and issubclass(kind, CdcError):
            rebuilt = _BY_FAULT.get(kind.fault, SparkError)
            return rebuilt(message.strip())
    return None


_PY4J_CALL: Final = re.compile(r":?\s*An error occurred while calling [\w.$]+\.?")


def _first_line(text: str) -> str:
    """The first line that says something (py4j's "An error occurred while calling o123.save" says nothing)."""
    for raw in text.splitlines():
        line = _PY4J_CALL.sub("", raw).strip().rstrip(":").strip()
        if line and not line.startswith(("Traceback", "===", "JVM stacktrace")):
            return line[:500]
    return "(no message)"


_EXCEPTION_NAME: Final = re.compile(r"(?:[\w$]+\.)+[\w$]*(?:Exception|Error): ")


def _innermost(line: str) -> str:
    """``a.Exception: b.TimeoutException: Timed out ...`` -> ``Timed out ...``: the deepest cause's own words."""
    parts = [part.strip() for part in _EXCEPTION_NAME.split(line) if part.strip()]
    return parts[-1] if parts else line.strip()


def reason(error: BaseException) -> str:
    """What a Spark or py4j error says, in one line: its deepest cause's message (no class names, no trace)."""
    text = _text(error)
    line = next((ln for ln in text.splitlines() if "Exception: " in ln or "Error: " in ln), _first_line(text))
    return _innermost(_PY4J_CALL.sub("", line))[:300]


def _java_cause(text: str) -> CdcError | None:
    for markers, kind, what in _JAVA_CAUSES:
        marker = next((m for m in markers if m in text), None)
        if marker is None:
            continue
        line = next((ln.strip() for ln in text.splitlines() if marker in ln), marker)
        return kind(f"{what} ({_innermost(_PY4J_CALL.sub('', line))[:300]})")
    return None


def typed(error: BaseException) -> BaseException:
    """``error`` as the project's typed error where one fits (itself when it is one already, or when it is not
    Spark's); Spark's errors with no better name become a one-line :class:`SparkError`.

    A typed error that only wraps Spark's (``StorageError(f"cannot append ...: {exc}")`` at a sink) takes the kind
    of Spark's cause where that says more (a path in the way is a wrong setting, a store that fails a service
    fault), and the first line of its own message."""
    if isinstance(error, CdcError):
        cause = error.__cause__
        if cause is None or not _from_spark(cause):
            return error
        kind = _java_cause(_text(cause))
        if kind is None:
            return error
        found: CdcError = type(kind)(f"{_first_line(str(error))}: {kind}")
    elif _from_spark(error):
        text = _text(error)
        found = _python_error(text) or _java_cause(text) or SparkError(f"Spark: {_first_line(text)}")
    else:
        return error
    found.__cause__ = error
    return found


def _from_spark(error: BaseException) -> bool:
    module = type(error).__module__
    return module.startswith(("pyspark", "py4j"))


__all__ = ["SparkError", "reason", "typed"]
