package cdc.spark.plans;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.RDDScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.exchange.Exchange;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag$;

/**
 * A frame's physical plan over one leaf of rows, kept and run again over the next batch's rows of the same columns.
 *
 * <p>A decode builds its first stage the same way every batch, and its analyzed plan is kept ({@link
 * AnalyzedPlans}); the optimizer and the planner still went over its hundreds of expressions every batch. Where the
 * stage reads its messages through a leaf made by {@link #leaf} (the messages' rows as an RDD), its physical plan is
 * the same every batch but for that leaf's RDD: {@link #checkpoint} puts the next batch's RDD in its place and keeps
 * the rows as {@code Dataset.localCheckpoint} does, with nothing planned again; after its first run, with no code
 * generated again either ({@link RowSteps}). Only a plan that runs row by row over that one leaf is kept: no
 * exchange, no subquery, no adaptive plan (each of those holds state of one run).
 *
 * <p>Called from {@code cdc_spark.decoding.kept_passes}, which keys kept plans by the kept analyzed plans the frame
 * was made of.
 */
public final class PhysicalPlans {
  private final SparkPlan plan;
  private final RDDScanExec leaf;
  private final Seq<Attribute> output;
  private volatile RowSteps steps; // the plan's steps over its leaf, once a run has shown them (RowSteps)
  private int replayed;

  private PhysicalPlans(SparkPlan plan, RDDScanExec leaf, Seq<Attribute> output) {
    this.plan = plan;
    this.leaf = leaf;
    this.output = output;
  }

  /**
   * {@code frame}'s rows as a leaf over its RDD, under its columns' ids: planned now (a scan of a source is quick to
   * plan), read where a job reads the leaf.
   */
  public static Dataset<Row> leaf(Dataset<?> frame) {
    QueryExecution execution = frame.queryExecution();
    SparkSession session = frame.sparkSession();
    LogicalRDD rows = rowsOf(execution.analyzed().output(), execution.toRdd(), session);
    return Dataset.ofRows(session, rows);
  }

  /**
   * {@code frame}'s physical plan, kept to run over other rows of {@code leaf}'s columns; null where {@code frame}
   * does not read {@code leaf} (made by {@link #leaf}) exactly once and nothing else, or its plan holds an exchange,
   * a subquery or an adaptive plan.
   */
  public static PhysicalPlans of(Dataset<?> frame, Dataset<?> leaf) {
    if (!(leaf.queryExecution().analyzed() instanceof LogicalRDD rows)) {
      return null;
    }
    SparkPlan executed = frame.queryExecution().executedPlan();
    List<RDDScanExec> scans = new ArrayList<>();
    if (!rowByRow(executed, rows.rdd(), scans) || scans.size() != 1) {
      return null;
    }
    return new PhysicalPlans(executed, scans.get(0), frame.queryExecution().analyzed().output());
  }

  /**
   * The kept plan run over {@code next}'s rows (a frame made by {@link #leaf}), kept in the executors for the batch
   * and computed where it is first read, as {@code localCheckpoint(eager=False)} does; null where {@code next}'s
   * columns are not the kept leaf's (count, types, nullability).
   */
  public Dataset<Row> checkpoint(Dataset<?> next) {
    if (!(next.queryExecution().analyzed() instanceof LogicalRDD rows) || !sameColumns(rows.output())) {
      return null;
    }
    SparkSession session = next.sparkSession();
    RowSteps kept = steps;
    RDD<InternalRow> computed;
    if (kept != null) {
      computed = kept.over(rows.rdd());
      replayed++;
    } else {
      // built and executed as the session's own plan would be: its settings (code generation's among them) apply
      computed = session.withActive(() -> swapped(plan, rows.rdd()).execute());
      steps = RowSteps.between(computed, rows.rdd());
    }
    JavaRDD<InternalRow> copied =
        new JavaRDD<>(computed, ClassTag$.MODULE$.apply(InternalRow.class)).map(InternalRow::copy);
    copied.rdd().localCheckpoint();
    return Dataset.ofRows(session, rowsOf(output, copied.rdd(), session));
  }

  /** How many runs put the steps of an earlier run over their rows ({@link RowSteps}), planning nothing. */
  public int replayed() {
    return replayed;
  }

  private static LogicalRDD rowsOf(Seq<Attribute> output, RDD<InternalRow> rdd, SparkSession session) {
    // no partitioning, ordering, statistics or constraints: none is known of the next batch's rows
    return new LogicalRDD(
        output,
        rdd,
        new UnknownPartitioning(0),
        ScalaSeqs.of(List.of()),
        false,
        Option.empty(),
        session,
        Option.empty(),
        Option.empty());
  }

  /** Whether {@code node} runs row by row over scans of {@code rdd} only, each of them added to {@code scans}. */
  private static boolean rowByRow(SparkPlan node, RDD<?> rdd, List<RDDScanExec> scans) {
    if (node instanceof AdaptiveSparkPlanExec || node instanceof Exchange || !node.subqueries().isEmpty()) {
      return false;
    }
    Seq<SparkPlan> children = node.children();
    if (children.isEmpty()) {
      if (node instanceof RDDScanExec scan && scan.rdd() == rdd) {
        scans.add(scan);
        return true;
      }
      return false; // another leaf: the plan reads more than the messages
    }
    for (int i = 0; i < children.size(); i++) {
      if (!rowByRow(children.apply(i), rdd, scans)) {
        return false;
      }
    }
    return true;
  }

  private boolean sameColumns(Seq<Attribute> columns) {
    Seq<Attribute> kept = leaf.output();
    if (kept.size() != columns.size()) {
      return false;
    }
    for (int i = 0; i < kept.size(); i++) {
      Attribute was = kept.apply(i);
      Attribute is = columns.apply(i);
      if (!was.dataType().equals(is.dataType()) || was.nullable() != is.nullable()) {
        return false;
      }
    }
    return true;
  }

  /** {@code node} with the kept leaf reading {@code rdd}: every node above it a copy, with its own metrics. */
  private SparkPlan swapped(SparkPlan node, RDD<InternalRow> rdd) {
    if (node == leaf) {
      return new RDDScanExec(
          leaf.output(), rdd, leaf.name(), leaf.outputPartitioning(), leaf.outputOrdering(), leaf.stream());
    }
    Seq<SparkPlan> children = node.children();
    List<SparkPlan> replaced = new ArrayList<>(children.size());
    boolean changed = false;
    for (int i = 0; i < children.size(); i++) {
      SparkPlan child = children.apply(i);
      SparkPlan now = swapped(child, rdd);
      changed |= now != child;
      replaced.add(now);
    }
    return changed ? (SparkPlan) node.withNewChildren(ScalaSeqs.of(replaced)) : node;
  }
}
