package cdc.spark.rows;

import cdc.spark.plans.Columns;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.types.BinaryType$;
import org.apache.spark.unsafe.Platform;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag$;

/**
 * The Confluent schema ids a batch's records name in their 5-byte headers (magic byte 0, then the id big-endian), for
 * its key and its value column: one job of one stage over the rows, each task's ids gathered in a set, where a
 * distinct of the headers as a frame is a job of two stages planned and code-generated every batch.
 */
public final class SchemaIds {
  private static final int HEADER = 5;

  private SchemaIds() {}

  /**
   * The ids of {@code frame}'s binary columns {@code key} and {@code value}, each in ascending order; null where
   * either column is missing or not binary (the caller then reads them with a frame).
   */
  public static long[][] of(Dataset<?> frame, String key, String value) {
    Seq<Attribute> output = frame.queryExecution().analyzed().output();
    int keyAt = Columns.only(output, key, BinaryType$.MODULE$);
    int valueAt = Columns.only(output, value, BinaryType$.MODULE$);
    if (keyAt < 0 || valueAt < 0) {
      return null;
    }
    JavaRDD<InternalRow> rows =
        new JavaRDD<>(frame.queryExecution().toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    List<long[][]> found = rows.mapPartitions(part -> idsIn(part, keyAt, valueAt)).collect();
    TreeSet<Long> keys = new TreeSet<>();
    TreeSet<Long> values = new TreeSet<>();
    for (long[][] task : found) {
      for (long id : task[0]) {
        keys.add(id);
      }
      for (long id : task[1]) {
        values.add(id);
      }
    }
    return new long[][] {array(keys), array(values)};
  }

  private static Iterator<long[][]> idsIn(Iterator<InternalRow> rows, int keyAt, int valueAt) {
    TreeSet<Long> keys = new TreeSet<>();
    TreeSet<Long> values = new TreeSet<>();
    while (rows.hasNext()) {
      InternalRow row = rows.next();
      add(row, keyAt, keys);
      add(row, valueAt, values);
    }
    long[][] ids = {array(keys), array(values)};
    return List.<long[][]>of(ids).iterator();
  }

  private static void add(InternalRow row, int at, TreeSet<Long> ids) {
    if (row.isNullAt(at)) {
      return;
    }
    long id = row instanceof UnsafeRow unsafe ? headerId(unsafe, at) : headerId(row.getBinary(at));
    if (id >= 0) {
      ids.add(id);
    }
  }

  /** The id of an unsafe row's record, read in place: its five bytes, not a copy of the whole record. */
  private static long headerId(UnsafeRow row, int at) {
    long offsetAndSize = row.getLong(at);
    if ((int) offsetAndSize < HEADER) {
      return -1;
    }
    Object base = row.getBaseObject();
    long start = row.getBaseOffset() + (offsetAndSize >> 32);
    byte[] header = new byte[HEADER];
    Platform.copyMemory(base, start, header, Platform.BYTE_ARRAY_OFFSET, HEADER);
    return headerId(header);
  }

  /** The id a record's header names, -1 where it is short or its magic byte is not 0 (not a Confluent record). */
  private static long headerId(byte[] data) {
    if (data.length < HEADER || data[0] != 0) {
      return -1;
    }
    // unsigned, as the header is read everywhere else
    return ((data[1] & 0xffL) << 24) | ((data[2] & 0xffL) << 16) | ((data[3] & 0xffL) << 8) | (data[4] & 0xffL);
  }

  private static long[] array(TreeSet<Long> ids) {
    return ids.stream().mapToLong(Long::longValue).toArray();
  }
}
