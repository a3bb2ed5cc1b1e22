"""Delta Lake tables written by Spark (delta-spark): the default sink of ``cdc apply``.

Tables live under the target directory (``<target>/<database>/<table>``, the SCD1 key state in
``<target>/_cdc_keys``, SCD2 state tables in ``<target>/_cdc_state/<database>/<table>``, dead letters in
``<target>/_dead_letters``) or, with the option ``catalog=NAME``, in a catalog Spark already has
(``NAME.<database>.<table>``, ``NAME.default.cdc_keys``, and ``<table>__cdc_state`` beside an SCD2 target).
A table is created by its first write (one commit, all columns nullable). Every write of a batch carries
Delta's app transaction (``txnAppId`` = the job's app id, ``txnVersion`` = the batch id): Delta itself skips a
write whose version it has seen, and the sink reads the table's transaction version to skip replays before
computing anything. The commit's user metadata records the batch's offsets.

Widened column types are written by rewriting the table with the new schema (one overwrite commit), which every
Delta reader can read; Delta's own type-widening table feature is not enabled because readers without it
(delta-rs, DuckDB's) then cannot open the table.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import attrs

from cdc_core.errors import ConfigError, StorageError
from cdc_spark.merge.statements import quote
from cdc_spark.runtime.java_names import java_class
from cdc_spark.sinks import BatchInfo
from cdc_spark.sinks.commits import TableInfo
from cdc_spark.sinks.delta_overwrite import replace_partitions
from cdc_spark.sinks.delta_partitions import PartitionFiles, list_partitions, read_partition
from cdc_spark.sinks.delta_rewrite import log_and_snapshot, rewrite_table
from cdc_spark.sinks.tables import TableSink, session_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructField, StructType

    from cdc_spark.merge.statements import Merge
    from cdc_spark.sinks.batch_write import PartitionReader
    from cdc_spark.sinks.kept_states import Placement

STATE_DIR = "_cdc_state"
KEY_STATE = "_cdc_keys"
DEAD_LETTERS = "_dead_letters"


def path_identifier(path: str) -> str:
    return f"delta.{quote(path)}"


@attrs.define
class DeltaFormat:
    """Delta tables by path under ``root``, or in ``catalog``."""

    spark: SparkSession
    root: str | None = None
    catalog: str | None = None
    name: str = "delta"
    # the last partition listing and what it was of (see _listing)
    _listed: tuple[TableInfo, tuple[str, tuple[str, ...]], PartitionFiles] | None = attrs.field(
        default=None, init=False, repr=False, eq=False
    )

    def __attrs_post_init__(self) -> None:
        if (self.root is None) == (self.catalog is None):
            raise ConfigError("the Delta sink needs a target directory or a catalog, not both")
        if self.root is not None:
            self.root = _absolute(self.root)

    def target(self, table: str) -> str:
        database, name = _split(table)
        if self.catalog is not None:
            return f"{quote(self.catalog)}.{quote(database)}.{quote(name)}"
        return path_identifier(f"{self.root}/{database}/{name}")

    def state(self, table: str) -> str:
        database, name = _split(table)
        if self.catalog is not None:
            return f"{quote(self.catalog)}.{quote(database)}.{quote(name + '__cdc_state')}"
        return path_identifier(f"{self.root}/{STATE_DIR}/{database}/{name}")

    def dead_letters(self) -> str:
        if self.catalog is not None:
            return f"{quote(self.catalog)}.`default`.`cdc_dead_letters`"
        return path_identifier(f"{self.root}/{DEAD_LETTERS}")

    def key_state(self, suffix: str) -> str:
        if self.catalog is not None:
            return f"{quote(self.catalog)}.`default`.{quote(KEY_STATE.lstrip('_') + suffix)}"
        return path_identifier(f"{self.root}/{KEY_STATE}{suffix}")

    def _location(self, name: str) -> str | None:
        """The table's directory: from a path identifier, or the catalog's (None: no such table)."""
        if name.startswith("delta.`"):
            return name[len("delta.`") : -1].replace("``", "`")
        if not self.spark.catalog.tableExists(name):
            return None
        row = self.spark.sql(f"DESCRIBE DETAIL {name}").select("location").collect()[0]
        return str(row["location"])

    def _snapshot(self, name: str) -> Any | None:
        """The table's latest Delta snapshot, its log read on the driver (no Spark job); None: no such table."""
        location = self._location(name)
        if location is None:
            return None
        snapshot = log_and_snapshot(self.spark, location)[1]
        return None if snapshot.version() < 0 else snapshot

    def describe(self, name: str, app_id: str | None) -> TableInfo | None:
        from pyspark.sql.types import StructType

        snapshot = self._snapshot(name)
        if snapshot is None:
            return None
        # the metadata action as Delta writes it to the log: one py4j call, where its configuration's entries cost
        # three each
        metadata = json.loads(snapshot.metadata().json())["metaData"]
        properties = {str(key): str(value) for key, value in (metadata.get("configuration") or {}).items()}
        schema = StructType.fromJson(json.loads(metadata["schemaString"]))
        created_ms = metadata.get("createdTime")
        created = dt.datetime.fromtimestamp(created_ms / 1000, dt.UTC) if created_ms is not None else None
        return TableInfo(
            schema=schema,
            properties=properties,
            last_batch=_last_batch(snapshot, app_id),
            created=created,
            loaded=snapshot,
        )

    def rows_by_partition(
        self, name: str, column: str, values: Sequence[str], info: TableInfo | None = None
    ) -> dict[str, int] | None:
        """From the file statistics of the version's checksum, where Delta keeps a small table's files (no Spark
        job), else of the snapshot's file list (one job); None when a file of those partitions has no row count.
        ``info``'s snapshot is read when given (no second listing of the table's log)."""
        listing = self._listing(name, column, values, info)
        return {} if listing is None else listing.rows()

    def partition_reader(
        self, name: str, column: str, values: Sequence[str], info: TableInfo
    ) -> PartitionReader | None:
        """Each of ``values``' partitions of ``info``'s version read as the Parquet files it lists for it
        (:mod:`cdc_spark.sinks.delta_partitions`: no Delta scan planned per read); None where those files are not
        all a Delta scan would read (deletion vectors, protocol features)."""
        listing = self._listing(name, column, values, info)
        if listing is None or not listing.readable:
            return None
        return functools.partial(read_partition, listing)

    def partition_files(
        self, name: str, column: str, values: Sequence[str], info: TableInfo
    ) -> dict[str, frozenset[str]] | None:
        """The files of each of ``values``' partitions, from the listing :meth:`partition_reader` reads (no second
        listing); a partition where a deletion vector marks rows deleted, or whose files a Delta scan would not read
        as they are, is left out."""
        listing = self._listing(name, column, values, info)
        return listing.paths() if listing is not None and listing.plain else None

    def _listing(self, name: str, column: str, values: Sequence[str], info: TableInfo | None) -> PartitionFiles | None:
        """The files of ``values``' partitions (None: no such table), listed once for the same ``info``: a batch
        counts the key state's rows, then reads it, from one listing."""
        last = self._listed
        if info is not None and last is not None and last[0] is info and last[1] == (column, tuple(values)):
            return last[2]
        snapshot = info.loaded if info is not None else self._snapshot(name)
        if snapshot is None:
            return None
        listing = list_partitions(self.spark, snapshot, column, values)
        if info is not None:
            self._listed = (info, (column, tuple(values)), listing)
        return listing

    def create_properties(self) -> dict[str, str]:
        return {}

    def key_state_properties(self) -> dict[str, str]:
        # no column statistics: nothing reads the key state by a column's range (its reads are by table, a partition),
        # and at 10^6 keys collecting them was a quarter of its write (0.75 s against 0.57 s); row counts are kept
        return {"delta.dataSkippingNumIndexedCols": "0"}

    def prepare(self, name: str) -> None:
        if self.catalog is not None:
            namespace = name.rsplit(".", 1)[0]
            self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {namespace}")

    def create_from(
        self,
        name: str,
        schema: StructType,
        rows: DataFrame,
        properties: dict[str, str],
        batch: BatchInfo | None,
        *,
        partitioned_by: tuple[str, ...] = (),
    ) -> None:
        """One commit that creates the table and writes its rows (columns nullable, as Delta creates them)."""
        writer = rows.write.format("delta").mode("append")
        if partitioned_by:
            writer = writer.partitionBy(*partitioned_by)
        for key, value in properties.items():
            if key.startswith("delta."):
                writer = writer.option(key, value)
        self._append(name, writer, batch)

    def insert(self, name: str, rows: DataFrame, batch: BatchInfo | None) -> None:
        """One commit that appends ``rows`` (in the table's columns) to the existing table: no data file is read."""
        self._append(name, rows.write.format("delta").mode("append"), batch)

    def rewrite(
        self,
        name: str,
        source: DataFrame,
        rule: Merge,
        batch: BatchInfo | None,
        *,
        one_task: bool = False,
        placed: Placement | None = None,
    ) -> bool:
        """A table of few files rewritten whole in the sink's own transaction (:mod:`cdc_spark.sinks.delta_rewrite`),
        its rows kept for the next batch's rewrite where ``placed`` says how ``source`` is placed."""
        location = self._location(name)
        if location is None:
            return False
        mark, metadata = _marks(batch)
        return rewrite_table(
            self.spark,
            location,
            source,
            rule,
            transaction=mark,
            user_metadata=metadata,
            one_task=one_task,
            placed=placed,
        )

    def replace_partitions(
        self, name: str, rows: DataFrame, column: str, batch: BatchInfo | None
    ) -> dict[str, frozenset[str]] | None:
        """In the sink's own transaction, the files to remove listed as the batch's reads list them
        (:mod:`cdc_spark.sinks.delta_overwrite`: no Spark job over the table's file list)."""
        location = self._location(name)
        if location is None:
            return None
        mark, metadata = _marks(batch)
        return replace_partitions(self.spark, location, rows, column, transaction=mark, user_metadata=metadata)

    def _append(self, name: str, writer: Any, batch: BatchInfo | None) -> None:
        if batch is not None:
            writer = writer.option("txnAppId", batch.app_id).option("txnVersion", str(batch.batch_id))
            writer = writer.option("userMetadata", _user_metadata(batch))
        location = self._location(name) if name.startswith("delta.`") else None
        if location is not None:
            writer.save(location)
        else:
            writer.saveAsTable(name)

    def marked(self, batch: BatchInfo | None) -> AbstractContextManager[None]:
        if batch is None:
            return session_conf(self.spark, {"spark.databricks.delta.merge.materializeSource": "none"})
        return session_conf(
            self.spark,
            {
                "spark.databricks.delta.write.txnAppId": batch.app_id,
                "spark.databricks.delta.write.txnVersion": str(batch.batch_id),
                "spark.databricks.delta.commitInfo.userMetadata": _user_metadata(batch),
                # merge sources are checkpointed by the sink: deterministic, nothing for Delta to copy
                "spark.databricks.delta.merge.materializeSource": "none",
            },
        )

    def widen(self, table: str, name: str, fields: tuple[StructField, ...]) -> None:
        from pyspark.sql import functions as F

        types = {f.name: f.dataType for f in fields}
        stored = self.spark.table(name)
        rows = stored.select(
            *[F.col(quote(c)).cast(types[c]).alias(c) if c in types else quote(c) for c in stored.columns]
        )
        writer = rows.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
        location = self._location(name)
        if name.startswith("delta.`") and location is not None:
            writer.save(location)
        else:
            writer.saveAsTable(name)

    def tables(self) -> list[str]:
        if self.catalog is not None:
            return _catalog_tables(self.spark, self.catalog)
        names: list[str] = []
        for database in _children(self.spark, self.root or ""):
            if os.path.basename(database).startswith(("_", ".")):
                continue
            for table in _children(self.spark, database):
                if _exists(self.spark, f"{table}/_delta_log"):
                    names.append(f"{os.path.basename(database)}.{os.path.basename(table)}")
        return sorted(names)

    def append(self, name: str, frame: DataFrame, batch: BatchInfo) -> None:
        writer = (
            frame.write.format("delta")
            .mode("append")
            .option("mergeSchema", "true")
            .option("txnAppId", batch.app_id)
            .option("txnVersion", str(batch.batch_id))
            .option("userMetadata", _user_metadata(batch))
        )
        location = self._location(name) if name.startswith("delta.`") else None
        try:
            if location is not None:
                writer.save(location)
            else:
                self.prepare(name)
                writer.saveAsTable(name)
        except Exception as exc:  # Spark's own errors name the cause; say which table
            raise StorageError(f"cannot append dead letters to {name}: {exc}") from exc


