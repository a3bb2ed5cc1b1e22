"""What a protocol brings to the JVM decode path (:mod:`cdc_spark.decoding.jvm`).

An adapter parses its envelope with Spark's ``from_json`` (or ``from_avro``) and says, per message, where it
goes; it flattens row messages into one row per change with the values still in their wire form; and it turns one
sample message per wire *shape* (decoded on the driver by the protocol's own codec) into the column readers that
type those values in the JVM.

Wire values come one of two ways. Text protocols put each image in a map (``AFTER``, ``BEFORE``: column name to
wire value, one value type for every column); the framework looks each column up once. Protocols whose values
arrive typed in a record per writer schema (TiCDC Avro) give, per shape, the expression of each column's value
instead (:attr:`ShapeReaders.image`): a change then has one image, the new one, or for a delete the old one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, runtime_checkable

import attrs

from cdc_core.errors import CdcError
from cdc_core.events import RowChange
from cdc_core.message import Message
from cdc_core.registry import get_codec
from cdc_core.schema import TableSchema
from cdc_spark.decoding.jvm_values import Typed

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


class Route(StrEnum):
    """Where a message is decoded."""

    JVM = "jvm"  # row changes typed by Spark expressions
    WATERMARK = "watermark"  # a control row made in the JVM
    PYTHON = "python"  # the protocol's codec in the executors (DDL, claim-check, compressed, malformed...)
    SKIP = "skip"  # carries no change and no control row (heartbeats, tombstones where they mean nothing)


# Columns ``prepare`` adds to the messages.
ROUTE: Final = "__route"
DATABASE: Final = "__database"
TABLE: Final = "__table"
SHAPE: Final = "__shape"  # the message's wire shape within its table (a digest of what types its values)
RANK: Final = "__rank"  # struct<ts,partition,offset,position>: the newest shape of a table wins
SAMPLE: Final = "__sample"  # whether this message's shape needs a sample decoded on the driver
TS: Final = "__ts"  # commit ts (null when the message has none)
# Columns ``rows`` gives per change (besides topic, partition, offset, key, value, timestamp).
POSITION: Final = "__position"
OP: Final = "__op"  # insert, update, delete
VERSION: Final = "__version"  # the table's schema version, where the protocol carries one
AFTER: Final = "__after"  # map<string,string>: the new image's wire texts
BEFORE: Final = "__before"  # map<string,string>: the old image's wire texts
BEFORE_BASE: Final = "__before_base"  # map<string,string>: texts of columns BEFORE lacks (Canal's partial old)
TYPED: Final = "__typed"  # what a typed envelope reader read of a message (RowTyper.envelope_function)
CHANGED_FROM: Final = "__changed_from"  # map<string,string>: an update's changed columns are its keys (or null)


Reader = Callable[["Column"], Typed]


def codec_schemas(
    protocol: str, options: Mapping[str, object], samples: Sequence[Sample]
) -> Iterator[tuple[Sample, TableSchema | None]]:
    """Each JVM sample with a message, and the schema the protocol's codec decodes from the message (the first row
    change's), None where it decodes none or refuses the message: an adapter's ``describe`` makes readers of that
    schema, so each shape is typed as the codec types it."""
    decoder = get_codec(protocol).decoder(dict(options))
    for sample in samples:
        if not sample.jvm or sample.message is None:
            continue
        try:
            events = decoder.decode(sample.message)
        except (CdcError, ValueError):  # the codec reports it again, in the executors
            events = []
        schema = next((e.schema for e in events if isinstance(e, RowChange) and e.schema is not None), None)
        yield sample, schema


def no_typed_envelope(protocol: str, envelope: str | None) -> None:
    """Refuses a typed envelope reader (``Adapter.prepare``) for a protocol whose ``java_rows`` offers none."""
    if envelope is not None:
        raise ValueError(f"the {protocol} decode has no typed envelope reader; {envelope!r} was given")


def readable(max_bytes: int) -> Column:
    """Whether a message's value is one its protocol's decoder reads at all: valid UTF-8, of at most ``max_bytes``
    (the ``max-message-bytes`` option)."""
    from pyspark.sql import functions as F

    return F.is_valid_utf8(F.col("value").cast("string")) & within_size(max_bytes)


def documents(text: Column, envelope: str) -> Column:
    """``text`` read by ``from_json`` as the first element of ``[text,{}]``, each element an ``envelope``: with
    :func:`whole`, the envelope of a text that is one JSON document with nothing after it but white space. Spark's
    ``from_json`` reads the first document of a text and ignores the rest (``{...} x``, ``{...}}``, ``{...}{...}``),
    which the codecs refuse. What follows a document breaks that array (null), ends it early (``]``: one element) or
    adds elements (``,{...}``); only a whole document, white space after it, gives two. Keep it as a column of its
    own: each reference to the expression parses the text again."""
    from pyspark.sql import functions as F

    wrapped = F.concat(F.lit("["), text, F.lit(",{}]"))
    return F.from_json(wrapped, f"array<struct<{envelope}>>")


def whole(documents: Column) -> Column:
    """The envelope of a column of :func:`documents`, null where the text was not one whole document (the message's
    route is then the codec's, which refuses it)."""
    from pyspark.sql import functions as F

    return F.when(F.size(documents) == 2, F.try_element_at(documents, F.lit(1)))


def within_size(max_bytes: int) -> Column:
    """Whether a message's value has at most ``max_bytes`` (the ``max-message-bytes`` option): :func:`readable` for
    the Java envelope readers, which judge UTF-8 themselves (as Spark does, eight ASCII bytes at a time; Spark's
    byte-by-byte check was 8% of a Canal-JSON decode's executor time)."""
    from pyspark.sql import functions as F

    return F.length(F.col("value")) <= max_bytes


def rank(position: Column, ts: Column | None = None) -> Column:
    """The ``RANK`` of a message's row at ``position`` (its last, for the message), from its ``TS`` column (or
    ``ts``, where it is made in the same projection) and coordinates: unknown parts sort first. Every adapter's
    rank is made here: the batch's cache keeps the position alone and makes the rank again with it."""
    from pyspark.sql import functions as F

    return F.struct(
        F.coalesce(F.col(TS) if ts is None else ts, F.lit(-1).cast("long")).alias("ts"),
        F.coalesce(F.col("partition"), F.lit(0)).alias("partition"),
        F.coalesce(F.col("offset"), F.lit(0).cast("long")).alias("offset"),
        position.alias("position"),
    )


@attrs.frozen
class ParsedReader:
    """A reader of a text that is a JSON document (Simple's TIMESTAMP object). The typing reads a value's text many
    times (checks, cast, zero date) and Spark shares no work inside a conditional branch, so ``from_json`` at each
    read parsed the document again: here the text is parsed once per image (``from_json`` with ``schema``) and
    ``read`` gets the text and that parse. Called with the text alone, it parses there (a plain :data:`Reader`)."""

    schema: str
    read: Callable[[Column, Column], Typed]

    def parse(self, text: Column) -> Column:
        from pyspark.sql import functions as F

        return F.from_json(text, self.schema)

    def __call__(self, text: Column) -> Typed:
        return self.read(text, self.parse(text))


@attrs.frozen(kw_only=True)
class Sample:
    """One shape of one table in a batch: its newest rank and message to decode, and its oldest message, decoded
    when the newest is one the codec rejects (a bad value in it must not send every row of the shape to the codec:
    the JVM's checks send each row it cannot convert there)."""

    database: str
    table: str
    shape: str
    rank: tuple[int, int, int, int]
    message: Message | None
    jvm: bool  # rows of this shape are for the JVM (else the sample only teaches a schema, e.g. a BOOTSTRAP)
    fallback: Message | None = None  # None: the shape has one message, or its sample needs none

    @property
    def key(self) -> tuple[str, str, str]:
        """``(database, table, shape)``: what :meth:`Adapter.describe` gives readers for."""
        return (self.database, self.table, self.shape)


@attrs.frozen(kw_only=True)
class ShapeReaders:
    """The codec's schema for one shape, and per column a reader of its wire value and a signature (equal
    signatures read the same way from the same place, so one expression serves several shapes).

    ``image``: for typed wire values, per column the expression of its value in this shape's rows (the readers
    read it); None: the readers read the column's entry of the ``AFTER``/``BEFORE`` maps. ``sources``: the columns
    of the prepared messages that ``image`` reads (a batch whose ``prepare`` made them all can be typed with these
    readers in its shapes' pass); None where the readers read the maps. ``reusable``: later
    batches may read the shape with these readers (with ``readers_by_shape``); False where the sample did not show
    all they depend on, and the next batch's sample is described again. ``by_version``: the shape names a schema
    version and no more (the schema comes from schema messages, not from the sample): a later batch reads the
    shape with these readers only where the schemas it knows from earlier batches hold this very schema.
    """

    schema: TableSchema
    readers: Mapping[str, Reader]
    signatures: Mapping[str, Hashable]
    image: Mapping[str, Column] | None = None
    sources: frozenset[str] | None = None
    reusable: bool = True
    by_version: bool = False

    @property
    def typed(self) -> bool:
        return self.image is not None


class RowTyper(Protocol):
    """Types a table's rows with one call per message (:class:`cdc_spark.decoding.java_rows.JavaRows`)."""

    def plan(self, schema: TableSchema, shapes: Mapping[str, ShapeReaders]) -> str | None:
        """How ``schema``'s rows of ``shapes`` are typed, None where this typer cannot type them."""
        ...

    def function(self, schema: TableSchema, plan: str) -> str:
        """The name of the session's function typing by ``plan``: ``(message, shape) -> array<struct<op, bad,
        row>>``."""
        ...

    def envelope_function(self, tables: Sequence[tuple[int, TableSchema, str]]) -> str | None:
        """The name of the session's envelope reader that also types ``tables`` (index, final schema, plan) in the
        same pass, its field ``m<index>`` a table's typed rows; None where the protocol has none."""
        ...


class Adapter(Protocol):
    """A protocol's JVM decode rules (see the module docstring)."""

    protocol: str
    # Whether readers described from one sample of a shape hold for every later message of that shape (they read
    # it as the codec would, or find a value bad and send its message to the codec): a shape described in an
    # earlier batch is then not sampled again (unless its readers are not ``ShapeReaders.reusable``).
    readers_by_shape: bool

    @property
    def keeps_prepared_plans(self) -> bool:
        """Whether ``prepare`` makes its frame from an analyzed plan kept over its messages
        (:class:`~cdc_spark.decoding.kept_plans.KeptPlans`): the first stage can then keep its physical plan too,
        reading the messages through a leaf (:mod:`~cdc_spark.decoding.kept_passes`)."""
        ...

    @property
    def java_rows(self) -> RowTyper | None:
        """Types a table's rows in Java from each message's text (``prepare`` then keeps the text for the typing,
        and ``rows`` parses it again where the SQL typing is used after all); None: the Spark SQL typing."""
        ...

    def prepare(self, messages: DataFrame, envelope: str | None = None) -> DataFrame:
        """``messages`` (Kafka columns) with ``ROUTE``, ``DATABASE``, ``TABLE``, ``SHAPE``, ``RANK``, ``SAMPLE``
        and ``TS`` added; a watermark's commit ts is its ``TS``. With ``envelope`` (from ``java_rows``'
        ``envelope_function``), read by that function instead, its result kept as ``TYPED``."""
        ...

    def rows(self, prepared: DataFrame) -> DataFrame:
        """One row per change of the ``Route.JVM`` messages of ``prepared``."""
        ...

    def records(self, prepared: DataFrame) -> list[str] | None:
        """Where ``rows`` gives ``prepared``'s JVM messages as they are (one change each, and the SQL typing reads
        only columns ``prepare`` made), the columns that hold the messages' parsed values: a batch can then be
        typed in its shapes' pass, and its cache holds the typed changes, not these. None otherwise."""
        ...

    def describe(
        self, samples: Sequence[Sample], known: Sequence[TableSchema]
    ) -> dict[tuple[str, str, str], ShapeReaders | None]:
        """Readers per ``(database, table, shape)`` of the JVM samples (``known``: the schema versions of earlier
        batches; samples that are not for the JVM may teach more); None: that shape goes to the codec."""
        ...

    def expressions_key(self) -> Hashable:
        """Everything this adapter's readers capture besides each shape's schema and signatures (the protocol, its
        options, the zones): equal keys and equal shapes build equal typing expressions, which a later batch then
        reuses (:mod:`cdc_spark.decoding.reuse`)."""
        ...


@runtime_checkable
class GuessesInputs(Protocol):
    """An adapter whose ``prepare`` may take what it needs to know of a batch from earlier batches instead of a job
    over this one (TiCDC Avro: the schema ids), sending a message the guess does not cover to the codec."""

    def missed_guess(self, messages: DataFrame) -> bool:
        """Whether ``prepare`` guessed and a message of ``messages`` needs more than the guess: ``prepare`` is then
        called again and takes both. Asked only where the batch's pass leaves a residue (a guess that covered
        everything leaves none of its own)."""
        ...


_Kept = TypeVar("_Kept")


class AdapterState(Protocol):
    """What a decoder keeps for a protocol's adapters from batch to batch: each protocol's own caches, made on first
    use and cleared with the decoder (:class:`cdc_spark.decoding.decoder.Decoder`)."""

    def kept(self, name: str, make: Callable[[], _Kept]) -> _Kept:
        """The value kept under ``name`` (a protocol's own), made by ``make`` the first time."""
        ...


# a protocol's JVM rules (None: not for these options), made per batch, given the state its decoder keeps for it;
# registered under ``cdc_spark.decode_adapters`` (:mod:`cdc_spark.decoding.adapters`)
AdapterFactory = Callable[[Mapping[str, object], str, "SparkSession", AdapterState], "Adapter | None"]


__all__ = [
    "Adapter",
    "AdapterFactory",
    "AdapterState",
    "GuessesInputs",
    "ParsedReader",
    "Reader",
    "Route",
    "RowTyper",
    "Sample",
    "ShapeReaders",
    "codec_schemas",
    "documents",
    "no_typed_envelope",
    "rank",
    "readable",
    "whole",
]
