"""Stage two of a JVM decode, in SQL: the expressions that type each table's rows into the change contract.

Every change becomes one wide row, its table's columns typed by Spark expressions built from the readers the
adapter made for each of the table's shapes (:class:`TableTyping`). Four projections (:class:`Typing`): each
column's texts looked up once; the new image's values, read once; the old image's, where they differ; the
contract assembled from those. The expressions name columns only, never a frame, so a later batch of the same
shapes reuses them (:func:`typings_key`).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cdc_core.schema import TableSchema
from cdc_spark.decoding import adapter as A
from cdc_spark.decoding.adapter import Adapter, ShapeReaders
from cdc_spark.decoding.jvm_values import Typed
from cdc_spark.decoding.reuse import Reuse
from cdc_spark.decoding.spark_types import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column


@attrs.frozen
class TableTyping:
    """How one table's rows are typed: its final schema and the readers of each of its shapes."""

    index: int
    schema: TableSchema
    shapes: Mapping[str, ShapeReaders]

    @property
    def typed(self) -> bool:
        """Whether the table's values come typed, per shape (:attr:`ShapeReaders.image`), not in text maps."""
        return any(shape.typed for shape in self.shapes.values())


@attrs.frozen
class _Read:
    """One column of one image: its value in the final schema's type, its zero-date text (None: the column's
    readers have no zero dates), and whether the wire had a value (typed images only)."""

    value: Column
    zero: Column | None
    present: Column


def _parse_of(typing: TableTyping, name: str) -> A.ParsedReader | None:
    """The column's :class:`~cdc_spark.decoding.adapter.ParsedReader` when every shape that reads its text parses
    it alike (one ``from_json`` per image then serves them all), else None (each reader parses where it reads)."""
    readers = [shape.readers.get(name) for shape in typing.shapes.values() if shape.image is None]
    parsed = [r for r in readers if isinstance(r, A.ParsedReader)]
    if not parsed or len(parsed) != len([r for r in readers if r is not None]):
        return None
    return parsed[0] if len({r.schema for r in parsed}) == 1 else None


def _parses(typing: TableTyping) -> dict[int, A.ParsedReader]:
    """By column position: the columns whose text stage one parses (:func:`_parse_of`)."""
    found = {k: _parse_of(typing, c.name) for k, c in enumerate(typing.schema.stored_columns)}
    return {k: parse for k, parse in found.items() if parse is not None}


def _parsed_text(texts: Column, image: str, k: int, parses: Mapping[int, A.ParsedReader]) -> Column | None:
    """Stage one's parse of column ``k``'s text in ``image`` (``a``: the new one, ``b``: the old one), if made."""
    return texts[f"j{image}{k}"] if k in parses else None


def _column(typing: TableTyping, name: str, text: Column | None, parsed: Column | None = None) -> _Read:
    """One column of one image, read by its shape's reader from ``text`` (the column's text in the image's map)
    or, for typed images, from the shape's own value expression, and cast to the final schema's type; ``parsed``:
    the text's parse, made once in stage one (:func:`_parse_of`)."""
    from pyspark.sql import functions as F

    target = spark_type(next(c.data_type for c in typing.schema.stored_columns if c.name == name))
    by_signature: dict[Any, list[str]] = {}
    readers: dict[Any, A.Reader] = {}
    sources: dict[Any, Column] = {}
    for shape, shape_readers in typing.shapes.items():
        reader = shape_readers.readers.get(name)
        source = text if shape_readers.image is None else shape_readers.image.get(name)
        if reader is None or source is None:
            continue
        signature = shape_readers.signatures[name]
        by_signature.setdefault(signature, []).append(shape)
        readers[signature] = reader
        sources[signature] = source
    if not readers:
        return _Read(F.lit(None).cast(target), None, F.lit(False))

    # A shape's own type to the final one: a widening, or a bad value (null where the text was not).
    def read(reader: A.Reader, source: Column) -> Typed:
        if parsed is not None and isinstance(reader, A.ParsedReader) and source is text:
            return reader.read(source, parsed)
        return reader(source)

    typed = [(shapes, read(readers[signature], sources[signature]), sources[signature])
             for signature, shapes in by_signature.items()]  # fmt: skip
    if len(typed) == 1:
        _, only, source = typed[0]
        return _Read(only.value.cast(target), only.zero, source.isNotNull())
    shape_column = F.col(A.SHAPE)
    value: Column | None = None
    zero: Column | None = None
    present: Column | None = None
    has_zero = any(part.zero is not None for _, part, _ in typed)
    for shapes, part, source in typed:
        test = shape_column.isin(*shapes)
        cast = part.value.cast(target)
        value = F.when(test, cast) if value is None else value.when(test, cast)
        present = F.when(test, source.isNotNull()) if present is None else present.when(test, source.isNotNull())
        if has_zero:
            part_zero = part.zero if part.zero is not None else F.lit(None).cast("string")
            zero = F.when(test, part_zero) if zero is None else zero.when(test, part_zero)
    assert value is not None and present is not None
    return _Read(value, zero, F.coalesce(present, F.lit(False)))


