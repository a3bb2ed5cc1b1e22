package cdc.spark.merge;

import cdc.spark.plans.Columns;
import cdc.spark.plans.ScalaSeqs;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionSet;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.RowOrdering$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.LogicalRDD$;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution$;
import org.apache.spark.util.LongAccumulator;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.math.Ordering;
import scala.reflect.ClassTag$;

/**
 * A frame kept in the executors for the rest of a batch (as {@code Dataset.localCheckpoint}), which says how its rows
 * are placed wherever they proved to be.
 *
 * <p>A checkpoint forgets its plan's partitioning when the plan's last join is a full outer one (Spark cannot name the
 * key column of such a join), and a checkpoint computed under adaptive execution forgets it always. The resolve of a
 * large batch is such a join of two sides shuffled by the key into the same partitions, so its rows are placed by the
 * key; forgotten, every join of the resolved rows by the key (the target's rewrite or MERGE) shuffles them again.
 * Here each row's key is hashed as Spark's hash partitioning does while the checkpoint is written: when every row is
 * in its key's partition, the frame says it is hash partitioned by the key, and when each partition's rows also come
 * in ascending key order, that it is sorted. Nothing is said that the rows did not show.
 */
public final class KeyedCheckpoint {
  private KeyedCheckpoint() {}

  /**
   * {@code frame} computed now and kept; hash partitioned by the columns {@code keys} into {@code partitions} (and
   * sorted by them) where its rows are.
   */
  public static Dataset<Row> of(Dataset<?> frame, String[] keys, int partitions) {
    QueryExecution execution = frame.queryExecution();
    Seq<Attribute> output = execution.analyzed().output();
    int[] positions = keyPositions(output, keys);
    if (positions == null) {
      return Dataset.ofRows(frame.sparkSession(), checkpointed(frame, execution, null));
    }
    Checked checked = checks(frame, output, positions, partitions);
    LogicalRDD plan = checkpointed(frame, execution, checked);
    if (checked.misplaced.value() == 0 && plan.rdd().getNumPartitions() == partitions) {
      plan = declared(plan, positions, partitions, checked.unsorted.value() == 0);
    }
    return Dataset.ofRows(frame.sparkSession(), plan);
  }

  /**
   * {@code frame}'s rows kept as the first job that reads {@link Lazily#rows()} computes them (a write of them),
   * checked as {@link #of} checks its rows; {@link Lazily#kept()} then says how they are placed. The plan's own shuffles
   * run now. Null where a key column is not one of the frame's.
   */
  public static Lazily lazily(Dataset<?> frame, String[] keys, int partitions) {
    QueryExecution execution = frame.queryExecution();
    Seq<Attribute> output = execution.analyzed().output();
    int[] positions = keyPositions(output, keys);
    if (positions == null) {
      return null;
    }
    Checked checked = checks(frame, output, positions, partitions);
    LongAccumulator seen = frame.sparkSession().sparkContext().longAccumulator("cdc kept rows: partitions computed");
    JavaRDD<InternalRow> kept = copied(execution, "keep rows", checked, seen, false);
    LogicalRDD plan = LogicalRDD$.MODULE$.fromDataset(kept.rdd(), frame, false);
    return new Lazily(frame.sparkSession(), plan, positions, partitions, checked, seen);
  }

  /** Where each of {@code keys} is among {@code output}; null where one is not there once. */
  private static int[] keyPositions(Seq<Attribute> output, String[] keys) {
    int[] positions = new int[keys.length];
    for (int k = 0; k < keys.length; k++) {
      positions[k] = Columns.only(output, keys[k], null); // -1 for two of the name: neither is declared
      if (positions[k] < 0) {
        return null;
      }
    }
    return positions;
  }

  /** The checks of rows of {@code output} placed by the columns at {@code positions} into {@code partitions}. */
  private static Checked checks(Dataset<?> frame, Seq<Attribute> output, int[] positions, int partitions) {
    List<Attribute> key = new ArrayList<>();
    for (int position : positions) {
      key.add(output.apply(position));
    }
    Expression placement =
        new HashPartitioning(ScalaSeqs.of(new ArrayList<Expression>(key)), partitions).partitionIdExpression();
    LongAccumulator misplaced = frame.sparkSession().sparkContext().longAccumulator("cdc checkpoint: rows out of place");
    LongAccumulator unsorted = frame.sparkSession().sparkContext().longAccumulator("cdc checkpoint: rows out of order");
    return new Checked(output, placement, ascending(key), misplaced, unsorted);
  }

  /** Rows kept by the job that first reads them (see {@link #lazily}). */
  public static final class Lazily {
    private final SparkSession session;
    private final LogicalRDD plan;
    private final int[] positions;
    private final int partitions;
    private final Checked checked;
    private final LongAccumulator seen;

    Lazily(
        SparkSession session, LogicalRDD plan, int[] positions, int partitions, Checked checked, LongAccumulator seen) {
      this.session = session;
      this.plan = plan;
      this.positions = positions;
      this.partitions = partitions;
      this.checked = checked;
      this.seen = seen;
    }

    /** The rows, for the one job that computes and keeps them. */
    public Dataset<Row> rows() {
      return Dataset.ofRows(session, plan);
    }

