package cdc.spark.plans;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.CreateArray;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.Seq;

/**
 * A kept analyzed plan given this batch's values of its marked lookups.
 *
 * <p>A decode's frames after the shapes' pass look up numbers that change every batch (each partition's clock,
 * each task's seed) in arrays of long literals ({@code cdc_spark.decoding.literal_lookup}). Such a frame's
 * analyzed plan is otherwise the same from batch to batch, so it is kept; a marked lookup's array ends with its
 * marker (a long no lookup reads: after the values and the null a missing key reads), and here every array that
 * ends with a marker takes the values given for it. The plan stays analyzed: only literals change, of the type
 * they had.
 */
public final class LookupValues {
  private LookupValues() {}

  /**
   * {@code frame} with each marked array's values replaced: {@code values[i]} (numbers, null for none) for the
   * array ending in {@code markers[i]}; null where a marker's array is not found exactly once or its number of values
   * differs (the caller then builds the frame anew).
   */
  public static Dataset<Row> of(Dataset<?> frame, List<Object> markerList, List<List<Object>> values) {
    // numbers from Python come as Integer or Long, by size
    long[] markers = new long[markerList.size()];
    for (int i = 0; i < markers.length; i++) {
      markers[i] = ((Number) markerList.get(i)).longValue();
    }
    if (markers.length != values.size()) {
      throw new IllegalArgumentException(markers.length + " markers but " + values.size() + " value lists");
    }
    int[] found = new int[markers.length];
    boolean[] fits = {true};
    LogicalPlan plan =
        replaced(frame.queryExecution().analyzed(), markers, values, found, fits);
    for (int count : found) {
      if (count != 1) {
        return null;
      }
    }
    if (!fits[0]) {
      return null;
    }
    plan.setAnalyzed();
    return Dataset.ofRows(frame.sparkSession(), plan);
  }

  private static LogicalPlan replaced(
      LogicalPlan node, long[] markers, List<List<Object>> values, int[] found, boolean[] fits) {
    // Catalyst's own walk: a node whose children and expressions come back the same is kept as it is
    LogicalPlan here =
        node.mapExpressions(expression -> replaced(expression, markers, values, found, fits));
    return here.mapChildren(child -> replaced(child, markers, values, found, fits));
  }

  private static Expression replaced(
      Expression expression, long[] markers, List<List<Object>> values, int[] found, boolean[] fits) {
    if (expression instanceof CreateArray array) {
      int which = markerOf(array, markers);
      if (which >= 0) {
        found[which]++;
        List<Object> given = values.get(which);
        // the values, the null a missing key reads, the marker
        if (array.children().size() != given.size() + 2) {
          fits[0] = false;
          return expression;
        }
        List<Expression> items = new ArrayList<>(given.size() + 2);
        for (Object value : given) {
          Long number = value == null ? null : ((Number) value).longValue();
          items.add(Literal.create(number, DataTypes.LongType));
        }
        items.add(Literal.create(null, DataTypes.LongType));
        items.add(Literal.create(markers[which], DataTypes.LongType));
        return array.withNewChildren(ScalaSeqs.of(items));
      }
    }
    return expression.mapChildren(child -> replaced(child, markers, values, found, fits));
  }

  /** Which of {@code markers} ends {@code array} (a long literal of the array's element type), or -1. */
  private static int markerOf(CreateArray array, long[] markers) {
    Seq<Expression> items = array.children();
    if (items.isEmpty() || !(items.last() instanceof Literal last)) {
      return -1;
    }
    if (!DataTypes.LongType.equals(last.dataType()) || !(last.value() instanceof Long marker)) {
      return -1;
    }
    for (int i = 0; i < markers.length; i++) {
      if (markers[i] == marker) {
        return i;
      }
    }
    return -1;
  }
}
