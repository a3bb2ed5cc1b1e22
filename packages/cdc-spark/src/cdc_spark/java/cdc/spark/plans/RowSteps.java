package cdc.spark.plans;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.MapPartitionsRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import scala.Function3;
import scala.collection.Iterator;
import scala.reflect.ClassTag;

/**
 * The partition functions a row-by-row physical plan put between its leaf's RDD and its output RDD, kept to run
 * over the next batch's leaf with nothing generated again.
 *
 * <p>Executing a kept plan over a new leaf ({@link PhysicalPlans#checkpoint}) makes each whole-stage code
 * generation write its Java source again on the driver: the same text every batch, found in the compiled-code
 * cache only after it is written. The RDDs that execution returns are map-partitions steps over the leaf, each a
 * function of the partition's rows that compiles that source in the task. Those functions are kept here and put
 * over the next leaf as new RDDs. A step's metrics keep counting in the first run's metric objects.
 *
 * <p>Only a chain of map-partitions steps down to the leaf is kept: anything else (a shuffle, a union of RDDs, a
 * zip) holds state of its own run.
 */
final class RowSteps {
  // a Spark whose map-partitions step has other fields or constructors keeps no steps (its plans run as before)
  private static final Field FUNCTION = field("f");
  private static final Field BARRIER = field("isFromBarrier");
  private static final Field ORDER_SENSITIVE = field("isOrderSensitive");
  private static final Constructor<?> STEP = constructor();

  /** One step: its partition function, its flags and the class of the rows it makes. */
  private record Step(
      Function3<TaskContext, Object, Iterator<Object>, Iterator<Object>> function,
      boolean preservesPartitioning,
      boolean fromBarrier,
      boolean orderSensitive,
      ClassTag<?> rows) {}

  private final List<Step> steps; // from the leaf up

  private RowSteps(List<Step> steps) {
    this.steps = steps;
  }

  /**
   * The steps from {@code leaf} up to {@code output}; null where a step is not a map-partitions step over one parent
   * or the chain does not end at {@code leaf}.
   */
  @SuppressWarnings("unchecked")
  static RowSteps between(RDD<?> output, RDD<?> leaf) {
    if (FUNCTION == null || BARRIER == null || ORDER_SENSITIVE == null || STEP == null) {
      return null;
    }
    List<Step> steps = new ArrayList<>();
    RDD<?> at = output;
    while (at != leaf) {
      if (at == null || at.getClass() != MapPartitionsRDD.class || at.isCheckpointed()) {
        return null;
      }
      MapPartitionsRDD<?, ?> step = (MapPartitionsRDD<?, ?>) at;
      try {
        steps.add(
            0,
            new Step(
                (Function3<TaskContext, Object, Iterator<Object>, Iterator<Object>>) FUNCTION.get(step),
                step.partitioner().isDefined(),
                BARRIER.getBoolean(step),
                ORDER_SENSITIVE.getBoolean(step),
                step.elementClassTag()));
      } catch (IllegalAccessException e) {
        return null;
      }
      at = step.prev();
    }
    return steps.isEmpty() ? null : new RowSteps(List.copyOf(steps));
  }

  /** The kept steps over {@code leaf}: the rows the kept plan makes of it. */
  @SuppressWarnings("unchecked")
  RDD<InternalRow> over(RDD<?> leaf) {
    RDD<?> at = leaf;
    try {
      for (Step step : steps) {
        at =
            (RDD<?>)
                STEP.newInstance(
                    at,
                    step.function(),
                    step.preservesPartitioning(),
                    step.fromBarrier(),
                    step.orderSensitive(),
                    step.rows(),
                    at.elementClassTag());
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a kept step could not be put over the next batch's rows", e);
    }
    return (RDD<InternalRow>) at;
  }

  private static Field field(String name) {
    try {
      Field found = MapPartitionsRDD.class.getDeclaredField(name);
      found.setAccessible(true);
      return found;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static Constructor<?> constructor() {
    // (prev, function, preservesPartitioning, isFromBarrier, isOrderSensitive, its rows' class, prev's rows' class)
    Constructor<?>[] all = MapPartitionsRDD.class.getConstructors();
    return all.length == 1 && all[0].getParameterCount() == 7 ? all[0] : null;
  }
}
