package cdc.spark.rows;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * A protocol's envelope reader (a message's bytes to its envelope's {@code fields}, read strictly by {@link
 * Members}), made without a plan, or with the plan of the tables it also types as it reads ({@link TypedTables}, each
 * table's typer made by {@link #typer}): then a row message of one of them (its first field {@code row}) has its
 * rows typed in that table's field. A message that cannot be read has every field null.
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

  /**
   * One message as the protocol reads it: its members, then its envelope's fields and its rows. {@code odd}: something
   * the JVM must not type (a message {@link Members#read} found not well formed is).
   */
  protected abstract static class Read implements Members.Reader {
    protected String database;
    protected String table;
    protected boolean odd;

    /** The envelope's fields. */
    public abstract Object[] fields();

    /** A row message's rows typed by its table's {@code typer} ({@code fields}: as {@link #fields} gave them). */
    public abstract List<Row> typed(ImageRows typer, Object[] fields, byte[] message);

    /** A member that must be a string: its text; null for null, and odd for another JSON type. */
    protected String string(JsonToken token, JsonParser parser) throws IOException {
      if (token == JsonToken.VALUE_STRING) {
        return parser.getText();
      }
      odd |= token != JsonToken.VALUE_NULL;
      parser.skipChildren();
      return null;
    }
  }

  /** The row typer of one table, made with its plan. */
  protected abstract ImageRows typer(String tablePlan);

  /** A read of {@code message} that keeps the texts of the rows of {@code tables} (null: none) as it reads them. */
  protected abstract Read reading(TypedTables tables, byte[] message);

  @Override
  public final Row call(byte[] message) {
    if (message == null) {
      return nothing();
    }
    TypedTables typed = tables();
    Read read = reading(typed, message);
    try {
      boolean wellFormed = members(message, read); // read before odd is (|= would not)
      read.odd |= !wellFormed;
    } catch (IOException | RuntimeException malformed) {
      return nothing();
    }
    Object[] fields = read.fields();
    if (typed == null) {
      return RowFactory.create(fields);
    }
    ImageRows typer = "row".equals(fields[0]) ? typed.typer(read.database, read.table) : null;
    return typed.row(fields, typer, typer == null ? null : read.typed(typer, fields, message));
  }

  /**
   * Reads {@code message}'s members into {@code read}, strictly ({@link Members#read}); whether it is well formed. A
   * protocol may read some members without the parser, where their bytes tell it enough.
   */
  protected boolean members(byte[] message, Read read) throws IOException {
    return Members.read(message, read, true);
  }

  /** The tables typed as read; null without a plan. */
  protected final TypedTables tables() {
    if (plan != null && tables == null) { // deserialized on an executor: the plan is read there once
      tables = TypedTables.read(plan, fields, this::typer);
    }
    return tables;
  }

  private Row nothing() {
    TypedTables typed = tables();
    return typed == null ? RowFactory.create(new Object[fields]) : typed.row(new Object[fields], null, null);
  }
}
