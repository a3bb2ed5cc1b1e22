package cdc.spark.merge;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.LogicalRDD$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import scala.reflect.ClassTag$;

/**
 * A batch's changes folded to one row per key, by one pass over rows sorted newest first within each key.
 *
 * <p>Spark's window over the key (what {@code cdc_spark.merge.scd1.fold} writes in SQL) spends most of its time on
 * each key's frame, and a batch of 10^6 keys has 10^6 frames. Here the rows come clustered by key and sorted within a
 * key newest first (the caller's shuffle and sort), and a key's row is made as its rows go by: each group of columns
 * from the newest row whose flag (a boolean column) is true, or nulls where none is, and every other column from its
 * newest row. A group taken from a later row also gets that row's sequence in its own sequence column (null
 * otherwise: the caller reads the newest row's where the flag is true) and its flag set, so that the common case,
 * every group in the newest row, is that row's copy. Keys are compared by the bytes of their columns, so the caller
 * passes only key types whose equal values have equal bytes (no floating point, no collation).
 *
 * <p>The result is a frame over the folded rows with the sorted frame's columns, which says it is hash partitioned and
 * sorted by the key, as the caller's shuffle into a given number of partitions left it: a join by the key then
 * shuffles only its other side, into as many partitions.
 */
public final class NewestPerKey {
  private NewestPerKey() {}

  /**
   * {@code sorted}'s rows folded per key: its first {@code keys} columns are the key, column {@code sequence} the
   * change's sequence; {@code groups} holds quadruples (first column, number of columns, flag column, sequence
   * column) of the columns taken from the newest row whose flag is true; {@code partitions}: the number of
   * partitions {@code sorted} is hash partitioned into by its key.
   */
  public static Dataset<Row> of(Dataset<?> sorted, int keys, int sequence, int[] groups, int partitions) {
    StructField[] fields = sorted.schema().fields();
    DataType[] types = new DataType[fields.length];
    for (int i = 0; i < fields.length; i++) {
      types[i] = fields[i].dataType();
    }
    JavaRDD<InternalRow> rows =
        new JavaRDD<>(sorted.queryExecution().toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    JavaRDD<InternalRow> folded = rows.mapPartitions(input -> new Folding(input, types, keys, sequence, groups));
    LogicalRDD plan = LogicalRDD$.MODULE$.fromDataset(folded.rdd(), sorted, false);
    if (folded.getNumPartitions() == partitions) {
      int[] key = new int[keys];
      for (int i = 0; i < keys; i++) {
        key[i] = i;
      }
      plan = KeyedCheckpoint.declared(plan, key, partitions, true);
    }
    return Dataset.ofRows(sorted.sparkSession(), plan);
  }

  /** One partition's keys, each folded as its last row goes by. */
  private static final class Folding implements Iterator<InternalRow> {
    private final Iterator<InternalRow> input;
    private final DataType[] types;
    private final int sequence;
    private final int[] groups;
    private final UnsafeProjection keyOf;
    private final boolean[] found;
    // the next key's newest row and its key's bytes, copied (the input may reuse its rows)
    private InternalRow next;
    private UnsafeRow nextKey;

    Folding(Iterator<InternalRow> input, DataType[] types, int keys, int sequence, int[] groups) {
      this.input = input;
      this.types = types;
      this.sequence = sequence;
      this.groups = groups;
      DataType[] keyTypes = new DataType[keys];
      System.arraycopy(types, 0, keyTypes, 0, keys);
      this.keyOf = UnsafeProjection.create(keyTypes);
      this.found = new boolean[groups.length / 4];
      advance(null);
    }

    private void advance(InternalRow row) {
      InternalRow first = row;
      if (first == null && input.hasNext()) {
        first = input.next();
      }
      next = first == null ? null : first.copy();
      nextKey = first == null ? null : keyOf.apply(first).copy();
    }

    @Override
    public boolean hasNext() {
      return next != null;
    }

    @Override
    public InternalRow next() {
      if (next == null) {
        throw new NoSuchElementException();
      }
      InternalRow newest = next;
      UnsafeRow key = nextKey;
      int missing = 0;
      for (int g = 0; g < found.length; g++) {
        found[g] = newest.getBoolean(groups[4 * g + 2]);
        if (!found[g]) {
          missing++;
        }
      }
      GenericInternalRow folded = missing > 0 ? copyOf(newest) : null;
      InternalRow row = null;
      while (input.hasNext()) {
        InternalRow candidate = input.next();
        if (!keyOf.apply(candidate).equals(key)) {
          row = candidate;
          break;
        }
        for (int g = 0; missing > 0 && g < found.length; g++) {
          if (!found[g] && candidate.getBoolean(groups[4 * g + 2])) {
            found[g] = true;
            missing--;
            take(folded, candidate, groups[4 * g], groups[4 * g + 1]);
            folded.update(groups[4 * g + 2], true);
            folded.update(groups[4 * g + 3], copied(candidate, sequence));
          }
        }
      }
      for (int g = 0; missing > 0 && g < found.length; g++) {
        if (!found[g]) {
          for (int c = groups[4 * g]; c < groups[4 * g] + groups[4 * g + 1]; c++) {
            folded.setNullAt(c);
          }
        }
      }
      if (row != null) {
        advance(row);
      } else {
        next = null;
        nextKey = null;
      }
      return folded != null ? folded : newest;
    }

    private GenericInternalRow copyOf(InternalRow row) {
      GenericInternalRow copy = new GenericInternalRow(types.length);
      for (int c = 0; c < types.length; c++) {
        copy.update(c, row.isNullAt(c) ? null : row.get(c, types[c]));
      }
      return copy;
    }

    private Object copied(InternalRow row, int column) {
      return row.isNullAt(column) ? null : InternalRow.copyValue(row.get(column, types[column]));
    }

    private void take(GenericInternalRow folded, InternalRow row, int from, int count) {
      for (int c = from; c < from + count; c++) {
        folded.update(c, copied(row, c));
      }
    }
  }
}