def _after_text(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.element_at(F.col(A.AFTER), F.lit(name))


def _before_text(name: str) -> Column:
    """The old image's text of ``name``: from BEFORE, or where it lacks the column, from BEFORE_BASE."""
    from pyspark.sql import functions as F

    before, base = F.col(A.BEFORE), F.col(A.BEFORE_BASE)
    key = F.lit(name)
    return F.when(base.isNotNull() & ~F.map_contains_key(before, key), F.element_at(base, key)).otherwise(
        F.element_at(before, key)
    )


def _names_in(image: Column, names: Sequence[str]) -> Column:
    """The ``names`` that are keys of ``image``, in order."""
    from pyspark.sql import functions as F

    return F.array_compact(F.array(*[F.when(F.map_contains_key(image, F.lit(n)), F.lit(n)) for n in names]))


def _struct(fields: list[Column]) -> Column:
    from pyspark.sql import functions as F

    return F.struct(*fields)


def _none() -> Column:
    from pyspark.sql import functions as F

    return F.lit(None).cast("string")


def _text_stage(typing: TableTyping, parses: Mapping[int, A.ParsedReader]) -> Column:
    """Stage one of a table: each column's text in both images, looked up in the maps once (``ta<k>``, ``tb<k>``),
    their parse where the column's readers parse JSON (``ja<k>``, ``jb<k>``), the changed columns, and whether there
    is an old image; the maps are not carried further."""
    from pyspark.sql import functions as F

    names = [c.name for c in typing.schema.stored_columns]
    image = F.when(F.col(A.OP) == "delete", F.col(A.BEFORE)).otherwise(F.col(A.AFTER))
    present = sum((F.map_contains_key(image, F.lit(n)).cast("int") for n in names), F.lit(0))
    changed = F.when(F.col(A.CHANGED_FROM).isNotNull(), _names_in(F.col(A.CHANGED_FROM), names)).when(
        image.isNotNull() & (present < len(names)),
        _names_in(image, names),  # an older, narrower schema
    )
    fields = [t for k, n in enumerate(names) for t in (_after_text(n).alias(f"ta{k}"), _before_text(n).alias(f"tb{k}"))]
    for k, parse in parses.items():
        name = names[k]
        fields += [parse.parse(_after_text(name)).alias(f"ja{k}"), parse.parse(_before_text(name)).alias(f"jb{k}")]
    return F.struct(*fields, changed.alias("changed"), F.col(A.BEFORE).isNotNull().alias("has_before"))


def _after_stage(typing: TableTyping, parses: Mapping[int, A.ParsedReader]) -> tuple[Column, list[tuple[str, bool]]]:
    """Stage two: the new image's columns read once, into a struct (``a<k>`` values, ``za<k>`` zero-date texts),
    and per column whether it can have zero dates."""
    texts = _texts(typing)
    fields: list[Column] = []
    layout: list[tuple[str, bool]] = []
    for k, column in enumerate(typing.schema.stored_columns):
        after = _column(typing, column.name, texts[f"ta{k}"], _parsed_text(texts, "a", k, parses))
        fields.append(after.value.alias(f"a{k}"))
        if after.zero is not None:
            fields.append(after.zero.alias(f"za{k}"))
        layout.append((column.name, after.zero is not None))
    return _struct(fields), layout


def _image_stage(typing: TableTyping) -> tuple[Column, list[tuple[str, bool]]]:
    """Stage one of a table whose values come typed: each column read from its shape's value (``a<k>``, ``za<k>``
    as in stage two), whether the wire had a value (``p<k>``), and the changed columns of rows whose shape has
    fewer columns than the table's schema (an older version; the Python path's rule)."""
    from pyspark.sql import functions as F

    fields: list[Column] = []
    layout: list[tuple[str, bool]] = []
    for k, column in enumerate(typing.schema.stored_columns):
        read = _column(typing, column.name, None)
        fields += [read.value.alias(f"a{k}"), read.present.alias(f"p{k}")]
        if read.zero is not None:
            fields.append(read.zero.alias(f"za{k}"))
        layout.append((column.name, read.zero is not None))
    names = [c.name for c in typing.schema.stored_columns]
    narrower: dict[tuple[str, ...], list[str]] = {}
    for shape, readers in typing.shapes.items():
        image = readers.image or {}
        present = tuple(n for n in names if n in image)
        if len(present) < len(names):
            narrower.setdefault(present, []).append(shape)
    changed: Column = F.lit(None).cast("array<string>")
    for present, shapes in narrower.items():
        listed = F.array(*[F.lit(n) for n in present]).cast("array<string>")
        changed = F.when(F.col(A.SHAPE).isin(*shapes), listed).otherwise(changed)
    return F.struct(*fields, changed.alias("changed")), layout


def _texts(typing: TableTyping) -> Column:
    from pyspark.sql import functions as F

    return F.col(f"__x{typing.index}")


def _before_stage(typing: TableTyping, layout: list[tuple[str, bool]], parses: Mapping[int, A.ParsedReader]) -> Column:
    """Stage three: the old image's columns (``b<k>``, ``zb<k>``); a text equal to the new image's reuses its
    value, so an update's full old image is read only where it differs."""
    from pyspark.sql import functions as F

    texts, after = _texts(typing), F.col(f"__va{typing.index}")
    fields: list[Column] = []
    for k, (name, has_zero) in enumerate(layout):
        same = texts[f"tb{k}"].eqNullSafe(texts[f"ta{k}"])
        before = _column(typing, name, texts[f"tb{k}"], _parsed_text(texts, "b", k, parses))
        fields.append(F.when(same, after[f"a{k}"]).otherwise(before.value).alias(f"b{k}"))
        if has_zero:
            own_zero = before.zero if before.zero is not None else _none()
            fields.append(F.when(same, after[f"za{k}"]).otherwise(own_zero).alias(f"zb{k}"))
    return _struct(fields)


def _contract_stage(typing: TableTyping, layout: list[tuple[str, bool]]) -> tuple[Column, Column]:
    """Stage four, over the others (``__x<index>``, ``__va<index>``, ``__vb<index>``): the contract's struct (its
    columns, ``_cdc_before``, changed columns, zero dates) and whether a text did not convert (null value, no
    zero date)."""
    from pyspark.sql import functions as F

    texts = _texts(typing)
    after_values, before_values_struct = F.col(f"__va{typing.index}"), F.col(f"__vb{typing.index}")
    is_delete = F.col(A.OP) == "delete"
    values: list[Column] = []
    before_values: list[Column] = []
    bad: Column = F.lit(False)
    zeros: list[tuple[str, Column]] = []
    for k, (name, has_zero) in enumerate(layout):
        after, before = after_values[f"a{k}"], before_values_struct[f"b{k}"]
        values.append(F.when(is_delete, before).otherwise(after).alias(name))
        before_values.append(before.alias(name))
        checks = (
            (after, texts[f"ta{k}"], after_values, f"za{k}"),
            (before, texts[f"tb{k}"], before_values_struct, f"zb{k}"),
        )
        for value, text, struct, zero_field in checks:
            failed = text.isNotNull() & value.isNull()
            bad = bad | (failed & struct[zero_field].isNull() if has_zero else failed)
        if has_zero:
            zeros.append((name, F.when(is_delete, before_values_struct[f"zb{k}"]).otherwise(after_values[f"za{k}"])))
    before_struct = F.when(texts["has_before"], F.struct(*before_values))
    struct = F.struct(
        *values,
        before_struct.alias("_cdc_before"),
        texts["changed"].alias("_cdc_changed_columns"),
        _zero_map(zeros).alias("_cdc_zero_dates"),
    )
    return struct, bad


def _zero_map(zeros: Sequence[tuple[str, Column]]) -> Column:
    """``_cdc_zero_dates``: column -> zero-date text, null when the row has none."""
    from pyspark.sql import functions as F

    if not zeros:
        return F.lit(None).cast("map<string,string>")
    # each entry an array of one or none, flattened: array_compact (a filter lambda) has no generated code, and its
    # projection would break the pass's whole-stage stage in two, every message's row copied between them
    none = F.array().cast("array<struct<key:string,value:string>>")
    entries = [
        F.when(c.isNotNull(), F.array(F.struct(F.lit(n).alias("key"), c.alias("value")))).otherwise(none)
        for n, c in zeros
    ]
    any_zero = F.lit(False)
    for _, c in zeros:
        any_zero = any_zero | c.isNotNull()
    return F.when(any_zero, F.map_from_entries(F.flatten(F.array(*entries))))


def _image_contract_stage(typing: TableTyping, layout: list[tuple[str, bool]]) -> tuple[Column, Column]:
    """Stage four of a table whose values come typed (over ``__va<index>``): a change has one image, the new one
    or a delete's old one; a value that did not convert (present, null, no zero date) makes the row bad."""
    from pyspark.sql import functions as F

    read = F.col(f"__va{typing.index}")
    values: list[Column] = []
    bad: Column = F.lit(False)
    zeros: list[tuple[str, Column]] = []
    for k, (name, has_zero) in enumerate(layout):
        values.append(read[f"a{k}"].alias(name))
        failed = read[f"p{k}"] & read[f"a{k}"].isNull()
        bad = bad | (failed & read[f"za{k}"].isNull() if has_zero else failed)
        if has_zero:
            zeros.append((name, read[f"za{k}"]))
    struct = F.struct(
        *values,
        F.when(F.col(A.OP) == "delete", F.struct(*values)).alias("_cdc_before"),
        read["changed"].alias("_cdc_changed_columns"),
        _zero_map(zeros).alias("_cdc_zero_dates"),
    )
    return struct, bad


@attrs.frozen
class Typing:
    """The typing projections of a batch's tables (:func:`typed_wide`), built once per :func:`typings_key`: they
    name columns only, so a later batch with the same key reuses them."""

    index: Column  # the row's table index (``__tidx``)
    first: list[Column]  # stage one: texts, or typed images read
    after: list[Column]
    before: list[Column]
    structs: list[Column]  # stage four: the contract's struct of each table
    bad: Column
    parts: Mapping[int, tuple[Column, list[Column]]]  # per table index: its rows' filter and output columns


def shape_key(readers: ShapeReaders) -> Hashable:
    image = None if readers.image is None else tuple(readers.image)
    return (readers.schema, tuple(sorted(readers.signatures.items(), key=lambda item: item[0])), image)


def typings_key(app: str | None, adapter: Adapter, typings: Sequence[TableTyping]) -> Hashable:
    """Everything the projections capture: the Spark app (its JVM objects), the adapter's protocol, options and zones,
    and per table its index, final schema and every shape's schema and signatures (by content, not identity)."""
    tables = tuple(
        (t.index, t.schema, tuple((shape, shape_key(r)) for shape, r in sorted(t.shapes.items()))) for t in typings
    )
    return (app, adapter.expressions_key(), tables)


def table_index(typings: Sequence[TableTyping]) -> Column:
    """The index of the row's table among ``typings`` (-1: none of them)."""
    from pyspark.sql import functions as F

    # the names compared as they are: a key joined of them was a string made for every message
    database, table = F.col(A.DATABASE), F.col(A.TABLE)
    index = F.lit(-1)
    for typing in typings:
        named = (database == F.lit(typing.schema.database)) & (table == F.lit(typing.schema.table))
        index = F.when(named, F.lit(typing.index)).otherwise(index)
    return index


def build_typing(typings: Sequence[TableTyping]) -> Typing:
    """The four projections of :func:`typed_wide` for ``typings``."""
    from pyspark.sql import functions as F

    index = table_index(typings)
    tidx = F.col("__tidx")
    text_typings = [t for t in typings if not t.typed]
    layouts: dict[int, list[tuple[str, bool]]] = {}
    parses = {t.index: _parses(t) for t in text_typings}
    first = [F.when(tidx == t.index, _text_stage(t, parses[t.index])).alias(f"__x{t.index}") for t in text_typings]
    for typing in typings:
        if typing.typed:
            struct, layouts[typing.index] = _image_stage(typing)
            first.append(F.when(tidx == typing.index, struct).alias(f"__va{typing.index}"))
    after_columns: list[Column] = []
    for typing in text_typings:
        struct, layouts[typing.index] = _after_stage(typing, parses[typing.index])
        after_columns.append(F.when(tidx == typing.index, struct).alias(f"__va{typing.index}"))
    before_columns = [
        F.when(tidx == t.index, _before_stage(t, layouts[t.index], parses[t.index])).alias(f"__vb{t.index}")
        for t in text_typings
    ]
    structs: list[Column] = []
    bad: Column = F.lit(False)
    for typing in typings:
        contract = _image_contract_stage if typing.typed else _contract_stage
        struct, table_bad = contract(typing, layouts[typing.index])
        structs.append(F.when(tidx == typing.index, struct).alias(f"__t{typing.index}"))
        bad = F.when(tidx == typing.index, table_bad).otherwise(bad)
    parts = {t.index: part_columns(t) for t in typings}
    return Typing(index, first, after_columns, before_columns, structs, bad, parts)


def part_columns_of(
    app: str | None, typings: Sequence[TableTyping], kept: Reuse[tuple[Column, list[Column]]]
) -> dict[int, tuple[Column, list[Column]]]:
    """Each table's :func:`part_columns`, by index, built once per Spark app and schema (kept in ``kept``)."""
    return {t.index: kept.get((app, t.index, t.schema), functools.partial(part_columns, t)) for t in typings}


def part_columns(typing: TableTyping) -> tuple[Column, list[Column]]:
    """A table's rows of the wide frame, and its change frame's columns (the contract's order). The names and the
    coordinates are made here, not kept in the wide frame: a string column costs its cache a comparison with the
    column's least and greatest value for every row (5% of an Avro decode's executor samples), and these are the
    table's own names and the message's coordinates, which the wide frame has."""
    from pyspark.sql import functions as F

    struct = F.col(f"__t{typing.index}")
    names = [c.name for c in typing.schema.stored_columns]
    columns = [
        *[struct.getField(n).alias(n) for n in names],
        *[F.col(n) for n in ("_cdc_op", "_cdc_commit_ts", "_cdc_sequence")],
        struct.getField("_cdc_before").alias("_cdc_before"),
        struct.getField("_cdc_changed_columns").alias("_cdc_changed_columns"),
        F.lit(typing.schema.database).alias("_cdc_database"),
        F.lit(typing.schema.table).alias("_cdc_table"),
        F.col("_cdc_schema_version"),
        F.col("topic").alias("_cdc_topic"),
        F.col("partition").cast("int").alias("_cdc_partition"),
        F.col("offset").alias("_cdc_offset"),
        struct.getField("_cdc_zero_dates").alias("_cdc_zero_dates"),
    ]
    return F.col("__tidx") == typing.index, columns
