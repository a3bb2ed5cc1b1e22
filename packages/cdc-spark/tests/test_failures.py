"""Spark's and py4j's errors as the project's typed errors (texts as Spark words them; the errors themselves are
raised for real in test_apply_failures.py and test_soak.py)."""

from __future__ import annotations

import pytest

from cdc_core.errors import ConfigError, DataError, Fault, UnavailableError, fault_of
from cdc_spark.failures import SparkError, _innermost, _java_cause, _python_error

WORKER_TRACEBACK = (
    "An exception was thrown from the Python worker. Please see the stack trace below.\n"
    "Traceback (most recent call last):\n"
    '  File "/x/python_path.py", line 171, in _first_pass_rows\n'
    "    events = decoders.decode(message)\n"
    "cdc_avro.errors.RegistryUnavailableError: avro: schema registry http://r:8081: fetch schema id 5 failed after "
    "2 attempt(s): refused\n"
)


def test_a_typed_error_raised_in_an_executor_keeps_its_kind_and_message() -> None:
    found = _python_error(WORKER_TRACEBACK)
    assert isinstance(found, UnavailableError) and fault_of(found) is Fault.INFRASTRUCTURE
    assert str(found).startswith("avro: schema registry http://r:8081: fetch schema id 5 failed after 2 attempt(s)")
    line = "cdc_core.messagelines.MessageLineError: /in/zz.jsonl:2 field value: must be a string or null"
    assert isinstance(_python_error(f"Traceback ...\n{line}\n"), DataError)
    assert _python_error("builtins.KeyError: 'x'\nValueError: no") is None  # not the project's: no better name


@pytest.mark.parametrize(
    ("text", "kind", "says"),
    [
        ("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: Timed out "
         "waiting for a node assignment. Call: listTopics", UnavailableError, "kafka: the brokers did not answer"),
        ("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host it",
         ConfigError, "a source topic does not exist"),
        ("org.apache.hadoop.fs.ParentNotDirectoryException: /tmp/file (is not a directory)", ConfigError,
         "check --target"),
        ("java.io.IOException: Connection reset by peer", UnavailableError, "reading or writing storage failed"),
        # as Spark 4.1 words a task that ran out of heap (a 257 MB file read whole, when the file source did)
        ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, "
         "most recent failure: Lost task 0.0 in stage 0.0 (TID 0) (192.0.2.2 executor driver): scala.MatchError: "
         "java.lang.OutOfMemoryError: Java heap space (of class java.lang.OutOfMemoryError)", ConfigError,
         "the JVM ran out of memory: give it more (--conf spark.driver.memory"),
    ],
)  # fmt: skip
def test_java_causes_by_what_they_say(text: str, kind: type, says: str) -> None:
    found = _java_cause(f"An error occurred while calling o12.save.\n: {text}\n\tat some.Frame(Frame.java:1)")
    assert isinstance(found, kind) and says in str(found)
    assert "\tat " not in str(found) and "o12.save" not in str(found)


def test_the_innermost_cause_speaks() -> None:
    line = "a.b.ExecutionException: org.x.TimeoutException: Timed out waiting. Call: listTopics"
    assert _innermost(line) == "Timed out waiting. Call: listTopics"
    assert fault_of(SparkError("x")) is Fault.INTERNAL
