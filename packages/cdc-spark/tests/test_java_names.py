"""Java classes and static methods by their full names: the same objects as py4j's lookup, one round trip a call;
PySpark's own helpers found on the Python side after their first use."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from cdc_spark.runtime.java_names import PYSPARK_NAMES, java_class, keep_pyspark_names, option, static_method


@contextlib.contextmanager
def round_trips(jvm: Any) -> Iterator[list[str]]:
    """The py4j commands this thread sends while the block runs (their first two lines)."""
    connection = jvm._gateway_client.get_thread_connection()
    sent: list[str] = []
    original = connection.send_command

    def counted(command: str) -> Any:
        sent.append("|".join(command.split("\n")[:2]))
        return original(command)

    connection.send_command = counted
    try:
        yield sent
    finally:
        del connection.send_command


def test_a_static_method_is_called_in_one_round_trip(spark: Any) -> None:
    jvm = spark._jvm
    static_method(jvm, "java.lang.Integer", "toHexString")(1)  # this thread's connection made
    with round_trips(jvm) as sent:
        text = static_method(jvm, "java.lang.Integer", "toHexString")(255)
    assert text == "ff"
    assert len(sent) == 1, sent
    with round_trips(jvm) as looked_up:  # what the dotted lookup costs, for contrast
        jvm.java.lang.Integer.toHexString(255)
    assert len(looked_up) > 3, looked_up


def test_a_class_is_constructed_in_one_round_trip_and_kept(spark: Any) -> None:
    jvm = spark._jvm
    assert java_class(jvm, "java.util.ArrayList") is java_class(jvm, "java.util.ArrayList")
    with round_trips(jvm) as sent:
        made = java_class(jvm, "java.util.ArrayList")()
    assert len(sent) == 1, sent
    made.add("a")
    assert made.getClass().getName() == "java.util.ArrayList" and made.size() == 1


def test_a_nested_class_and_a_field_are_reached_by_their_full_names(spark: Any) -> None:
    jvm = spark._jvm
    entry = java_class(jvm, "java.util.AbstractMap$SimpleEntry")("k", 1)
    assert (entry.getKey(), entry.getValue()) == ("k", 1)
    assert java_class(jvm, "org.apache.spark.sql.SaveMode").Overwrite.name() == "Overwrite"


def test_an_option_of_none_is_empty_and_of_a_value_is_defined(spark: Any) -> None:
    jvm = spark._jvm
    assert option(jvm, None).isEmpty()
    some = option(jvm, "x")
    assert some.isDefined() and some.get() == "x"


def test_a_name_that_is_no_class_fails_when_called(spark: Any) -> None:
    from py4j.protocol import Py4JError

    with pytest.raises(Py4JError):
        static_method(spark._jvm, "cdc.no.SuchClass", "of")()


def test_pyspark_functions_are_called_in_one_round_trip_each(spark: Any) -> None:
    from pyspark.sql import functions as F

    jvm = spark._jvm  # the suite's session came from build_session, which keeps the names
    F.col("id"), F.lit(1), F.upper(F.col("id"))  # each method looked up once, on first use
    with round_trips(jvm) as sent:
        total = F.col("id") + F.lit(1)
        upper = F.upper(F.col("id").cast("string"))
    # col, lit, plus; col, cast, upper: py4j's lookups gave col and lit three round trips each, upper two
    assert len(sent) == 6, sent
    assert [tuple(r) for r in spark.range(2).select(total, upper).collect()] == [(1, "0"), (2, "1")]


def test_the_kept_names_are_the_classes_py4j_resolves_them_to(spark: Any) -> None:
    from py4j.java_gateway import JVMView

    jvm = spark._jvm
    keep_pyspark_names(jvm)  # a second time: nothing changes
    for name in PYSPARK_NAMES:
        kept = vars(jvm)[name]
        assert kept._fqn == JVMView.__getattr__(jvm, name)._fqn, name
        assert kept is getattr(jvm, name)
