"""TiCDC Avro on the JVM path: Confluent-framed records read by spark-avro's ``from_avro``, typed values kept typed.

Every key and value starts with the Confluent header (magic 0, 4-byte schema id). The schema ids of a batch are
the last batch's (a guess, checked where the batch leaves a residue: :mod:`~cdc_spark.decoding.guessed_ids`), or
found first (one small job over the 5-byte headers, no payload), their writer schemas fetched on the driver from
the registry (cached for the process: an id never changes), and each record is then decoded by one ``from_avro``
per schema id, the header cut off in the JVM. A change is:

* a row (key and value records; ``_tidb_op`` ``c``/``u`` and ``_tidb_commit_ts`` with ``enable-tidb-extension``,
  an insert without a commit ts otherwise), its one image the value record;
* a tombstone delete (a key with a null value, or the testing switch's ``0x03`` + TSO), its image the key record
  and its commit ts none (plain tombstone) or the TSO: such a change is ordered after the newest commit ts before
  it in its partition, no later than the next one after it (:mod:`cdc_spark.decoding.jvm.clock`);
* the testing switch's watermark (``0x02`` + TSO), a control row made in the JVM.

A shape is the pair of schema ids (key, value); the codec decodes one sample of each on the driver (once: a later
batch's shape of the same ids keeps its readers, as the ids fix the schemas), so every schema is the codec's, and
each column is read from its Avro type as the codec reads it (:func:`value_reader`). The codec
(:mod:`cdc_spark.decoding.python_path`) takes DDL messages, Glue-framed data, rows with a row checksum to verify,
records ``from_avro`` could not read, schema ids the registry did not give, shapes with a DECIMAL wider than
Spark's 38 digits written as bytes, and values the JVM did not convert.

``from_avro`` in PERMISSIVE mode turns an unreadable record into a row of nulls, not a null: each record is read
with an end marker appended (a ``long`` field after the writer's fields, fed a fixed number appended to the datum),
so a record is good when the marker reads back. That also catches trailing bytes after a datum, as the codec
does, unless they begin with the marker's own ten bytes. Strings must be UTF-8 (spark-avro does not check). The
key record of a row must be good and each of its values convert (the codec reads it), though the row's image is
the value record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from cdc_avro.errors import RegistryUnavailableError
from cdc_avro.names import EXTENSION_FIELDS, TIDB_COMMIT_TS, TIDB_OP, TIDB_ROW_CHECKSUM
from cdc_avro.readers import WriterSchemaError, column_of, record_reader
from cdc_avro.registry import RegistrySettings, SchemaNotFoundError
from cdc_core.codec import Options
from cdc_core.errors import CdcError
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_core.textual import resolve_zone, zone_name
from cdc_core.types import DataType, LogicalTypeVisitor, MySQLType
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding import confluent, guessed_ids
from cdc_spark.decoding.adapter import Route, Sample, ShapeReaders
from cdc_spark.decoding.avro_records import permissive_from_avro
from cdc_spark.decoding.confluent import read_whole, with_end_marker
from cdc_spark.decoding.java_text import JavaText
from cdc_spark.decoding.jvm_values import (
    Typed,
    checked,
    date_text,
    datetime_text,
    fraction_digits,
    json_text,
    time_text,
    timestamp_text,
    vector_text,
)
from cdc_spark.decoding.kept_plans import KeptPlans
from cdc_spark.decoding.reuse import Reuse, app_of, zoned_key
from cdc_spark.decoding.spark_types import MAX_SPARK_PRECISION, UNDECLARED_SCALE, spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


PROTOCOL: Final = "avro"
_LONG_MAX: Final = 2**63 - 1
_TSO_MESSAGE: Final = 9  # a marker byte + 8-byte TSO (watermark, delete marker)
_DDL: Final = 0x01
_WATERMARK: Final = 0x02
_DELETE: Final = 0x03
_TOMBSTONE: Final = "tombstone"  # the value part of a tombstone's shape
_DDL_COMMIT_TS: Final = r'[{,]\s*"commitTs"\s*:\s*([0-9]+)\s*[,}]'  # an integer literal, not a string
_LOG = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class WriterSchema:
    """One registry schema id: its table, its fields' columns and Avro types, and the schema ``from_avro`` reads
    it with (end marker appended; DECIMALs beyond Spark's precision as their plain bytes)."""

    schema_id: int
    database: str
    table: str
    columns: Mapping[str, tuple[DataType, str]]  # field -> (the codec's type, the Avro primitive)
    extension: frozenset[str]
    spark_schema: str
    end_field: str
    strings: tuple[str, ...]  # fields written as Avro strings: their bytes must be UTF-8, as the codec requires

    def readable(self, record: Column) -> Column:
        """Whether ``from_avro`` read the whole record (the end marker came back) and its strings are UTF-8
        (spark-avro does not check; the codec rejects a record that is not)."""
        from pyspark.sql import functions as F

        good = read_whole(record, self.end_field)
        for name in self.strings:
            good = good & F.coalesce(F.is_valid_utf8(record[name]), F.lit(True))
        return good


def _spark_field(field: dict[str, Any]) -> dict[str, Any]:
    """A field as ``from_avro`` can read it: a DECIMAL over 38 digits (Spark's limit) as its bytes."""

    def plain(branch: Any) -> Any:
        wide = isinstance(branch, dict) and branch.get("logicalType") == "decimal"
        if wide and int(branch.get("precision", 0)) > MAX_SPARK_PRECISION:
            return {"type": branch.get("type", "bytes")}
        return branch

    kind = field.get("type")
    kind = [plain(b) for b in kind] if isinstance(kind, list) else plain(kind)
    return {**field, "type": kind}


def _branch(kind: Any) -> Any:
    """A field's Avro type without its union with null (``record_reader`` has checked the union's form)."""
    if isinstance(kind, list):
        kind = next((branch for branch in kind if branch != "null"), None)
    return kind.get("type") if isinstance(kind, dict) else kind


def writer_schema(schema_id: int, text: str) -> WriterSchema:
    """What the JVM path needs of one writer schema; raises WriterSchemaError for schemas TiCDC does not write."""
    reader = record_reader(text, resolve_zone("UTC"))  # the codec's own checks (database, table, fields)
    document = json.loads(text)
    columns: dict[str, tuple[DataType, str]] = {}
    names = set()
    strings: list[str] = []
    for field in document["fields"]:
        names.add(field["name"])
        if _branch(field["type"]) == "string":
            strings.append(field["name"])
        if field["name"] in EXTENSION_FIELDS:
            continue
        column, primitive = column_of(field)
        columns[column.name] = (column.data_type, primitive)
    spark_document, end_field = with_end_marker(
        {**document, "fields": [_spark_field(f) for f in document["fields"]]}, names
    )
    return WriterSchema(
        schema_id=schema_id,
        database=reader.database,
        table=reader.table,
        columns=columns,
        extension=reader.extension_fields,
        spark_schema=json.dumps(spark_document),
        end_field=end_field,
        strings=tuple(strings),
    )


# ---------------------------------------------------------------------------------------------- value readers


def _integer_text(text: Column, target: Any) -> Column:
    """Digits as a number, only in the form the number prints as (the codec's ``int()`` takes more: those go to
    it)."""
    from pyspark.sql import functions as F

    number = text.try_cast("decimal(20,0)")
    return F.when(number.cast("string") == text, number.try_cast(target))


def _unsigned_long(number: Column) -> Column:
    """BIGINT UNSIGNED written as its two's-complement long, read back as the codec's ``+ 2**64``."""
    from pyspark.sql import functions as F

    wide = number.cast("decimal(20,0)")
    return F.when(number < 0, wide + F.lit(str(2**64)).cast("decimal(21,0)")).otherwise(wide).cast("decimal(20,0)")


def _bits(data: Column, target: Any) -> Column:
    """BIT: big-endian bytes (none for 0) as the unsigned number they hold."""
    from pyspark.sql import functions as F

    size = F.length(data)
    unsigned = F.when(size == 0, F.lit("0")).when(size <= 8, F.conv(F.hex(data), 16, 10))
    return unsigned.try_cast("decimal(20,0)").try_cast(target)


def _decimal_text(text: Column) -> Column:
    """DECIMAL as text (``avro-decimal-handling-mode=string``): the writer schema has no precision, so the codec
    fits it to decimal(38,10), rounding half-even; beyond 10 fraction digits (rare) Spark's own rounding is avoided
    with ``bround``."""
    from pyspark.sql import functions as F

    target = f"decimal({MAX_SPARK_PRECISION},{UNDECLARED_SCALE})"
    short = (fraction_digits(text) <= UNDECLARED_SCALE) & ~F.lower(text).contains("e")
    rounded = F.bround(text.try_cast(f"decimal({MAX_SPARK_PRECISION},{MAX_SPARK_PRECISION - 8})"), UNDECLARED_SCALE)
    return F.when(short, text.try_cast(target)).otherwise(rounded.try_cast(target))


def _set_names(text: Column, data_type: DataType) -> Column:
    """SET as comma-joined names: kept as written when every part is a member (the codec's fast path)."""
    from pyspark.sql import functions as F

    parts = F.split(text, ",")
    members = F.array(*[F.lit(e) for e in data_type.elements or ()]).cast("array<string>")
    return F.when(text == "", F.array().cast("array<string>")).when(F.size(F.array_except(parts, members)) == 0, parts)


def _same(value: Column) -> Typed:
    from pyspark.sql import functions as F

    return Typed(value=value, bad=F.lit(False))


class _ValueReader(LogicalTypeVisitor[A.Reader | None]):
    """How the JVM reads a field of Avro type ``primitive``; None where it does not (the codec reads that shape)."""

    def __init__(self, primitive: str, zone: str, session_zone: str, java: JavaText | None) -> None:
        self.primitive, self.zone, self.session_zone, self.java = primitive, zone, session_zone, java

    def visit_int(self, data_type: DataType) -> A.Reader | None:
        target = spark_type(data_type)
        if self.primitive == "string":  # BIGINT UNSIGNED, avro-bigint-unsigned-handling-mode=string
            return lambda text: checked(text, _integer_text(text, target))
        if self.primitive not in ("int", "long"):
            return None
        if data_type.mysql_type is MySQLType.BIGINT and data_type.unsigned:
            return lambda number: checked(number, _unsigned_long(number))
        return lambda number: checked(number, number.try_cast(target))

    def visit_year(self, data_type: DataType) -> A.Reader | None:
        return self.visit_int(data_type)

    def visit_float(self, data_type: DataType) -> A.Reader | None:
        return _same if self.primitive == "float" else None

    def visit_double(self, data_type: DataType) -> A.Reader | None:
        return _same if self.primitive == "double" else None

    def visit_decimal(self, data_type: DataType) -> A.Reader | None:
        if self.primitive == "string":
            return lambda text: checked(text, _decimal_text(text))
        if self.primitive == "bytes" and data_type.length is not None and data_type.precision <= MAX_SPARK_PRECISION:
            target = spark_type(data_type)
            return lambda number: checked(number, number.try_cast(target))
        return None  # wider than Spark's decimals, or bytes without the decimal logical type

    def visit_bit(self, data_type: DataType) -> A.Reader | None:
        target = spark_type(data_type)
        return (lambda data: checked(data, _bits(data, target))) if self.primitive == "bytes" else None

    def visit_bytes(self, data_type: DataType) -> A.Reader | None:
        return _same if self.primitive == "bytes" else None

    def _text(self, reader: A.Reader) -> A.Reader | None:
        """``reader`` for a type TiCDC writes as an Avro string."""
        return reader if self.primitive == "string" else None

    def visit_string(self, data_type: DataType) -> A.Reader | None:
        return self._text(_same)

    def visit_enum(self, data_type: DataType) -> A.Reader | None:
        return self._text(_same)

    def visit_set(self, data_type: DataType) -> A.Reader | None:
        return self._text(lambda text: checked(text, _set_names(text, data_type)))

    def _java_first(self, data_type: DataType, descriptor: str, sql: A.Reader) -> A.Reader:
        """The session's Java reader ``descriptor`` of TiDB's text forms where it has them (one call per value, where
        the SQL reader matches a regular expression and casts), else ``sql``."""
        return sql if self.java is None else self.java.reader(data_type, descriptor)

    def visit_date(self, data_type: DataType) -> A.Reader | None:
        return self._text(self._java_first(data_type, "date", date_text))

    def visit_datetime(self, data_type: DataType) -> A.Reader | None:
        # a zero date keeps its whole text, fraction included, as the codec's Avro reader does
        return self._text(self._java_first(data_type, "datetime", datetime_text))

    def visit_timestamp(self, data_type: DataType) -> A.Reader | None:
        zone, session_zone = self.zone, self.session_zone
        return self._text(
            self._java_first(data_type, f"timestamp:{zone}", lambda text: timestamp_text(text, zone, session_zone))
        )

    def visit_time(self, data_type: DataType) -> A.Reader | None:
        return self._text(self._java_first(data_type, "time", time_text))

    def visit_json(self, data_type: DataType) -> A.Reader | None:
        # the Java reader re-prints a document as the SQL one does, without a stream decoder per value (Spark's
        # get_json_object builds one: 4-7% of an Avro decode's executor samples)
        return self._text(json_text if self.java is None else self.java.reader(data_type, "json"))

    def visit_vector(self, data_type: DataType) -> A.Reader | None:
        return self._text(vector_text)

    def visit_geometry(self, data_type: DataType) -> A.Reader | None:
        return None  # TiDB has no spatial columns: the codec reports them

    def visit_array(self, data_type: DataType) -> A.Reader | None:
        return None  # nor array columns


def value_reader(
    data_type: DataType, primitive: str, zone: str, session_zone: str, java: JavaText | None = None
) -> A.Reader | None:
    """How the JVM reads a field of Avro type ``primitive`` into ``data_type``'s contract type, as the codec's
    ``reader_for`` and ``spark_value`` do; None where the JVM does not (the codec reads that shape). With ``java``
    (the session's Java readers), JSON documents are read by them."""
    return _ValueReader(primitive, zone, session_zone, java).visit(data_type)


# --------------------------------------------------------------------------------------------------- adapter


def _record(role: str, schema_id: int | str) -> str:
    """The column ``prepare`` reads a record of schema id ``schema_id`` into, as the key's (``k``) or value's."""
    return f"__av{role}{schema_id}"


def _tso(value: Column) -> Column:
    """The unsigned big-endian TSO after a marker byte."""
    from pyspark.sql import functions as F

    return F.conv(F.hex(F.substring(value, 2, 8)), 16, 10).try_cast("decimal(20,0)")


@attrs.frozen
class PreparedColumns:
    """The columns ``prepare`` adds, in the order each may name the ones before: the records' schema ids, the
    records read, the route, whether a message is a tombstone delete, and the rest."""

    ids: dict[str, Column]
    records: tuple[Column, ...]
    routed: dict[str, Column]
    marked: dict[str, Column]
    derived: dict[str, Column]


@attrs.define
class AvroAdapter:
    options: Mapping[str, object]
    session_zone: str
    # ``prepare``'s columns by the schema ids of a batch, kept by the decoder: several hundred py4j calls each (about
    # half a second per batch at three tables), the same for every batch of the same schemas. The key holds the
    # Spark app (its JVM objects), the adapter's expressions key and the ids, which fix the writer schemas (an id's
    # schema never changes).
    kept_columns: Reuse[PreparedColumns]
    java: JavaText | None = None  # the session's Java readers, if it has them
    # ``prepare``'s frames' analyzed plans, kept by the decoder with the columns (None: each batch analyzes its own)
    kept_plans: KeptPlans | None = None
    # the schema ids the last batch of each Spark app and expressions key was prepared for, kept by the decoder: the
    # next batch's guess (:mod:`~cdc_spark.decoding.guessed_ids`); None: each batch finds its own
    guesses: Reuse[guessed_ids.Guess[WriterSchema]] | None = None
    protocol: str = PROTOCOL
    # a shape is its pair of schema ids, and the codec's schema of a sample comes from those writer schemas alone
    readers_by_shape: bool = attrs.field(default=True, init=False)
    java_rows: None = attrs.field(default=None, init=False)  # the SQL typing
    _resolved: Options = attrs.field(init=False)
    _zone: str = attrs.field(init=False)
    # the ids the batch is prepared for (:attr:`keys`, :attr:`values`)
    _ids: guessed_ids.Guess[WriterSchema] | None = attrs.field(init=False, default=None)
    _guessed: bool = attrs.field(init=False, default=False)  # taken from an earlier batch, not found in this one

    def __attrs_post_init__(self) -> None:
        # as the codec's decoder reads them: encoder-only options and TiCDC's sink-URI parameters ignored (with the
        # codec's one warning), TiCDC's names of its own options taken
        self._resolved = get_codec(PROTOCOL).decoder_options(self.options)
        self._zone = zone_name(resolve_zone(self._resolved["time-zone"]))

    @property
    def keys(self) -> Mapping[int, WriterSchema]:
        """The batch's key schemas by id (the ids it is prepared for)."""
        return {} if self._ids is None else self._ids.keys

    @property
    def values(self) -> Mapping[int, WriterSchema]:
        """The batch's value schemas by id."""
        return {} if self._ids is None else self._ids.values

    @property
    def keeps_prepared_plans(self) -> bool:
        return self.kept_plans is not None

    def expressions_key(self) -> Hashable:
        return (zoned_key(self.protocol, self.options, self.session_zone, self._zone), self.java is not None)

    def _settings(self) -> RegistrySettings:
        return RegistrySettings(
            url=self._resolved["schema-registry"],
            max_retries=self._resolved["schema-registry-max-retries"],
            retry_wait_ms=self._resolved["schema-registry-retry-backoff-ms"],
            timeout_s=self._resolved["schema-registry-timeout"],
            ca_location=self._resolved["schema-registry-ca"],
        )

    def _fetch(self, ids: set[int]) -> dict[int, WriterSchema]:
        """The writer schemas of ``ids`` the registry gives and TiCDC could have written (the others: the codec)."""
        registry = confluent.registry(self._settings())
        found: dict[int, WriterSchema] = {}
        for schema_id in sorted(ids):
            try:
                found[schema_id] = writer_schema(schema_id, registry.schema(schema_id))
            except RegistryUnavailableError:
                raise  # the registry is down: the batch fails (and is retried), no message is a dead letter for it
            except (SchemaNotFoundError, WriterSchemaError, CdcError, ValueError) as exc:
                # the codec decodes or reports each message of it, with its reason
                _LOG.warning("schema id %d: its messages go to the codec (%s)", schema_id, exc)
                continue
        return found

    def _learn_schemas(self, messages: DataFrame) -> None:
        """The batch's schema ids and their schemas: the guess an earlier batch left, else found by one small job
        over the headers, their schemas from the registry. Once per batch (a later ``prepare`` keeps them)."""
        if self._ids is not None:
            return
        guess = None if self.guesses is None else self.guesses.peek(self._guess_key(messages))
        if guess is not None and guess.wait == 0:
            self._guessed = True
            self._prepare_for(guess)
            return
        ids = self._found(*confluent.batch_ids(messages))
        self._keep(messages, ids if guess is None else guess.after_wait(ids))

    def missed_guess(self, messages: DataFrame) -> bool:
        """Whether the batch was prepared for guessed ids and has one more (its records went to the codec): then
        prepared for its own ids. Asked where the batch's pass leaves a residue; finds the ids (one job)."""
        guess = self._ids
        if not self._guessed or guess is None:
            return False
        self._guessed = False
        key_ids, value_ids = confluent.batch_ids(messages)
        if guess.covers(key_ids, value_ids):
            return False
        self._keep(messages, guess.after_miss(self._found(key_ids, value_ids)))
        return True

    def _found(self, key_ids: set[int], value_ids: set[int]) -> guessed_ids.Guess[WriterSchema]:
        """The ids found and the schemas the registry gives of them."""
        fetched = self._fetch(key_ids | value_ids)
        keys = {i: fetched[i] for i in key_ids if i in fetched}
        return guessed_ids.found(keys, {i: fetched[i] for i in value_ids if i in fetched}, key_ids, value_ids)

    def _keep(self, messages: DataFrame, ids: guessed_ids.Guess[WriterSchema]) -> None:
        """Prepare the batch for ``ids``, kept as the next batch's guess."""
        self._prepare_for(ids)
        if self.guesses is not None:
            self.guesses.put(self._guess_key(messages), ids)

    def _prepare_for(self, ids: guessed_ids.Guess[WriterSchema]) -> None:
        self._ids = ids

    def _guess_key(self, messages: DataFrame) -> Hashable:
        return (app_of(messages), self.expressions_key())

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        A.no_typed_envelope(self.protocol, envelope)

        self._learn_schemas(messages)
        key = (app_of(messages), self.expressions_key(), tuple(self.keys), tuple(self.values))
        built = self.kept_columns.get(key, self._prepared)

        def prepared(source: DataFrame) -> DataFrame:
            frame = source.withColumns(built.ids).select("*", *built.records)
            return frame.withColumns(built.routed).withColumns(built.marked).withColumns(built.derived)

        # the ids fix the columns, so a batch of the same ids analyzes to the same plan but for its messages
        return prepared(messages) if self.kept_plans is None else self.kept_plans.frame(key, messages, prepared)

    def _prepared(self) -> PreparedColumns:
        """The columns ``prepare`` adds for the batch's schema ids (:attr:`keys`, :attr:`values`)."""
        from pyspark.sql import functions as F

        key, value = F.col("key"), F.col("value")
        key_absent = key.isNull() | (F.length(key) == 0)
        value_absent = value.isNull() | (F.length(value) == 0)
        first = F.substring(value, 1, 1)
        tso_message = F.length(value) == _TSO_MESSAGE
        tso = _tso(value)
        # each record's schema id where it is one of the batch's, found once: every per-id value below tests it
        ids = {"__kid": confluent.known_id(key, self.keys), "__vid": confluent.known_id(value, self.values)}

        def decoded(role: str, data: Column, schemas: Mapping[int, WriterSchema]) -> list[Column]:
            body = confluent.avro_body(data)
            schema_id = F.col(f"__{role}id")
            return [
                F.when(schema_id == F.lit(i), permissive_from_avro(body, s.spark_schema)).alias(_record(role, i))
                for i, s in schemas.items()
            ]

        records = (*decoded("k", key, self.keys), *decoded("v", value, self.values))

        def per_id(role: str, schemas: Mapping[int, WriterSchema], pick: Any, cast: str) -> Column:
            """A per-row value of the record's schema id (``pick(schema, record)``; null where it gives none)."""
            result: Column = F.lit(None).cast(cast)
            for i, schema in schemas.items():
                picked = pick(schema, F.col(_record(role, i)))
                if picked is not None:
                    result = F.when(F.col(f"__{role}id") == F.lit(i), picked).otherwise(result)
            return result

        key_good = per_id("k", self.keys, lambda s, r: s.readable(r), "boolean")
        key_values = per_id("k", self.keys, self._convertible, "boolean")
        value_good = per_id("v", self.values, lambda s, r: s.readable(r), "boolean")
        op_text = per_id("v", self.values, lambda s, r: r[TIDB_OP] if TIDB_OP in s.extension else None, "string")
        commit_ts = per_id(
            "v", self.values, lambda s, r: r[TIDB_COMMIT_TS] if TIDB_COMMIT_TS in s.extension else None, "bigint"
        )
        checksum = per_id(
            "v", self.values, lambda s, r: r[TIDB_ROW_CHECKSUM] if TIDB_ROW_CHECKSUM in s.extension else None, "string"
        )
        key_database = per_id("k", self.keys, lambda s, r: F.lit(s.database), "string")
        key_table = per_id("k", self.keys, lambda s, r: F.lit(s.table), "string")
        value_database = per_id("v", self.values, lambda s, r: F.lit(s.database), "string")
        value_table = per_id("v", self.values, lambda s, r: F.lit(s.table), "string")
        key_id = per_id("k", self.keys, lambda s, r: F.lit(str(s.schema_id)), "string")
        value_id = per_id("v", self.values, lambda s, r: F.lit(str(s.schema_id)), "string")

        key_ok = F.coalesce(key_good, F.lit(False))
        tombstone = ~key_absent & (value_absent | (tso_message & (first == F.lit(bytearray([_DELETE])))))
        delete_ts_ok = value_absent | (tso <= _LONG_MAX)
        row = (
            ~value_absent
            & F.coalesce(value_good, F.lit(False))
            & (key_absent | (key_ok & F.coalesce(key_values, F.lit(False))))
            & F.coalesce(op_text != "d", F.lit(True))
            & F.coalesce(commit_ts >= 0, F.lit(True))
            & F.coalesce(checksum == "", F.lit(True))  # "": TiDB computed none; else the codec verifies it
        )
        watermark = key_absent & tso_message & (first == F.lit(bytearray([_WATERMARK]))) & (tso <= _LONG_MAX)
        ddl = key_absent & (first == F.lit(bytearray([_DDL])))
        route = (
            F.when(key_absent & value_absent, F.lit(Route.SKIP.value))
            .when(tombstone & key_ok & delete_ts_ok, F.lit(Route.JVM.value))
            .when(~tombstone & F.coalesce(row, F.lit(False)), F.lit(Route.JVM.value))
            .when(F.coalesce(watermark, F.lit(False)), F.lit(Route.WATERMARK.value))
            .otherwise(F.lit(Route.PYTHON.value))
        )
        jvm = F.col(A.ROUTE) == Route.JVM
        is_tombstone = F.col("__tombstone")
        ts = (
            F.when(is_tombstone, F.when(~value_absent, tso))
            .when(F.col(A.ROUTE) == Route.WATERMARK, tso)
            .when(ddl, _ddl_commit_ts(value))
            .otherwise(F.when(commit_ts >= 0, commit_ts))
        )
        op = F.when(is_tombstone, F.lit("delete")).when(op_text == "u", F.lit("update")).otherwise(F.lit("insert"))
        shape = F.concat_ws(
            ":", F.coalesce(key_id, F.lit("")), F.when(is_tombstone, F.lit(_TOMBSTONE)).otherwise(value_id)
        )
        derived = {
            A.DATABASE: F.when(jvm, F.when(is_tombstone, key_database).otherwise(value_database)),
            A.TABLE: F.when(jvm, F.when(is_tombstone, key_table).otherwise(value_table)),
            A.SHAPE: F.when(jvm, shape),
            A.TS: ts.try_cast("long"),
            "__op": op,
            A.RANK: A.rank(F.lit(0)),
            A.SAMPLE: jvm,
        }
        return PreparedColumns(
            ids=ids, records=records, routed={A.ROUTE: route}, marked={"__tombstone": tombstone & jvm}, derived=derived
        )

    def _convertible(self, writer: WriterSchema, record: Column) -> Column:
        """Whether every value of a row's key record converts as the codec reads it (the codec reads the key, so
        a key value it rejects makes the message its dead letter; the row's image is the value record)."""
        from pyspark.sql import functions as F

        good: Column = F.lit(True)
        for name, (data_type, primitive) in writer.columns.items():
            reader = value_reader(data_type, primitive, self._zone, self.session_zone, self.java)
            if reader is None:
                return F.lit(False)  # a key the JVM does not read: the codec reads the row
            typed = reader(record[name])
            converted = (
                typed.value.isNotNull() if typed.zero is None else typed.value.isNotNull() | typed.zero.isNotNull()
            )
            good = good & (record[name].isNull() | converted)
        return good

    def records(self, prepared: DataFrame) -> list[str]:
        return [c for c in prepared.columns if c.startswith((_record("k", ""), _record("v", "")))]

    def rows(self, prepared: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        no_map = F.lit(None).cast("map<string,string>")
        records = self.records(prepared)
        return prepared.select(
            *[c for c in prepared.columns if not c.startswith("__")],
            A.DATABASE, A.TABLE, A.SHAPE, A.TS,
            F.lit(0).alias(A.POSITION),
            F.col("__op").alias(A.OP),
            F.lit(None).cast("long").alias(A.VERSION),
            no_map.alias(A.AFTER), no_map.alias(A.BEFORE), no_map.alias(A.BEFORE_BASE), no_map.alias(A.CHANGED_FROM),
            *records,
        )  # fmt: skip

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema] = ()
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        shapes = A.codec_schemas(PROTOCOL, self.options, samples)
        return {s.key: None if schema is None else self._readers(schema, s.shape) for s, schema in shapes}

    def _readers(self, schema: TableSchema, shape: str) -> ShapeReaders | None:
        """Readers of a shape's one image: the value record of a row, the key record of a tombstone."""
        from pyspark.sql import functions as F

        key_part, value_part = shape.split(":")
        role, schema_id = ("k", int(key_part)) if value_part == _TOMBSTONE else ("v", int(value_part))
        writer = (self.keys if role == "k" else self.values).get(schema_id)
        if writer is None:
            return None
        record = F.col(_record(role, schema_id))
        readers: dict[str, A.Reader] = {}
        signatures: dict[str, Any] = {}
        image: dict[str, Column] = {}
        for column in schema.stored_columns:
            wire = writer.columns.get(column.name)
            if wire is None:
                return None
            data_type, primitive = wire
            reader = value_reader(data_type, primitive, self._zone, self.session_zone, self.java)
            if reader is None:
                return None
            readers[column.name] = reader
            signatures[column.name] = (role, schema_id, column.name)
            image[column.name] = record[column.name]
        sources = frozenset({_record(role, schema_id)})
        return ShapeReaders(schema=schema, readers=readers, signatures=signatures, image=image, sources=sources)


def _ddl_commit_ts(value: Column) -> Column:
    """The commit ts of a DDL message of the testing switch, for the partition clock (the codec decodes the DDL):
    an integer ``commitTs`` in a JSON object whose ``type`` is an integer and ``query``, ``schema`` and ``table``
    strings, as the codec wants them."""
    from pyspark.sql import functions as F

    text = F.substring(value, 2, 1 << 30).cast("string")
    # read as a variant, not by from_json: Spark generates code for it (from_json has none, and would break the
    # pass's one whole-stage stage in two, the row copied between them), and it tells an integer from a string
    doc = F.try_parse_json(text)

    def kind(field: str) -> Column:
        return F.schema_of_variant(F.variant_get(doc, f"$.{field}", "variant"))

    complete = (kind("type") == "BIGINT") & (kind("query") == "STRING") & (kind("schema") == "STRING")
    complete = complete & (kind("table") == "STRING")
    digits = F.regexp_extract(text, _DDL_COMMIT_TS, 1)
    return F.when(complete & (digits != ""), digits.try_cast("decimal(20,0)"))


def adapter(
    options: Mapping[str, object], session_zone: str, spark: SparkSession, decoder: A.AdapterState
) -> A.Adapter | None:
    """TiCDC Avro's JVM rules for a batch (entry point ``avro`` of ``cdc_spark.decode_adapters``); none without a
    schema registry (Glue-framed data only: the codec), and the prepared columns kept by ``decoder``."""
    if not str(options.get("schema-registry") or ""):
        return None
    plans, guesses = prepared_plans(decoder), guessed_schema_ids(decoder)
    return AvroAdapter(options, session_zone, prepared_columns(decoder), java=JavaText.of(spark), kept_plans=plans,
                       guesses=guesses)  # fmt: skip


def prepared_columns(decoder: A.AdapterState) -> Reuse[PreparedColumns]:
    """``prepare``'s columns by the batch's schema ids (several hundred py4j calls each), as ``decoder`` keeps them
    for this protocol from batch to batch."""
    return decoder.kept(PROTOCOL, lambda: Reuse[PreparedColumns](capacity=8))


def prepared_plans(decoder: A.AdapterState) -> KeptPlans:
    """The analyzed plans of ``prepare``'s frames by the batch's schema ids, as ``decoder`` keeps them."""
    return decoder.kept(f"{PROTOCOL}:plans", lambda: KeptPlans("__cdc_messages__", capacity=8))


def guessed_schema_ids(decoder: A.AdapterState) -> Reuse[guessed_ids.Guess[WriterSchema]]:
    """The schema ids each Spark app's last batch was prepared for (by adapter key), as ``decoder`` keeps them."""
    return decoder.kept(f"{PROTOCOL}:ids", lambda: Reuse[guessed_ids.Guess[WriterSchema]](capacity=8))


__all__ = [
    "AvroAdapter",
    "WriterSchema",
    "adapter",
    "guessed_schema_ids",
    "prepared_columns",
    "prepared_plans",
    "value_reader",
    "writer_schema",
]
