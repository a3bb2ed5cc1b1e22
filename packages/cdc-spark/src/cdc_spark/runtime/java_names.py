"""Java classes and static methods reached from Python by their full names, with no lookup round trip.

``spark._jvm.scala.Option`` resolves one dotted part per py4j round trip, and the JVM answers a part that is a
package (``scala``, ``org``, ``org.apache``...) only after failing to load it as a class from every jar on the class
path. A T = 50 batch made 7,263 such lookups (6.1 s of its threads' time), and in a Java Flight Recorder profile of
the driver they were a sixth of the py4j threads' samples. A class named here in full is made on the Python side
(py4j's ``JavaClass``, kept per gateway): a constructor call is then one round trip, and a static method (py4j's
``JavaMember`` with the static target) is called in one, with no reflection before it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_KEPT: Final[dict[tuple[int, str], Any]] = {}
_LOCK: Final = threading.Lock()
_STATIC: Final = "z:"  # py4j's prefix of a static target


def java_class(jvm: Any, name: str) -> Any:
    """The Java class ``name`` (full, with ``$`` for a nested or Scala object class) of the gateway behind ``jvm``
    (a py4j ``JVMView``): call it to construct, read its members as py4j's own lookup would."""
    from py4j.java_gateway import JavaClass

    client = jvm._gateway_client
    key = (id(client), name)
    found = _KEPT.get(key)
    if found is None or found._gateway_client is not client:
        found = JavaClass(name, client)
        with _LOCK:
            _KEPT[key] = found
    return found


def static_method(jvm: Any, class_name: str, method: str) -> Any:
    """The static method ``method`` of the Java class ``class_name``, to call (one round trip a call)."""
    from py4j.java_gateway import JavaMember

    client = jvm._gateway_client
    key = (id(client), f"{class_name}#{method}")
    found = _KEPT.get(key)
    if found is None or found.gateway_client is not client:
        found = JavaMember(method, None, _STATIC + class_name, client)
        with _LOCK:
            _KEPT[key] = found
    return found


def java_array(spark: SparkSession, element: str, values: Sequence[Any]) -> Any:
    """A Java array of ``element`` (a primitive's name, ``int``, or a full class name) holding ``values``."""
    array = spark.sparkContext._gateway.new_array(  # type: ignore[union-attr]
        java_class(spark._jvm, element), len(values)
    )
    for i, value in enumerate(values):
        array[i] = value
    return array


def option(jvm: Any, value: Any) -> Any:
    """Scala's ``Option`` of ``value``: ``None`` for None (Java's null), else ``Some``."""
    return static_method(jvm, "scala.Option", "apply")(value)


__all__ = ["java_array", "java_class", "option", "static_method"]
