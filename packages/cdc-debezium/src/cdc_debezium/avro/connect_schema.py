"""Kafka Connect schemas and the Avro schemas Connect's Avro converter maps them to, both ways.

The converter (Confluent's ``AvroData`` and Apicurio's copy of it) keeps what Avro has no word for in schema
properties: ``connect.name`` (a logical name such as ``io.debezium.time.MicroTimestamp``), ``connect.version``,
``connect.parameters`` (string pairs such as an Enum's ``allowed``), ``connect.default`` and ``connect.type``
(``int8``/``int16``, which Avro writes as ``int``). An optional schema is the union ``["null", T]`` (``[T,
"null"]`` when its default is not null); a struct is a record named by its Connect name; Connect's Decimal, Date,
Time and Timestamp also carry Avro's logical types.

Connect schemas here are the documents Kafka Connect's JsonConverter writes (``{"type": "int64", "optional":
true, "name": ..., "field": ...}``), so that the Debezium JSON decoder and encoder read and write both forms.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from cdc_core.errors import SchemaError

CONNECT_NAME: Final = "connect.name"
CONNECT_VERSION: Final = "connect.version"
CONNECT_PARAMETERS: Final = "connect.parameters"
CONNECT_DEFAULT: Final = "connect.default"
CONNECT_DOC: Final = "connect.doc"
CONNECT_TYPE: Final = "connect.type"
# TiCDC's Avro protocol keeps the TiDB column type here; the Debezium JSON form has it as the field's tidb_type.
TIDB_TYPE_PARAMETER: Final = "tidb_type"

_PRIMITIVE_TO_CONNECT: Final = {
    "int": "int32",
    "long": "int64",
    "float": "float",
    "double": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
    "fixed": "bytes",
    "enum": "string",
}
_CONNECT_TO_PRIMITIVE: Final = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "long",
    "float": "float",
    "float32": "float",
    "double": "double",
    "float64": "double",
    "boolean": "boolean",
    "string": "string",
    "bytes": "bytes",
}
# Connect's own logical types: Avro's logical type of each, and the Connect name when a schema has only Avro's.
_CONNECT_DECIMAL: Final = "org.apache.kafka.connect.data.Decimal"
_CONNECT_LOGICAL: Final = {
    _CONNECT_DECIMAL: "decimal",
    "org.apache.kafka.connect.data.Date": "date",
    "org.apache.kafka.connect.data.Time": "time-millis",
    "org.apache.kafka.connect.data.Timestamp": "timestamp-millis",
}
_AVRO_LOGICAL: Final = {
    "decimal": _CONNECT_DECIMAL,
    "date": "org.apache.kafka.connect.data.Date",
    "time-millis": "org.apache.kafka.connect.data.Time",
    "timestamp-millis": "org.apache.kafka.connect.data.Timestamp",
    "time-micros": "io.debezium.time.MicroTime",
    "timestamp-micros": "io.debezium.time.MicroTimestamp",
    "uuid": "io.debezium.data.Uuid",
}


# ----------------------------------------------------------------------------------------- Avro to Connect


class _ToConnect:
    """One walk over a writer schema; named types are remembered by full name, as Avro resolves references."""

    def __init__(self) -> None:
        self.named: dict[str, dict[str, Any]] = {}

    def schema(self, avro: Any, namespace: str, *, optional: bool = False) -> dict[str, Any]:
        if isinstance(avro, list):
            return self._union(avro, namespace)
        if isinstance(avro, str):
            if avro in _PRIMITIVE_TO_CONNECT:
                return {"type": _PRIMITIVE_TO_CONNECT[avro], "optional": optional}
            return {**self._reference(avro, namespace), "optional": optional}
        if not isinstance(avro, dict):
            raise SchemaError(f"not an Avro schema: {avro!r}")
        kind = avro.get("type")
        if kind == "record":
            return self._record(avro, namespace, optional)
        if kind == "array":
            return {"type": "array", "optional": optional, "items": self.schema(avro.get("items"), namespace)}
        if kind == "map":
            keys = {"type": "string", "optional": False}
            return {
                "type": "map",
                "optional": optional,
                "keys": keys,
                "values": self.schema(avro.get("values"), namespace),
            }
        if isinstance(kind, list | dict):
            return self.schema(kind, namespace, optional=optional)
        if not isinstance(kind, str) or kind not in _PRIMITIVE_TO_CONNECT:
            raise SchemaError(f"unsupported Avro type {kind!r}")
        connect_type = avro.get(CONNECT_TYPE) if kind == "int" else None
        document: dict[str, Any] = {
            "type": connect_type if connect_type in ("int8", "int16") else _PRIMITIVE_TO_CONNECT[kind],
            "optional": optional,
        }
        _annotate(document, avro)
        logical = avro.get("logicalType")
        if "name" not in document and isinstance(logical, str) and logical in _AVRO_LOGICAL:
            document["name"] = _AVRO_LOGICAL[logical]
            if logical == "decimal":  # an Avro decimal written by another producer: its scale from the schema
                precision = str(avro.get("precision"))
                document["parameters"] = {"scale": str(avro.get("scale", 0)), "connect.decimal.precision": precision}
        if kind in ("enum", "fixed"):  # named: later uses refer to it by name
            self.named[self._define(avro, namespace)[0]] = document
        return document

    def _union(self, branches: list[Any], namespace: str) -> dict[str, Any]:
        types = [b for b in branches if b != "null"]
        if len(types) != 1:
            raise SchemaError(f"union {branches!r} is not a Connect optional schema (null and one type)")
        return self.schema(types[0], namespace, optional=len(types) < len(branches))

    def _define(self, avro: Mapping[str, Any], namespace: str) -> tuple[str, str]:
        """(full name, its namespace) of a named type; a name defined twice is refused (Avro forbids it)."""
        name = avro.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"a named Avro type without a name: {dict(avro)!r}")
        space = avro.get("namespace")
        if "." in name:
            full = name
        else:
            space = space if isinstance(space, str) else namespace
            full = f"{space}.{name}" if space else name
        return full, full.rpartition(".")[0]

    def _reference(self, name: str, namespace: str) -> dict[str, Any]:
        """A later use of a named type. Connect parameters belong to each use of a schema, Avro's properties to
        the one definition: the converter writes a repeated struct (Debezium's Geometry in several columns) as
        references to its first use, whose parameters (a propagated column type and name) are not this use's."""
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        found = self.named.get(full) or self.named.get(name)
        if found is None:
            raise SchemaError(f"Avro type {name!r} is referenced before it is defined")
        return {k: v for k, v in found.items() if k not in ("parameters", "tidb_type")}

    def _record(self, avro: Mapping[str, Any], namespace: str, optional: bool) -> dict[str, Any]:
        full, space = self._define(avro, namespace)
        if full in self.named:
            raise SchemaError(f"Avro record {full} is defined twice")
        fields = avro.get("fields")
        if not isinstance(fields, list):
            raise SchemaError(f"Avro record {full} has no field list")
        document: dict[str, Any] = {"type": "struct", "optional": optional, "name": full}
        _annotate(document, avro)
        self.named[full] = document  # before its fields: a recursive reference finds it
        converted = []
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str):
                raise SchemaError(f"Avro record {full}: a field without a name")
            entry = self.schema(field.get("type"), space)
            if entry.get("optional") is False and field.get("default") is not None and "default" not in entry:
                entry["default"] = field["default"]
            entry["field"] = field["name"]
            converted.append(entry)
        document["fields"] = converted
        return {**document, "optional": optional}


