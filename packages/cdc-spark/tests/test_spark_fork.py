"""A child forked from a process with a Spark session (as mutation testing forks one per mutant) releases the JVM
objects it made, and never one its parent made (cdc_testing.spark_fork)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from cdc_testing.spark_fork import object_number

pytestmark = pytest.mark.spark


def _in_child(spark: Any, held: list[Any]) -> str:
    """Fork; the child takes its own connection, makes a JVM object, drops it and its copy of the parent's objects
    in ``held``, waits until the JVM knows, and reports the id of what it made and whether it settled."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        status = 1
        try:
            from cdc_testing.spark_fork import own_connection, release_dropped

            os.close(read_end)
            own_connection()
            made = spark._jvm.java.util.ArrayList()
            made.add("from the child")
            target_id = made._target_id
            del made
            held.clear()
            settled = release_dropped(timeout=20)
            os.write(write_end, f"{target_id} {settled}".encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end) as reply:
        answer = reply.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, answer
    return answer


def test_a_forked_child_releases_the_jvm_objects_it_made_and_only_those(spark: Any) -> None:
    from py4j.java_gateway import JavaObject
    from py4j.protocol import Py4JError

    gateway = spark.sparkContext._gateway
    held = [spark._jvm.java.util.ArrayList()]
    held[0].add("from the parent")

    target_id, settled = _in_child(spark, held).split()

    assert settled == "True"
    number = object_number(target_id)
    assert number is not None and number > (object_number(held[0]._target_id) or 0)
    # the child dropped its copy of the parent's object: the parent's is still there
    assert held[0].get(0) == "from the parent"
    # the child's own object is gone from the JVM
    with pytest.raises(Py4JError, match="does not exist"):
        JavaObject(target_id, gateway._gateway_client).size()
