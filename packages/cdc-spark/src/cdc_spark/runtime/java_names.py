"""Java classes and static methods reached from Python by their full names, with no lookup round trip.

``spark._jvm.scala.Option`` resolves one dotted part per py4j round trip, and the JVM answers a part that is a
package (``scala``, ``org``, ``org.apache``...) only after failing to load it as a class from every jar on the class
path. A T = 50 batch made 7,263 such lookups (6.1 s of its threads' time), and in a Java Flight Recorder profile of
the driver they were a sixth of the py4j threads' samples. A class named here in full is made on the Python side
(py4j's ``JavaClass``, kept per gateway): a constructor call is then one round trip, and a static method (py4j's
``JavaMember`` with the static target) is called in one, with no reflection before it.

PySpark itself looks its helpers up the same way on every call: ``F.col(name)`` asks the JVM view for
``functions`` (a name the JVM tries as a class of the default package and then under each of PySpark's star imports,
each miss a search of every jar), then for the method ``col``, and only then calls it: three round trips for one.
:func:`keep_pyspark_names` resolves those names once per gateway, as py4j would, and keeps each method found.
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
_KEPT_NAMES: Final = "_cdc_kept_names"  # on a JVM view: the gateway client its names were kept for


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


# The names PySpark's Python code looks up on the JVM view per call, most first (counted over decode tests: the
# functions by either name about three lookups in four, PythonUtils one in seven)
PYSPARK_NAMES: Final = (
    "org.apache.spark.sql.functions",
    "functions",
    "PythonUtils",
    "PythonSQLUtils",
    "org.apache.spark.sql.classic.SparkSession",
    "SimplePythonFunction",
    "org.apache.spark.sql.execution.python.UserDefinedPythonFunction",
    "PythonRDD",
    "SerDeUtil",
)


def _kept_members_class() -> type:
    from py4j.java_gateway import JavaClass, JavaMember

    class KeptMembers(JavaClass):  # type: ignore[misc]
        """py4j's ``JavaClass`` that keeps each static method it finds: looked up in the JVM once, not per call
        (a static field is read each time, as its value may change)."""

        def __getattr__(self, name: str) -> Any:
            found = super().__getattr__(name)
            if isinstance(found, JavaMember):
                self.__dict__[name] = found
            return found

    return KeptMembers


def keep_pyspark_names(jvm: Any) -> None:
    """Give ``jvm`` (PySpark's py4j ``JVMView``) each of :data:`PYSPARK_NAMES` as the class py4j resolves it to,
    kept on the view, whose static methods are looked up once: PySpark's calls then find them on the Python side.
    A name py4j resolves to no class (a package, another Spark) is left to py4j."""
    from py4j.java_gateway import JavaClass, JVMView

    if not isinstance(jvm, JVMView) or vars(jvm).get(_KEPT_NAMES) is jvm._gateway_client:
        return
    kept = _kept_members_class()
    for name in PYSPARK_NAMES:
        found = JVMView.__getattr__(jvm, name)  # py4j's own resolution, once
        if isinstance(found, JavaClass):
            setattr(jvm, name, kept(found._fqn, jvm._gateway_client))
    setattr(jvm, _KEPT_NAMES, jvm._gateway_client)


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


__all__ = ["PYSPARK_NAMES", "java_array", "java_class", "keep_pyspark_names", "option", "static_method"]
