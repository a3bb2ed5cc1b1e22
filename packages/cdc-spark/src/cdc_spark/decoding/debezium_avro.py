"""Debezium Avro (Kafka Connect's Avro converter) on the JVM path: ``from_avro`` per schema id, then Debezium's rules.

Records are found and read as for TiCDC Avro (:mod:`cdc_spark.decoding.confluent`): the batch's schema ids from the
headers, their writer schemas from the registry on the driver, one ``from_avro`` per id, read whole or not at all.
Each writer schema is mapped back to the Connect schema it was written from (``cdc_debezium.avro.connect_schema``,
the codec's own mapping), read with Avro's logical types left raw, as the codec reads them. A value record of an
Envelope (``before``, ``after``, ``source``, ``op``) then gives its images as the JSON converter's texts of each
field (bytes as base64, numbers and booleans as their text, structs, arrays and maps as JSON), so every column is
read by the Debezium JSON rules (:mod:`cdc_spark.decoding.debezium`) from the field schema the record's Connect
schema gives: both forms of a change type alike, and alike with the codec.

A shape is the pair of schema ids (key, value), which fix the schemas. Rows of an Envelope (``op`` c, r, u, d) with
their image(s), a readable key (or none) and a commit ts that fits go to the JVM; TiCDC's watermarks (``op`` m with
``source.commit_ts``, no ``message``) are control rows made in the JVM; tombstones are skipped; schema changes,
truncates, logical-decoding messages, heartbeats, records ``from_avro`` could not read and schema ids the registry
did not give go to the codec, as do shapes with a column the JSON rules leave to it (variable-scale decimals,
geometries).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_core.errors import CdcError
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.schema_registry import RegistrySettings, RegistryUnavailableError
from cdc_core.textual import resolve_zone
from cdc_debezium.avro.connect_schema import connect_schema, without_logical_types
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding import confluent
from cdc_spark.decoding.adapter import Route, Sample, ShapeReaders
from cdc_spark.decoding.avro_records import permissive_from_avro
from cdc_spark.decoding.debezium import DebeziumAdapter, Modes, source_database

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


PROTOCOL: Final = "debezium-avro"
_LONG_MAX: Final = 2**63 - 1
_ROW_OPS: Final = ("c", "r", "u", "d")
_MAP: Final = "map<string,string>"
_LOG = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class ConnectRecord:
    """One registry schema id: the Connect schema its records were written from, and how ``from_avro`` reads them."""

    schema_id: int
    connect: Mapping[str, Any]
    spark_schema: str  # the writer schema with Avro's logical types raw and the end marker appended
    end_field: str
    strings: tuple[tuple[str, ...], ...]  # paths of the string fields: UTF-8 as the codec requires

    def field(self, name: str) -> Mapping[str, Any] | None:
        return next((f for f in self.connect.get("fields") or () if f.get("field") == name), None)

    @property
    def envelope(self) -> bool:
        """A Debezium change record (or TiCDC's watermark): its source and op."""
        return all(self.field(name) is not None for name in ("source", "op"))

    @property
    def columns(self) -> Mapping[str, Mapping[str, Any]]:
        """The row struct's fields by column (field) name."""
        row = self.field("after") or {}
        return {f["field"]: f for f in row.get("fields") or ()}

    def readable(self, record: Column) -> Column:
        """``from_avro`` read the whole record and its strings are UTF-8 (spark-avro does not check them)."""
        from pyspark.sql import functions as F

        good = confluent.read_whole(record, self.end_field)
        for path in self.strings:
            value = record
            for part in path:
                value = value[part]
            good = good & F.coalesce(F.is_valid_utf8(value), F.lit(True))
        return good


def _string_paths(connect: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The struct paths of ``connect``'s string fields (inside arrays and maps too deep to name: not checked)."""
    paths: list[tuple[str, ...]] = []
    for field in connect.get("fields") or ():
        path = (*prefix, field["field"])
        if field.get("type") == "string":
            paths.append(path)
        elif field.get("type") == "struct":
            paths.extend(_string_paths(field, path))
    return paths


def connect_record(schema_id: int, text: str) -> ConnectRecord:
    """What the JVM path needs of one writer schema; raises CdcError or ValueError where the codec would refuse it."""
    document = json.loads(text)
    connect = connect_schema(document)
    if not isinstance(document, dict) or document.get("type") != "record":
        raise ValueError("the writer schema is not a record")
    raw = without_logical_types(document)
    spark_document, end_field = confluent.with_end_marker(raw, (f.get("name") for f in raw["fields"]))
    return ConnectRecord(
        schema_id=schema_id,
        connect=connect,
        spark_schema=json.dumps(spark_document),
        end_field=end_field,
        strings=tuple(_string_paths(connect)),
    )


def _text(value: Column, field: Mapping[str, Any]) -> Column:
    """The JsonConverter's text of a field's value, as the Debezium JSON path reads it from its image map."""
    from pyspark.sql import functions as F

    kind = field.get("type")
    if kind == "bytes":
        return F.base64(value)
    if kind in ("struct", "array", "map"):
        return F.to_json(value)
    return value.cast("string")


def _image(struct: Column, columns: Mapping[str, Mapping[str, Any]]) -> Column:
    """A row struct as the map of its columns' texts (null where the struct is)."""
    from pyspark.sql import functions as F

    names = F.array(*[F.lit(name) for name in columns]).cast("array<string>")
    texts = F.array(*[_text(struct[name], field) for name, field in columns.items()]).cast("array<string>")
    return F.when(struct.isNotNull(), F.map_from_arrays(names, texts))


def _record_column(role: str, schema_id: int) -> str:
    return f"__dbz{role}{schema_id}"


@attrs.define
class DebeziumAvroAdapter(DebeziumAdapter):
    protocol: str = PROTOCOL
    readers_by_shape: bool = attrs.field(default=True, init=False)  # a shape is its pair of ids, which fix it
    keeps_prepared_plans: bool = attrs.field(default=False, init=False)  # prepare builds its frame anew
    keys: dict[int, ConnectRecord] = attrs.field(init=False, factory=dict)  # the batch's key schemas by id
    values: dict[int, ConnectRecord] = attrs.field(init=False, factory=dict)  # its value schemas by id

    def __attrs_post_init__(self) -> None:
        # as the codec's decoder reads them: encoder-only options and TiCDC's sink-URI parameters ignored (with the
        # codec's one warning), TiCDC's names of its own options taken
        self._resolved = get_codec(PROTOCOL).decoder_options(self.options)
        self._modes = Modes(binary=str(self._resolved["binary.handling.mode"]))  # schemas always say the rest
        self._zone = resolve_zone(self._resolved["time-zone"])

    def _learn_schemas(self, messages: DataFrame) -> None:
        key_ids, value_ids = confluent.batch_ids(messages)
        registry = confluent.registry(RegistrySettings.of(self._resolved, PROTOCOL))
        fetched: dict[int, ConnectRecord] = {}
        for schema_id in sorted(key_ids | value_ids):
            try:
                fetched[schema_id] = connect_record(schema_id, registry.schema(schema_id))
            except RegistryUnavailableError:
                raise  # the registry is down: the batch fails (and is retried), no message is a dead letter for it
            except (CdcError, LookupError, ValueError) as exc:
                # the codec decodes or reports each message of it, with its reason
                _LOG.warning("schema id %d: its messages go to the codec (%s)", schema_id, exc)
        self.keys = {i: fetched[i] for i in sorted(key_ids) if i in fetched}
        self.values = {i: fetched[i] for i in sorted(value_ids) if i in fetched and fetched[i].envelope}

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        from pyspark.sql import functions as F

        A.no_typed_envelope(self.protocol, envelope)
        self._learn_schemas(messages)
        key, value = F.col("key"), F.col("value")
        ids = {"__kid": confluent.known_id(key, self.keys), "__vid": confluent.known_id(value, self.values)}
        records = [
            F.when(
                F.col(f"__{role}id") == F.lit(i), permissive_from_avro(confluent.avro_body(data), s.spark_schema)
            ).alias(_record_column(role, i))
            for role, data, schemas in (("k", key, self.keys), ("v", value, self.values))
            for i, s in schemas.items()
        ]
        read = messages.withColumns(ids).select("*", *records)
        return read.select(*messages.columns, *self._routed())

    def _per_id(self, pick: Any, cast: str) -> Column:
        """A per-row value of the value record's schema id (``pick(schema, record)``; null where it gives none)."""
        from pyspark.sql import functions as F

        result: Column = F.lit(None).cast(cast)
        for i, schema in self.values.items():
            picked = pick(schema, F.col(_record_column("v", i)))
            if picked is not None:
                result = F.when(F.col("__vid") == F.lit(i), picked).otherwise(result)
        return result

    def _routed(self) -> list[Column]:
        """The columns :meth:`prepare` adds (the route and the envelope), from the records read."""
        from pyspark.sql import functions as F

        key_good: Column = F.lit(None).cast("boolean")
        for i, schema in self.keys.items():
            record = F.col(_record_column("k", i))
            key_good = F.when(F.col("__kid") == F.lit(i), schema.readable(record)).otherwise(key_good)
        key_absent = F.col("key").isNull() | (F.length(F.col("key")) == 0)
        value_absent = F.col("value").isNull() | (F.length(F.col("value")) == 0)
        good = self._per_id(lambda s, r: s.readable(r), "boolean")
        op = self._per_id(lambda s, r: r["op"], "string")
        database = self._per_id(_namespace, "string")
        table = self._per_id(lambda s, r: r["source"]["table"], "string")
        commit_ts = self._per_id(lambda s, r: r["source"]["commit_ts"] if _has(s, "commit_ts") else None, "bigint")
        message = self._per_id(lambda s, r: F.lit(s.field("message") is not None), "boolean")
        after = self._per_id(lambda s, r: _image(r["after"], s.columns) if s.field("after") else None, _MAP)
        before = self._per_id(lambda s, r: _image(r["before"], s.columns) if s.field("before") else None, _MAP)
        row = (
            F.coalesce(good, F.lit(False))
            & op.isin(*_ROW_OPS)
            & database.isNotNull()
            & table.isNotNull()
            & F.when(op == "d", before.isNotNull()).otherwise(after.isNotNull())
            & F.coalesce(commit_ts >= 0, F.lit(True))
            & (key_absent | F.coalesce(key_good, F.lit(False)))
        )
        watermark = F.coalesce(good, F.lit(False)) & (op == "m") & ~message & (commit_ts >= 0)
        route = (
            F.when(value_absent, F.lit(Route.SKIP.value))
            .when(F.coalesce(row, F.lit(False)), F.lit(Route.JVM.value))
            .when(F.coalesce(watermark, F.lit(False)), F.lit(Route.WATERMARK.value))
            .otherwise(F.lit(Route.PYTHON.value))
        )
        jvm = route == Route.JVM
        ts = F.when(commit_ts.between(0, _LONG_MAX), commit_ts)
        shape = F.concat_ws(":", F.coalesce(F.col("__kid").cast("string"), F.lit("")), F.col("__vid").cast("string"))
        return [
            route.alias(A.ROUTE),
            database.alias(A.DATABASE),
            table.alias(A.TABLE),
            F.when(jvm, shape).alias(A.SHAPE),
            ts.alias(A.TS),
            A.rank(F.lit(0), ts).alias(A.RANK),
            jvm.alias(A.SAMPLE),
            F.struct(op.alias("op"), after.alias("after"), before.alias("before")).alias("__env"),
        ]

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema] = ()
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        described: dict[tuple[str, str, str], ShapeReaders | None] = {}
        for sample, schema in A.codec_schemas(PROTOCOL, self.options, samples):
            writer = self.values.get(int(sample.shape.rpartition(":")[2]))
            if schema is None or writer is None:
                described[sample.key] = None
                continue
            fields = {name: (f.get("type"), f.get("name")) for name, f in writer.columns.items()}
            described[sample.key] = self._readers(schema, fields)
        return described


def _namespace(schema: ConnectRecord, record: Column) -> Column:
    """An event's database (:func:`~cdc_spark.decoding.debezium.source_database`; a source without a ``schema``
    field, MySQL's, names it in ``db``)."""
    return source_database(record["source"]) if _has(schema, "schema") else record["source"]["db"]


def _has(schema: ConnectRecord, source_field: str) -> bool:
    source = schema.field("source") or {}
    return any(f.get("field") == source_field for f in source.get("fields") or ())


def adapter(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: A.AdapterState
) -> A.Adapter:
    """Debezium Avro's JVM rules for a batch (entry point ``debezium-avro`` of ``cdc_spark.decode_adapters``)."""
    return DebeziumAvroAdapter(options, session_zone)


__all__ = ["ConnectRecord", "DebeziumAvroAdapter", "adapter", "connect_record"]