def _annotate(document: dict[str, Any], avro: Mapping[str, Any]) -> None:
    """The Connect name, version, parameters and default kept in ``avro``'s properties, onto ``document``."""
    name = avro.get(CONNECT_NAME)
    if isinstance(name, str):
        document["name"] = name
    version = avro.get(CONNECT_VERSION)
    if isinstance(version, int) and not isinstance(version, bool):
        document["version"] = version
    parameters = avro.get(CONNECT_PARAMETERS)
    if isinstance(parameters, dict):
        tidb_type = parameters.get(TIDB_TYPE_PARAMETER)
        rest = {k: v for k, v in parameters.items() if k != TIDB_TYPE_PARAMETER}
        if isinstance(tidb_type, str):
            document["tidb_type"] = tidb_type
        if rest:
            document["parameters"] = rest
    doc = avro.get(CONNECT_DOC)
    if isinstance(doc, str):
        document["doc"] = doc
    if CONNECT_DEFAULT in avro:
        document["default"] = avro[CONNECT_DEFAULT]


def connect_schema(avro: Any) -> dict[str, Any]:
    """The Connect schema (JsonConverter's document) that ``avro`` (a parsed writer schema) was written from.

    Raises `SchemaError` for what Connect's Avro converter never writes (unions of several types, ...).
    """
    return _ToConnect().schema(avro, "")


