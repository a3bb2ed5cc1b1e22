package cdc.spark.rows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * The tables a typed envelope reader types as it reads (its plan, {@code {"tables": [{"database", "table",
 * "rows"}]}}, {@code rows} the table's {@link ImageRows} plan): each table's row typer, and its field in the reader's
 * result, after the envelope's own fields, in the plan's order.
 */
public final class TypedTables {
  private final int envelopeFields;
  private final Map<String, ImageRows> typers = new HashMap<>();
  private final Map<ImageRows, Integer> fields = new HashMap<>();

  private TypedTables(int envelopeFields) {
    this.envelopeFields = envelopeFields;
  }

  /** The tables of {@code plan}, each typed by {@code typer} made with its own plan; a malformed plan is refused. */
  public static TypedTables read(String plan, int envelopeFields, Function<String, ImageRows> typer) {
    JsonNode tables;
    try {
      tables = new ObjectMapper().readTree(plan).get("tables");
    } catch (IOException malformed) {
      throw new IllegalArgumentException("not a typed envelope plan: " + malformed.getMessage(), malformed);
    }
    if (tables == null || !tables.isArray()) {
      throw new IllegalArgumentException("not a typed envelope plan: no tables");
    }
    TypedTables read = new TypedTables(envelopeFields);
    for (JsonNode table : tables) {
      ImageRows rows = typer.apply(table.get("rows").asText());
      read.typers.put(key(table.get("database").asText(), table.get("table").asText()), rows);
      read.fields.put(rows, envelopeFields + read.fields.size());
    }
    return read;
  }

  private static String key(String database, String table) {
    return database + '\0' + table;
  }

  /** The typer of a table, null where the plan has none (or the message names no table). */
  public ImageRows typer(String database, String table) {
    return database == null || table == null ? null : typers.get(key(database, table));
  }

  /**
   * The final schema's positions of a table's typer, by which a reader keeps its rows' texts; null where the plan has
   * no typer of it.
   */
  public Map<String, Integer> positions(String database, String table) {
    ImageRows typer = typer(database, table);
    return typer == null ? null : typer.positions();
  }

  /** The reader's result: the envelope's fields, then {@code typed} in {@code typer}'s field (if any). */
  public Row row(Object[] envelope, ImageRows typer, List<Row> typed) {
    Object[] all = new Object[envelopeFields + fields.size()];
    System.arraycopy(envelope, 0, all, 0, envelopeFields);
    if (typer != null) {
      all[fields.get(typer)] = typed;
    }
    return RowFactory.create(all);
  }
}
