package cdc.spark.rows;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * A protocol's envelope reader (a message's bytes to its envelope's {@code fields}), made without a plan, or with the
 * plan of the tables it also types as it reads ({@link TypedTables}, each table's typer made by {@link #typer}).
 */
public abstract class EnvelopeReader implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;

  private final String plan; // null: the envelope alone
  private final int fields;
  private transient TypedTables tables;

  protected EnvelopeReader(String plan, int fields) {
    this.plan = plan;
    this.fields = fields;
    tables(); // a malformed plan fails on the driver, at registration
  }

  /** The row typer of one table, made with its plan. */
  protected abstract ImageRows typer(String tablePlan);

  /** The tables typed as read; null without a plan. */
  protected final TypedTables tables() {
    if (plan != null && tables == null) { // deserialized on an executor: the plan is read there once
      tables = TypedTables.read(plan, fields, this::typer);
    }
    return tables;
  }

  /** The result for a message that is not read: every field null. */
  protected final Row nothing() {
    TypedTables typed = tables();
    return typed == null ? RowFactory.create(new Object[fields]) : typed.row(new Object[fields], null, null);
  }
}