def _last_batch(snapshot: Any, app_id: str | None) -> int | None:
    """The app's transaction version: from the version's checksum file when Delta wrote its transactions
    there (no Spark job), else from the snapshot's state (a log replay)."""
    if app_id is None:
        return None
    checksum = snapshot.checksumOpt()
    known = checksum.get().setTransactions() if checksum.isDefined() else None
    if known is not None and known.isDefined():
        versions = known.get().iterator()
        while versions.hasNext():
            transaction = versions.next()
            if transaction.appId() == app_id:
                return int(transaction.version())
        return None
    seen = snapshot.transactions().get(app_id)
    return int(seen.get()) if seen.isDefined() else None


def _marks(batch: BatchInfo | None) -> tuple[tuple[str, int] | None, str | None]:
    """The app transaction and user metadata a commit of the sink's own records for ``batch``."""
    if batch is None:
        return None, None
    return (batch.app_id, batch.batch_id), _user_metadata(batch)


def _user_metadata(batch: BatchInfo) -> str:
    record = {"cdc.appId": batch.app_id, "cdc.batchId": batch.batch_id}
    if batch.offsets is not None:
        record["cdc.offsets"] = batch.offsets
    return json.dumps(record, sort_keys=True)


def _split(table: str) -> tuple[str, str]:
    database, dot, name = table.partition(".")
    if not dot or not database or not name:
        raise ConfigError(f"table {table!r}: expected database.table")
    return database, name


