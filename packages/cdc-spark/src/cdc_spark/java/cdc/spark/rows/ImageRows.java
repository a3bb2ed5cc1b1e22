package cdc.spark.rows;

import cdc.spark.text.ValueReader;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF2;

/**
 * One table's row messages typed in one pass: {@code (message, shape)} to one {@code struct<op, bad, row>} per change
 * of the message, {@code row} being the decode contract's struct of the table (its columns in the table's final
 * schema, {@code _cdc_before}, {@code _cdc_changed_columns}, {@code _cdc_zero_dates}). A protocol parses its messages
 * into {@link Change}s; the typing follows the rules of the Spark SQL typing ({@code cdc_spark.decoding.jvm.table_typing})
 * exactly: the images (an old image completed from a base), changed columns, zero dates and bad rows (a text that did
 * not convert and is not a zero date). A message that cannot be read, or a shape the plan does not have, gives null:
 * each of its changes is then bad and the message goes to the codec.
 *
 * <p>The plan (JSON, from {@code cdc_spark.decoding.java_rows}): {@code columns} (the final schema's names) and {@code
 * shapes} (per shape, per column the descriptor of its {@link ValueReader}, null where the shape lacks the column).
 */
public abstract class ImageRows implements UDF2<byte[], String, List<Row>> {
  private static final long serialVersionUID = 1L;

  private final String plan;
  private transient String[] columns;
  private transient Map<String, Integer> positions;
  private transient Map<String, List<ValueReader>> shapes;

  protected ImageRows(String plan) {
    this.plan = plan;
    read(plan); // a malformed plan fails on the driver, at registration
  }

  /** One change of a message: its operation and its images (null where it has none). */
  public record Change(String op, Image after, Image before, Image base, Image changedFrom) {}

  /** The message's changes, null where it is not of the form the routing let through. */
  protected abstract List<Change> parse(byte[] message, Map<String, Integer> positions) throws IOException;

  private void read(String text) {
    JsonNode tree;
    try {
      tree = new ObjectMapper().readTree(text);
    } catch (IOException malformed) {
      throw new IllegalArgumentException("not a row plan: " + malformed.getMessage(), malformed);
    }
    JsonNode names = tree.get("columns");
    columns = new String[names.size()];
    positions = new HashMap<>();
    for (int k = 0; k < columns.length; k++) {
      // interned as the readers' parser interns member names: a lookup of one is then a reference compare
      columns[k] = names.get(k).asText().intern();
      positions.put(columns[k], k);
    }
    shapes = new HashMap<>();
    for (Map.Entry<String, JsonNode> shape : tree.get("shapes").properties()) {
      List<ValueReader> readers = new ArrayList<>();
      for (JsonNode descriptor : shape.getValue()) {
        readers.add(descriptor.isNull() ? null : ValueReader.of(descriptor.asText()));
      }
      shapes.put(shape.getKey(), readers);
    }
  }

  @Override
  public List<Row> call(byte[] message, String shape) {
    if (message == null || readers(shape) == null) {
      return null;
    }
    try {
      return typed(parse(message, positions), shape);
    } catch (IOException | RuntimeException unreadable) { // a null row, say: the routing lets none through
      return null;
    }
  }

  /** The final schema's positions by column name, for a reader of the message that builds its {@link Image}s. */
  public Map<String, Integer> positions() {
    readers(null);
    return positions;
  }

  /**
   * {@code changes} (null: a message not of the form the routing let through) typed by {@code shape}'s readers, as
   * {@link #call} types a message's; null where the plan has no such shape or a change could not be typed.
   */
  public List<Row> typed(List<Change> changes, String shape) {
    List<ValueReader> readers = readers(shape);
    if (changes == null || readers == null) {
      return null;
    }
    try {
      List<Row> rows = new ArrayList<>(changes.size());
      for (Change change : changes) {
        rows.add(row(change, readers));
      }
      return rows;
    } catch (RuntimeException unreadable) {
      return null;
    }
  }

  private List<ValueReader> readers(String shape) {
    if (shapes == null) { // deserialized on an executor: the plan is read there once
      read(plan);
    }
    return shape == null ? null : shapes.get(shape);
  }

  private Row row(Change change, List<ValueReader> readers) {
    boolean delete = change.op.equals("delete");
    Image after = change.after;
    Image before = change.before;
    Image base = change.base;
    int n = columns.length;
    Object[] contract = new Object[n + 3];
    Object[] beforeValues = before == null ? null : new Object[n];
    Map<String, String> zeros = null;
    boolean bad = false;
    for (int k = 0; k < n; k++) {
      ValueReader reader = readers.get(k);
      String afterText = after == null ? null : after.texts[k];
      String beforeText = before == null ? null : base != null && !before.has[k] ? base.texts[k] : before.texts[k];
      Object afterValue = value(reader, afterText);
      Object beforeValue = Objects.equals(beforeText, afterText) ? afterValue : value(reader, beforeText);
      String afterZero = afterValue == null ? zeroText(reader, afterText) : null;
      String beforeZero = beforeValue == null ? zeroText(reader, beforeText) : null;
      bad |= afterText != null && afterValue == null && afterZero == null;
      bad |= beforeText != null && beforeValue == null && beforeZero == null;
      contract[k] = delete ? beforeValue : afterValue;
      if (beforeValues != null) {
        beforeValues[k] = beforeValue;
      }
      String zeroOfRow = delete ? beforeZero : afterZero;
      if (zeroOfRow != null) {
        zeros = zeros == null ? new HashMap<>() : zeros;
        zeros.put(columns[k], zeroOfRow);
      }
    }
    Image image = delete ? before : after;
    List<String> changed = null;
    if (change.changedFrom != null) {
      changed = namesIn(change.changedFrom);
    } else if (image != null && image.known < n) {
      changed = namesIn(image);
    }
    contract[n] = beforeValues == null ? null : RowFactory.create(beforeValues);
    contract[n + 1] = changed;
    contract[n + 2] = zeros;
    return RowFactory.create(change.op, bad, RowFactory.create(contract));
  }

  private static Object value(ValueReader reader, String text) {
    return reader == null || text == null ? null : reader.value(text);
  }

  /** A text the reader did not read: its zero-date text, if it is one (readers without zero dates say none). */
  private static String zeroText(ValueReader reader, String text) {
    return reader != null && text != null ? reader.zero(text) : null;
  }

  /** The final schema's names that are columns of {@code image}, in the schema's order. */
  private List<String> namesIn(Image image) {
    List<String> names = new ArrayList<>();
    for (int k = 0; k < columns.length; k++) {
      if (image.has[k]) {
        names.add(columns[k]);
      }
    }
    return names;
  }
}