    /**
     * The rows kept, placed by the key where each proved to be; null unless one job computed every partition once
     * (read twice, the checks would count rows twice).
     */
    public Dataset<Row> kept() {
      int count = plan.rdd().getNumPartitions();
      if (seen.value() != count) {
        return null;
      }
      LogicalRDD kept = plan;
      if (checked.misplaced.value() == 0 && count == partitions) {
        kept = declared(plan, positions, partitions, checked.unsorted.value() == 0);
      }
      return Dataset.ofRows(session, kept);
    }
  }

  /** The frame's rows computed now, copied and kept, each checked by {@code checked} where it is given. */
  private static LogicalRDD checkpointed(Dataset<?> frame, QueryExecution execution, Checked checked) {
    JavaRDD<InternalRow> kept = copied(execution, "localCheckpoint", checked, null, true);
    return LogicalRDD$.MODULE$.fromDataset(kept.rdd(), frame, false);
  }

  /**
   * The rows of {@code execution}, copied and kept as the job that reads them computes them: each row checked by
   * {@code checked} and each partition counted in {@code seen}, where they are given; computed now where {@code now}.
   */
  private static JavaRDD<InternalRow> copied(
      QueryExecution execution, String name, Checked checked, LongAccumulator seen, boolean now) {
    // one query, as Dataset.localCheckpoint runs its: the plan's own shuffles run in it too
    return SQLExecution$.MODULE$.withNewExecutionId(
        execution,
        Option.apply(name),
        () -> {
          JavaRDD<InternalRow> rows = new JavaRDD<>(execution.toRdd(), ClassTag$.MODULE$.apply(InternalRow.class));
          JavaRDD<InternalRow> copied =
              rows.mapPartitionsWithIndex((index, input) -> new Copied(input, checked, index, seen), true);
          copied.rdd().localCheckpoint();
          if (now) {
            copied.count();
          }
          return copied;
        });
  }

  /**
   * {@code plan} said to be hash partitioned into {@code partitions} by the columns at {@code key}, and sorted by them
   * in ascending order (nulls first) where {@code sorted}.
   */
  @SuppressWarnings("unchecked")
  static LogicalRDD declared(LogicalRDD plan, int[] key, int partitions, boolean sorted) {
    List<Attribute> columns = new ArrayList<>();
    for (int position : key) {
      columns.add(plan.output().apply(position));
    }
    Partitioning placed = new HashPartitioning(ScalaSeqs.of(new ArrayList<Expression>(columns)), partitions);
    Seq<Object> other = plan.otherCopyArgs();
    return new LogicalRDD(
        plan.output(),
        plan.rdd(),
        placed,
        sorted ? ScalaSeqs.of(ascending(columns)) : ScalaSeqs.of(List.<SortOrder>of()),
        false,
        plan.stream(),
        (SparkSession) other.apply(0),
        (Option<Statistics>) other.apply(1),
        (Option<ExpressionSet>) other.apply(2));
  }

  private static List<SortOrder> ascending(List<Attribute> key) {
    List<SortOrder> order = new ArrayList<>();
    for (Attribute column : key) {
      order.add(new SortOrder(column, Ascending$.MODULE$, NullsFirst$.MODULE$, ScalaSeqs.of(List.of())));
    }
    return order;
  }

  /** What is checked of each row: its partition by the key's hash, and its order after the row before it. */
  private static final class Checked implements java.io.Serializable {
    private final Seq<Attribute> output;
    private final Expression placement;
    private final List<SortOrder> order;
    private final LongAccumulator misplaced;
    private final LongAccumulator unsorted;

    Checked(
        Seq<Attribute> output,
        Expression placement,
        List<SortOrder> order,
        LongAccumulator misplaced,
        LongAccumulator unsorted) {
      this.output = output;
      this.placement = placement;
      this.order = new ArrayList<>(order);
      this.misplaced = misplaced;
      this.unsorted = unsorted;
    }
  }

  /** One partition's rows copied (the input may reuse its rows), checked as they go by. */
  private static final class Copied implements Iterator<InternalRow> {
    private final Iterator<InternalRow> input;
    private final Checked checked;
    private final int partition;
    private LongAccumulator seen; // counts the partition once it is read to its end, where given
    private final UnsafeProjection place;
    private final Ordering<InternalRow> ordering;
    private InternalRow previous;
    private long misplaced;
    private long unsorted;

    Copied(Iterator<InternalRow> input, Checked checked, int partition, LongAccumulator seen) {
      this.input = input;
      this.checked = checked;
      this.partition = partition;
      this.seen = seen;
      this.place =
          checked == null ? null : UnsafeProjection.create(ScalaSeqs.of(List.of(checked.placement)), checked.output);
      this.ordering =
          checked == null ? null : RowOrdering$.MODULE$.create(ScalaSeqs.of(checked.order), checked.output);
    }

    @Override
    public boolean hasNext() {
      boolean more = input.hasNext();
      if (!more && checked != null) { // counted once per partition, not per row
        checked.misplaced.add(misplaced);
        checked.unsorted.add(unsorted);
        misplaced = 0;
        unsorted = 0;
        if (seen != null) {
          seen.add(1);
          seen = null; // hasNext asked again at the end: counted once
        }
      }
      return more;
    }

    @Override
    public InternalRow next() {
      InternalRow row = input.next().copy();
      if (checked != null) {
        if (place.apply(row).getInt(0) != partition) {
          misplaced++;
        }
        if (previous != null && ordering.compare(previous, row) > 0) {
          unsorted++;
        }
        previous = row;
      }
      return row;
    }
  }
}