def without_logical_types(avro: Any) -> Any:
    """``avro`` with Avro's ``logicalType`` annotations removed, so that a reader returns the raw int, long or
    bytes (Connect's Decimal, Date, Time and Timestamp are read by the same converters as their JSON forms)."""
    if isinstance(avro, list):
        return [without_logical_types(branch) for branch in avro]
    if not isinstance(avro, dict):
        return avro
    return {k: without_logical_types(v) for k, v in avro.items() if k != "logicalType"}


# ----------------------------------------------------------------------------------------- Connect to Avro


class _ToAvro:
    """The Avro schema of a Connect schema, as the converter writes it (the first use of a record defines it,
    later ones name it)."""

    def __init__(self) -> None:
        self.defined: set[str] = set()

    def field_type(self, connect: Mapping[str, Any]) -> Any:
        inner = self.schema(connect)
        if not connect.get("optional", False):
            return inner
        if connect.get("default") is not None:
            return [inner, "null"]
        return ["null", inner]

    def schema(self, connect: Mapping[str, Any]) -> Any:
        kind = connect.get("type")
        name = connect.get("name")
        if kind == "struct":
            return self._record(connect)
        if kind == "array":
            items = connect.get("items")
            if not isinstance(items, Mapping):
                raise SchemaError("a Connect array schema without items")
            return self._named({"type": "array", "items": self.field_type(items)}, connect)
        if kind == "map":
            values = connect.get("values")
            keys = connect.get("keys")
            if not isinstance(values, Mapping) or not isinstance(keys, Mapping) or keys.get("type") != "string":
                raise SchemaError("only Connect maps with string keys are supported")
            return self._named({"type": "map", "values": self.field_type(values)}, connect)
        primitive = _CONNECT_TO_PRIMITIVE.get(kind) if isinstance(kind, str) else None
        if primitive is None:
            raise SchemaError(f"unsupported Connect type {kind!r}")
        document: dict[str, Any] = {"type": primitive}
        if kind in ("int8", "int16"):
            document[CONNECT_TYPE] = kind
        if name == _CONNECT_DECIMAL:
            parameters = connect.get("parameters") or {}
            document["scale"] = int(parameters.get("scale", 0))
            document["precision"] = int(parameters.get("connect.decimal.precision", 64))
        named = self._named(document, connect)
        logical = _CONNECT_LOGICAL.get(name) if isinstance(name, str) else None
        if logical is not None:
            named["logicalType"] = logical
        return named if len(named) > 1 else primitive

    def _named(self, document: dict[str, Any], connect: Mapping[str, Any]) -> dict[str, Any]:
        version = connect.get("version")
        if version is not None:
            document[CONNECT_VERSION] = version
        parameters = dict(connect.get("parameters") or {})
        if connect.get("tidb_type") is not None:
            parameters[TIDB_TYPE_PARAMETER] = connect["tidb_type"]
        if parameters:
            document[CONNECT_PARAMETERS] = parameters
        if connect.get("default") is not None and connect.get("type") not in ("struct", "array", "map"):
            document[CONNECT_DEFAULT] = connect["default"]
        doc = connect.get("doc")
        if isinstance(doc, str):
            document[CONNECT_DOC] = doc
        name = connect.get("name")
        if isinstance(name, str):
            document[CONNECT_NAME] = name
        return document

    def _record(self, connect: Mapping[str, Any]) -> Any:
        name = connect.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError("a Connect struct without a name (the converter would name it ConnectDefault)")
        if name in self.defined:
            return name
        self.defined.add(name)
        namespace, _, short = name.rpartition(".")
        fields = []
        for field in connect.get("fields") or ():
            entry: dict[str, Any] = {"name": field["field"], "type": self.field_type(field)}
            if field.get("optional", False) or field.get("default") is not None:
                entry["default"] = _avro_default(field, field.get("default"))
            fields.append(entry)
        record: dict[str, Any] = {"type": "record", "name": short}
        if namespace:
            record["namespace"] = namespace
        record["fields"] = fields
        return self._named(record, {k: v for k, v in connect.items() if k != "default"})


def _avro_default(connect: Mapping[str, Any], value: Any) -> Any:
    """A field default in Avro's JSON form: bytes are a string of code points 0-255 (JSON's is base64)."""
    if value is not None and connect.get("type") == "bytes" and isinstance(value, str):
        return base64.b64decode(value).decode("latin-1")
    return value


def avro_schema(connect: Mapping[str, Any]) -> Any:
    """The Avro schema Connect's Avro converter writes for the Connect schema ``connect`` (a struct)."""
    return _ToAvro().schema(connect)