def _absolute(path: str) -> str:
    """Local paths made absolute (Spark resolves relative ones against its own working directory)."""
    return path.rstrip("/") if "://" in path else os.path.abspath(path)


def _hadoop(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm: Any = spark._jvm
    hadoop_path = java_class(jvm, "org.apache.hadoop.fs.Path")(path)
    return hadoop_path.getFileSystem(spark._jsc.hadoopConfiguration()), hadoop_path


def _exists(spark: SparkSession, path: str) -> bool:
    fs, hadoop_path = _hadoop(spark, path)
    return bool(fs.exists(hadoop_path))


def _children(spark: SparkSession, path: str) -> Iterator[str]:
    """Sub-directories of ``path`` on whatever file system it is on (local, HDFS, object stores)."""
    fs, hadoop_path = _hadoop(spark, path)
    if not fs.exists(hadoop_path):
        return
    for status in fs.listStatus(hadoop_path):
        if status.isDirectory():
            yield f"{path.rstrip('/')}/{status.getPath().getName()}"


def _catalog_tables(spark: SparkSession, catalog: str) -> list[str]:
    names: list[str] = []
    for row in spark.sql(f"SHOW NAMESPACES IN {quote(catalog)}").collect():
        namespace = str(row[0])
        for table in spark.sql(f"SHOW TABLES IN {quote(catalog)}.{quote(namespace)}").collect():
            name = str(table["tableName"])
            if not name.endswith("__cdc_state") and not name.startswith(("cdc_dead_letters", "cdc_keys")):
                names.append(f"{namespace}.{name}")
    return sorted(names)


def delta_sink(spark: SparkSession, target: str, options: Mapping[str, str]) -> TableSink:
    """Entry point ``delta`` of ``cdc_spark.sinks``: Delta tables under ``target`` or in ``catalog=``."""
    catalog = options.get("catalog")
    return TableSink(DeltaFormat(spark, root=None if catalog else target, catalog=catalog))


__all__ = ["DEAD_LETTERS", "KEY_STATE", "STATE_DIR", "DeltaFormat", "delta_sink", "path_identifier"]
