package cdc.spark.plans;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * An analyzed statement over temporary views, reused over other frames of the same columns: each view's plan in the
 * statement is replaced by a frame's, whose columns take the ids of the view's, and the plan is marked analyzed, so
 * Spark does not parse or analyze it again. Analysis is most of the cost of planning a statement of hundreds of
 * columns, and a statement of the same text over frames of the same schemas analyzes to the same plan but for its
 * leaves.
 *
 * <p>Called from {@code cdc_spark.merge.analyzed_plans}, which keys plans by the statement's text and its frames'
 * schemas.
 */
public final class AnalyzedPlans {
  private AnalyzedPlans() {}

  /**
   * {@code analyzed}, a statement's analyzed plan over the temporary views {@code views}, over {@code frames} (one a
   * view, in order) instead, as a frame of {@code session}; null where a view is not read exactly once in the
   * plan's tree or a frame's columns do not have its view's types, nullability and metadata (the caller then
   * plans the statement anew).
   */
  public static Dataset<Row> over(
      SparkSession session, LogicalPlan analyzed, List<String> views, List<Dataset<?>> frames) {
    if (views.size() != frames.size()) {
      throw new IllegalArgumentException(views.size() + " views but " + frames.size() + " frames");
    }
    Map<String, LogicalPlan> replacements = new HashMap<>();
    for (int i = 0; i < views.size(); i++) {
      replacements.put(views.get(i), frames.get(i).queryExecution().analyzed());
    }
    Map<String, Integer> reads = new HashMap<>();
    LogicalPlan plan = substituted(analyzed, replacements, reads);
    if (plan == null || !reads.keySet().equals(replacements.keySet())) {
      return null;
    }
    for (int count : reads.values()) {
      if (count != 1) {
        return null; // a view read twice would give two sides of a join the same column ids
      }
    }
    plan.setAnalyzed();
    return Dataset.ofRows(session, plan);
  }

  /** {@code node} with every view of {@code replacements} under it replaced; null where a frame does not fit. */
  private static LogicalPlan substituted(
      LogicalPlan node, Map<String, LogicalPlan> replacements, Map<String, Integer> reads) {
    if (node instanceof SubqueryAlias view && replacements.containsKey(view.alias())) {
      reads.merge(view.alias(), 1, Integer::sum);
      LogicalPlan renamed = renamed(view.child(), replacements.get(view.alias()));
      return renamed == null ? null : view.withNewChildren(ScalaSeqs.of(List.of(renamed)));
    }
    Seq<LogicalPlan> children = node.children();
    if (children.isEmpty()) {
      return node;
    }
    List<LogicalPlan> replaced = new ArrayList<>(children.size());
    boolean changed = false;
    for (int i = 0; i < children.size(); i++) {
      LogicalPlan child = children.apply(i);
      LogicalPlan now = substituted(child, replacements, reads);
      if (now == null) {
        return null;
      }
      changed |= now != child;
      replaced.add(now);
    }
    // a subtree without the views is kept as it is: the same objects, already analyzed
    return changed ? node.withNewChildren(ScalaSeqs.of(replaced)) : node;
  }

  /**
   * {@code fresh}'s columns under the names and ids of {@code old}'s, the columns the rest of the plan refers to;
   * null where they differ in number, type, nullability or metadata.
   */
  private static LogicalPlan renamed(LogicalPlan old, LogicalPlan fresh) {
    Seq<Attribute> before = old.output();
    Seq<Attribute> after = fresh.output();
    if (before.size() != after.size()) {
      return null;
    }
    List<NamedExpression> columns = new ArrayList<>(before.size());
    Seq<String> none = ScalaSeqs.of(List.of());
    for (int i = 0; i < before.size(); i++) {
      Attribute was = before.apply(i);
      Attribute is = after.apply(i);
      if (!was.dataType().equals(is.dataType())
          || was.nullable() != is.nullable()
          || !was.metadata().equals(is.metadata())) {
        return null;
      }
      columns.add(new Alias(is, was.name(), was.exprId(), none, Option.empty(), none));
    }
    return new Project(ScalaSeqs.of(columns), fresh);
  }
}
