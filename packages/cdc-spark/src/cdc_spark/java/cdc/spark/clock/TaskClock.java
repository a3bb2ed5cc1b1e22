package cdc.spark.clock;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The running clock of one task, without a sort: called row after row with {@code (topic number, partition, offset,
 * commit ts)}, it returns the newest commit ts among the rows this task read before, of the same topic-partition at
 * a lower offset (null where there is none). Spark's Kafka source reads each topic-partition's offset range in
 * offset order, so within a task that is the running maximum a window would sort for.
 *
 * <p>Rows of one message (its changes) repeat its offset and take the same clock. An offset lower than the last one
 * of its topic-partition in this task returns {@link #DISORDER}: the input is not in offset order, and the caller
 * sorts instead ({@code cdc_spark.decoding.task_clock}). A null offset is disorder too. So is a commit ts older than
 * the newest before it: the partition is not in commit order (a tail sent again), and a change without a ts there
 * is ordered no later than the next ts after it, which only a sort finds.
 *
 * <p>The state is the instance's: Spark deserializes a function for every task, so each task starts empty. The
 * function is registered as non-deterministic ({@link #function}), so that Spark calls it for every row, in the order
 * it reads them, and moves no filter below it.
 */
public final class TaskClock implements UDF4<Integer, Integer, Long, Long, Long> {
  private static final long serialVersionUID = 1L;

  /** Returned for a row whose offset or commit ts goes back: no clock can be read without sorting. */
  public static final long DISORDER = Long.MIN_VALUE;

  /** One topic-partition's state: its last offset, the clock before that offset and the newest ts up to it. */
  private static final class Partition {
    long offset = Long.MIN_VALUE;
    Long before;
    Long newest;
  }

  /** The function to register: non-deterministic, as its state requires. */
  public static UserDefinedFunction function() {
    return functions.udf(new TaskClock(), DataTypes.LongType).asNondeterministic();
  }

  private transient Map<Long, Partition> partitions;
  // The last topic-partition's key and state: a task reads one topic-partition after another, row after row
  private transient long lastKey;
  private transient Partition last;

  @Override
  public Long call(Integer topic, Integer partition, Long offset, Long ts) {
    if (offset == null) {
      return DISORDER;
    }
    long key = ((long) (topic == null ? -1 : topic) << 32) | ((partition == null ? -1 : partition) & 0xFFFFFFFFL);
    Partition state = last != null && key == lastKey ? last : partitionOf(key);
    if (offset < state.offset) {
      return DISORDER;
    }
    if (offset > state.offset) {
      state.offset = offset;
      state.before = state.newest;
    }
    if (ts != null && state.newest != null && ts < state.newest) {
      return DISORDER;
    }
    if (ts != null && (state.newest == null || ts > state.newest)) {
      state.newest = ts;
    }
    return state.before;
  }

  private Partition partitionOf(long key) {
    if (partitions == null) {
      partitions = new HashMap<>();
    }
    Partition state = partitions.computeIfAbsent(key, k -> new Partition());
    lastKey = key;
    last = state;
    return state;
  }
}
