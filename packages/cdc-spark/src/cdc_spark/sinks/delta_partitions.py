"""Partitions of a Delta version read from the files it lists for them, not through a Delta scan.

A batch of SCD1 tables reads the shared key state once per table it changes (:mod:`cdc_spark.sinks.scd1_batch`),
each time one partition. Read through Delta, every such read plans a scan of its own: Delta's ``PrepareDeltaScan``
rule loads the table's latest snapshot and filters its file list for the partition with a Spark job, 47 ms of the
driver a table (Spark's rule timings over a batch of 50 tables). The batch has loaded the key state's version
already (``describe``); :func:`list_partitions` lists the files of all its tables' partitions at once, from the
version's checksum where Delta keeps the list there (no Spark job) or with one job over the version's file list,
and :func:`read_partition` reads one partition's files: through a relation Delta builds from their ``AddFile``s
where the checksum gave them (:func:`~cdc_spark.sinks.delta_rewrite.files_frame`: no path looked up), else as plain
Parquet with the partition's value as the partition column. :func:`partition_actions` gives the ``AddFile``s of
some partitions, for a commit that removes them (:mod:`cdc_spark.sinks.delta_overwrite`).

That is what Delta reads for the version as long as no file has rows deleted by a deletion vector and the
protocol asks for nothing a plain Parquet read would miss (the rule of :mod:`cdc_spark.sinks.delta_rewrite`);
otherwise the listing is not readable and the caller reads through Delta.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cdc_spark.local_frames import no_rows
from cdc_spark.merge.statements import literal, quote
from cdc_spark.runtime.java_names import java_class
from cdc_spark.sinks.delta_rewrite import checksum_files, files_frame, partitioned_plainly

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


@attrs.frozen
class ListedFile:
    """One data file of a listed partition."""

    value: str  # the partition column's value
    path: str  # as the log writes it: relative to the table, URI-escaped, or absolute
    rows: int | None  # from the file's statistics (None: not recorded)
    deleted_rows: bool  # a deletion vector marks some of its rows deleted
    action: Any = attrs.field(default=None, eq=False, repr=False)  # Delta's ``AddFile`` (JVM), where listed as one


@attrs.frozen
class PartitionFiles:
    """The data files of some partitions (by ``column``'s value) of one version of a Delta table."""

    location: str  # the table's directory, which relative file paths are under
    schema: StructType  # the table's columns, in order
    column: str
    files: tuple[ListedFile, ...]
    plain: bool  # the table's protocol and partitioning let its files be read as plain Parquet
    snapshot: Any = attrs.field(default=None, eq=False, repr=False)  # the listed version (Delta's ``Snapshot``)

    @property
    def readable(self) -> bool:
        """Whether :func:`read_partition` gives what a Delta scan of the version gives."""
        return self.plain and not any(f.deleted_rows for f in self.files)

    def paths(self) -> dict[str, frozenset[str]]:
        """The files' paths by partition value, of the partitions where no deletion vector marks rows deleted."""
        paths: dict[str, set[str]] = {}
        marked: set[str] = set()
        for listed in self.files:
            paths.setdefault(listed.value, set()).add(listed.path)
            if listed.deleted_rows:
                marked.add(listed.value)
        return {value: frozenset(found) for value, found in paths.items() if value not in marked}

    def rows(self) -> dict[str, int] | None:
        """Rows by partition value (a value without files left out); None where a file's count is missing."""
        counted: dict[str, int] = {}
        for listed in self.files:
            if listed.rows is None:
                return None
            counted[listed.value] = counted.get(listed.value, 0) + listed.rows
        return counted


def list_partitions(spark: SparkSession, snapshot: Any, column: str, values: Sequence[str]) -> PartitionFiles:
    """The files of ``snapshot``'s partitions whose ``column`` is one of ``values``: from the version's checksum
    when it lists the files (no Spark job), else one Spark job over the version's file list (file metadata only)."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(snapshot.metadata().schemaString()))
    plain = partitioned_plainly(snapshot, column)
    listed = checksum_files(snapshot)
    wanted = set(values)
    if listed is not None:
        files = tuple(_checksum_files(listed.iterator(), column, wanted))
    else:
        files = tuple(_logged_files(spark, snapshot, column, wanted))
    location = str(snapshot.deltaLog().dataPath().toString())
    return PartitionFiles(location=location, schema=schema, column=column, files=files, plain=plain, snapshot=snapshot)


def read_partition(listing: PartitionFiles, spark: SparkSession, value: str) -> DataFrame:
    """The rows of the partition ``value`` of the listed version, in the table's columns, read in ``spark``. Only a
    :attr:`~PartitionFiles.readable` listing is read so (otherwise read the table through Delta)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    if not listing.readable:
        raise ValueError(f"the files listed under {listing.location} are not all a Delta scan reads")
    schema = listing.schema
    chosen = [f for f in listing.files if f.value == value]
    if not chosen:
        return no_rows(spark, schema)
    if listing.snapshot is not None and all(f.action is not None for f in chosen):
        return files_frame(spark, listing.snapshot, [f.action for f in chosen], schema)
    data = StructType([f for f in schema.fields if f.name != listing.column])
    stored = spark.read.schema(data).parquet(*_absolute(spark, listing.location, [f.path for f in chosen]))
    partition = F.lit(value).cast(schema[listing.column].dataType).alias(listing.column)
    return stored.select(*[partition if f.name == listing.column else F.col(quote(f.name)) for f in schema.fields])


def partition_actions(snapshot: Any, column: str, values: Iterable[str]) -> list[Any]:
    """The Delta ``AddFile``s (JVM objects, what a commit removes) of ``snapshot``'s partitions whose ``column`` is
    one of ``values``: from the version's checksum when it lists the files (no Spark job), else collected to the
    driver by one Spark job over the version's file list."""
    wanted = set(values)
    listed = checksum_files(snapshot)
    if listed is not None:
        files = listed.iterator()
    elif wanted:
        files = snapshot.allFiles().where(_in_values(column, wanted)).collectAsList().iterator()
    else:
        return []
    return [added for added, _ in _in_partitions(files, column, wanted)]


def _in_partitions(files: Any, column: str, values: set[str]) -> Iterable[tuple[Any, str]]:
    """The Delta ``AddFile``s of a JVM iterator whose ``column`` is one of ``values``, with that value."""
    while files.hasNext():
        added = files.next()
        found = added.partitionValues().get(column)
        value = str(found.get()) if found.isDefined() else None
        if value is not None and value in values:
            yield added, value


def _checksum_files(files: Any, column: str, values: set[str]) -> Iterable[ListedFile]:
    """The Delta ``AddFile``s of a JVM iterator whose ``column`` is one of ``values``."""
    for added, value in _in_partitions(files, column, values):
        stats = added.stats()
        counted = json.loads(stats).get("numRecords") if stats else None
        yield ListedFile(
            value=value,
            path=str(added.path()),
            rows=None if counted is None else int(counted),
            deleted_rows=added.deletionVector() is not None,
            action=added,
        )


def _logged_files(spark: SparkSession, snapshot: Any, column: str, values: set[str]) -> Iterable[ListedFile]:
    """As :func:`_checksum_files`, from the version's file list (one Spark job; one row per data file)."""
    from pyspark.sql import DataFrame

    if not values:
        return
    files = DataFrame(snapshot.allFiles().toDF(), spark)
    chosen = files.where(_in_values(column, values)).selectExpr(
        f"{_value_of(column)} AS value",
        "path",
        "CAST(get_json_object(stats, '$.numRecords') AS BIGINT) AS rows",
        "deletionVector IS NOT NULL AS deleted_rows",
    )
    for row in chosen.collect():
        yield ListedFile(
            value=str(row["value"]),
            path=str(row["path"]),
            rows=None if row["rows"] is None else int(row["rows"]),
            deleted_rows=bool(row["deleted_rows"]),
        )


def _value_of(column: str) -> str:
    """SQL of a file's value of the partition ``column`` in Delta's file list (``AddFile`` rows)."""
    return f"partitionValues[{literal(column)}]"


def _in_values(column: str, values: Iterable[str]) -> str:
    """SQL condition on Delta's file list: the file's ``column`` is one of ``values``."""
    return f"{_value_of(column)} IN ({', '.join(literal(v) for v in sorted(values))})"


def _absolute(spark: SparkSession, location: str, paths: Iterable[str]) -> list[str]:
    """The logged paths as Hadoop reads them: relative ones under ``location``, URI escapes undone (Delta's rule)."""
    jvm: Any = spark._jvm
    operations = java_class(jvm, "org.apache.spark.sql.delta.util.DeltaFileOperations")
    return [str(operations.absolutePath(location, path).toString()) for path in paths]


__all__ = ["ListedFile", "PartitionFiles", "list_partitions", "partition_actions", "read_partition"]
