package cdc.spark.plans;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionSet;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag$;

/**
 * One table's rows of a batch's checkpointed wide frame, read without the other tables' rows.
 *
 * <p>A decoded batch keeps every table's typed rows in one checkpoint (a {@code LogicalRDD}), and each table's
 * change frame is a filter on it by the table's index. Spark copies every row of a checkpoint into a new row before
 * any filter sees it, and a row of a batch of many tables (a typed struct per table) is too wide for whole-stage code
 * generation, so every query of every table copied the whole batch: the reads grew with tables times rows. Here the
 * checkpoint's rows are filtered by the index before Spark's copy, so a table's queries copy its own rows only.
 *
 * <p>Called by {@code cdc_spark.batch_cache.table_rows} for each table's part of a decoded batch (the JVM decode's
 * and the codec path's). The plan above the checkpoint is kept as it is (the same column ids, still analyzed), and
 * its own filter by the index stays, so the rows are the same.
 */
public final class TableRows {
  private TableRows() {}

  /**
   * {@code frame}'s rows whose int column {@code column} is {@code value}, with the filter applied to its checkpoint;
   * null where {@code frame} is not a chain of deterministic projections and filters over one checkpoint that passes
   * {@code column} through unchanged (the caller then filters the frame itself).
   */
  public static Dataset<Row> of(Dataset<?> frame, String column, int value) {
    LogicalPlan analyzed = frame.queryExecution().analyzed();
    List<LogicalPlan> chain = new ArrayList<>();
    LogicalPlan node = analyzed;
    while (!(node instanceof LogicalRDD)) {
      if (!rowByRow(node)) {
        return null;
      }
      chain.add(node);
      node = node.children().apply(0);
    }
    LogicalRDD checkpoint = (LogicalRDD) node;
    int ordinal = Columns.only(checkpoint.output(), column, DataTypes.IntegerType);
    if (ordinal < 0 || !passedThrough(chain, analyzed.output(), checkpoint.output().apply(ordinal))) {
      return null;
    }
    LogicalPlan plan = sliced(checkpoint, ordinal, value);
    for (int i = chain.size() - 1; i >= 0; i--) {
      plan = chain.get(i).withNewChildren(ScalaSeqs.of(List.of(plan)));
    }
    plan.setAnalyzed();
    return Dataset.ofRows(frame.sparkSession(), plan);
  }

  /** Whether {@code node} maps each row to at most one row on its own: it commutes with a filter by a column. */
  private static boolean rowByRow(LogicalPlan node) {
    if (!(node instanceof Project || node instanceof Filter || node instanceof SubqueryAlias)) {
      return false;
    }
    Seq<Expression> expressions = node.expressions();
    for (int i = 0; i < expressions.size(); i++) {
      if (!expressions.apply(i).deterministic()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code output}, the top of {@code chain}, has {@code column} under its name (the caller filters the top
   * by the name), itself or renamed: a plan kept from an earlier batch and put over this batch's checkpoint gives each
   * of the new checkpoint's columns its old id ({@code AnalyzedPlans.over}), so the column reaches the top through
   * projections that only rename it.
   */
  private static boolean passedThrough(List<LogicalPlan> chain, Seq<Attribute> output, Attribute column) {
    Set<ExprId> ids = new HashSet<>();
    ids.add(column.exprId());
    for (int i = chain.size() - 1; i >= 0; i--) {
      if (chain.get(i) instanceof Project project) {
        Seq<NamedExpression> columns = project.projectList();
        for (int j = 0; j < columns.size(); j++) {
          if (columns.apply(j) instanceof Alias alias
              && alias.child() instanceof Attribute renamed
              && ids.contains(renamed.exprId())) {
            ids.add(alias.exprId());
          }
        }
      }
    }
    for (int i = 0; i < output.size(); i++) {
      Attribute top = output.apply(i);
      if (ids.contains(top.exprId()) && top.name().equals(column.name())) {
        return true;
      }
    }
    return false;
  }

  /** {@code checkpoint} over its rows whose {@code ordinal}th column is {@code value}, under the same column ids. */
  @SuppressWarnings("unchecked")
  private static LogicalRDD sliced(LogicalRDD checkpoint, int ordinal, int value) {
    JavaRDD<InternalRow> rows = new JavaRDD<>(checkpoint.rdd(), ClassTag$.MODULE$.apply(InternalRow.class));
    RDD<InternalRow> kept = rows.filter(row -> !row.isNullAt(ordinal) && row.getInt(ordinal) == value).rdd();
    // the session, statistics and constraints of the whole checkpoint: bounds that hold for a part of its rows
    Seq<Object> other = checkpoint.otherCopyArgs();
    return new LogicalRDD(
        checkpoint.output(),
        kept,
        checkpoint.outputPartitioning(),
        checkpoint.outputOrdering(),
        checkpoint.isStreaming(),
        checkpoint.stream(),
        (SparkSession) other.apply(0),
        (Option<Statistics>) other.apply(1),
        (Option<ExpressionSet>) other.apply(2));
  }
}
