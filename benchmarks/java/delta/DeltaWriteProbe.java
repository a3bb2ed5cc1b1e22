package cdc.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.DeltaOperations;
import org.apache.spark.sql.delta.OptimisticTransaction;
import org.apache.spark.sql.delta.Snapshot;
import org.apache.spark.sql.delta.VersionChecksum;
import org.apache.spark.sql.delta.actions.Action;
import org.apache.spark.sql.delta.actions.AddFile;
import org.apache.spark.sql.delta.actions.DeletionVectorDescriptor;
import org.apache.spark.sql.delta.actions.FileAction;
import org.apache.spark.sql.delta.actions.RemoveFile;
import org.apache.spark.sql.delta.actions.SetTransaction;
import org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArray;
import org.apache.spark.sql.delta.deletionvectors.RoaringBitmapArrayFormat$;
import org.apache.spark.sql.delta.storage.dv.DeletionVectorStore;
import org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore;

import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A probe, not a sink: one Delta commit per batch of a table, written without a MERGE, to time what a write that
 * already knows where each changed key's row lives would cost. {@link #withDeletionVectors} appends the new rows and
 * marks the replaced rows in inline deletion vectors of their files; {@link #rewritingFiles} writes the touched
 * files' kept rows with the new rows and removes the touched files. Both record the batch as a SetTransaction
 * action of the commit itself, so Delta's own txnVersion check (and the file-list aggregate it needs) never runs.
 */
public final class DeltaWriteProbe {
  private DeltaWriteProbe() {}

  /** {@code deletes}: one line per touched file, "file name TAB row index,row index,...". */
  public static long withDeletionVectors(
      SparkSession spark, String table, Dataset<Row> newRows, String deletes, String appId, long batch) {
    DeltaLog log = DeltaLog.forTable(spark, table);
    OptimisticTransaction txn = log.startTransaction();
    Map<String, AddFile> files = filesByName(txn.snapshot());
    List<Action> actions = new ArrayList<>();
    for (FileAction written : CollectionConverters.asJava(txn.writeFiles(newRows))) {
      actions.add(written);
    }
    DeletionVectorStore store = new HadoopFileSystemDVStore(log.newDeltaHadoopConf());
    scala.Enumeration.Value portable = RoaringBitmapArrayFormat$.MODULE$.withName("Portable");
    List<AddFile> touched = new ArrayList<>();
    for (String line : deletes.split("\n")) {
      if (line.isEmpty()) {
        continue;
      }
      String[] parts = line.split("\t");
      AddFile file = known(files, parts[0]);
      touched.add(file);
      RoaringBitmapArray rows =
          file.deletionVector() != null ? store.read(file.deletionVector(), log.dataPath()) : new RoaringBitmapArray();
      for (String row : parts[1].split(",")) {
        rows.add(Long.parseLong(row));
      }
      DeletionVectorDescriptor vector =
          DeletionVectorDescriptor.inlineInLog(rows.serializeAsByteArray(portable), rows.cardinality());
      Tuple2<AddFile, RemoveFile> replaced = file.removeRows(vector, true, true);
      actions.add(replaced._1());
      actions.add(replaced._2());
    }
    return commit(txn, actions, touched, appId, batch);
  }

  /** {@code touchedNames}: the file names, comma-separated, whose kept rows {@code data} holds beside the new rows. */
  public static long rewritingFiles(
      SparkSession spark, String table, Dataset<Row> data, String touchedNames, String appId, long batch) {
    OptimisticTransaction txn = DeltaLog.forTable(spark, table).startTransaction();
    Map<String, AddFile> files = filesByName(txn.snapshot());
    List<Action> actions = new ArrayList<>();
    for (FileAction written : CollectionConverters.asJava(txn.writeFiles(data))) {
      actions.add(written);
    }
    List<AddFile> touched = new ArrayList<>();
    for (String name : touchedNames.split(",")) {
      if (!name.isEmpty()) {
        AddFile file = known(files, name);
        touched.add(file);
        actions.add(file.remove());
      }
    }
    return commit(txn, actions, touched, appId, batch);
  }

  private static AddFile known(Map<String, AddFile> files, String name) {
    AddFile file = files.get(name);
    if (file == null) {
      throw new IllegalStateException("the table has no live file " + name);
    }
    return file;
  }

  /** The live files by name: from the version's checksum file when Delta kept them there (small tables), else the
   *  snapshot's state (a log replay). */
  private static Map<String, AddFile> filesByName(Snapshot snapshot) {
    Map<String, AddFile> files = new HashMap<>();
    Option<VersionChecksum> checksum = snapshot.checksumOpt();
    Iterable<AddFile> all =
        checksum.isDefined() && checksum.get().allFiles().isDefined()
            ? CollectionConverters.asJava(checksum.get().allFiles().get())
            : snapshot.allFiles().collectAsList();
    for (AddFile file : all) {
      files.put(new Path(file.path()).getName(), file);
    }
    return files;
  }

  private static long commit(
      OptimisticTransaction txn, List<Action> actions, List<AddFile> touched, String appId, long batch) {
    actions.add(new SetTransaction(appId, batch, Option.apply((Object) Long.valueOf(System.currentTimeMillis()))));
    txn.trackFilesRead(CollectionConverters.asScala(touched).toSeq());
    Option<scala.collection.immutable.Seq<String>> noPartitions = Option.empty();
    DeltaOperations.Write append =
        new DeltaOperations.Write(
            SaveMode.Append, noPartitions, Option.empty(), Option.empty(), Option.empty(), Option.empty(),
            Option.empty(), Option.empty(), Option.empty());
    return txn.commit(CollectionConverters.asScala(actions).toSeq(), append);
  }
}
