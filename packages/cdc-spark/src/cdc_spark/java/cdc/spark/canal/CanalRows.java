package cdc.spark.canal;

import cdc.spark.text.TextValueFunction;
import cdc.spark.text.TidbText;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF2;

/**
 * One table's Canal-JSON row messages typed in one pass: {@code (message, shape)} to one {@code struct<op, bad,
 * row>} per row of the message, {@code row} being the decode contract's struct of the table (its columns in the
 * table's final schema, {@code _cdc_before}, {@code _cdc_changed_columns}, {@code _cdc_zero_dates}).
 *
 * <p>It follows the rules of the Spark SQL typing ({@code cdc_spark.decoding.jvm_path}) exactly: the same images
 * (an update's old image completed from its new one), changed columns, zero dates and bad rows (a text that did not
 * convert and is not a zero date). A message it cannot read, or a shape it was not given, gives null: each of its
 * rows is then bad and the message goes to the codec.
 *
 * <p>The plan (JSON, from {@code cdc_spark.decoding.java_rows}): {@code columns} (the final schema's names), {@code
 * zero} (per column, whether it can hold a zero date) and {@code shapes} (per shape digest, per column the reader's
 * descriptor of {@link TextValueFunction}, null where the shape lacks the column).
 */
public final class CanalRows implements UDF2<byte[], String, List<Row>> {
  private static final long serialVersionUID = 1L;
  private static final JsonFactory JSON = new JsonFactory();

  private final String plan;
  private transient String[] columns;
  private transient Map<String, Integer> positions; // a column's position in the final schema, by name
  private transient boolean[] zero;
  private transient Map<String, List<Function<String, Object>>> shapes;

  public CanalRows(String plan) {
    this.plan = plan;
    read(plan); // a malformed plan fails on the driver, at registration
  }

  private void read(String text) {
    JsonNode tree;
    try {
      tree = new ObjectMapper().readTree(text);
    } catch (IOException malformed) {
      throw new IllegalArgumentException("not a Canal-JSON row plan: " + malformed.getMessage(), malformed);
    }
    JsonNode names = tree.get("columns");
    columns = new String[names.size()];
    zero = new boolean[names.size()];
    positions = new HashMap<>();
    for (int k = 0; k < columns.length; k++) {
      columns[k] = names.get(k).asText();
      zero[k] = tree.get("zero").get(k).asBoolean();
      positions.put(columns[k], k);
    }
    shapes = new HashMap<>();
    for (Map.Entry<String, JsonNode> shape : tree.get("shapes").properties()) {
      List<Function<String, Object>> readers = new ArrayList<>();
      for (JsonNode descriptor : shape.getValue()) {
        readers.add(descriptor.isNull() ? null : TextValueFunction.reader(descriptor.asText()));
      }
      shapes.put(shape.getKey(), readers);
    }
  }

  @Override
  public List<Row> call(byte[] message, String shape) {
    if (shapes == null) {
      read(plan);
    }
    List<Function<String, Object>> readers = shapes.get(shape);
    if (message == null || readers == null) {
      return null;
    }
    try {
      Message parsed = Message.parse(message, positions);
      if (parsed == null) {
        return null;
      }
      List<Row> rows = new ArrayList<>(parsed.data.size());
      for (int i = 0; i < parsed.data.size(); i++) {
        rows.add(row(parsed, i, readers));
      }
      return rows;
    } catch (IOException | RuntimeException unreadable) { // a null row, say: the routing lets none through
      return null;
    }
  }

  private Row row(Message message, int i, List<Function<String, Object>> readers) {
    boolean update = "UPDATE".equals(message.type);
    boolean delete = "DELETE".equals(message.type);
    Image data = message.data.get(i);
    Image old = update && message.old != null ? message.old.get(i) : null;
    Image after = delete ? null : data;
    Image before = delete ? data : old;
    Image base = update ? data : null;
    int n = columns.length;
    Object[] contract = new Object[n + 3];
    Object[] beforeValues = before == null ? null : new Object[n];
    Map<String, String> zeros = null;
    boolean bad = false;
    for (int k = 0; k < n; k++) {
      Function<String, Object> reader = readers.get(k);
      String afterText = after == null ? null : after.texts[k];
      String beforeText = before == null ? null : base != null && !before.has[k] ? base.texts[k] : before.texts[k];
      Object afterValue = read(reader, afterText);
      Object beforeValue = Objects.equals(beforeText, afterText) ? afterValue : read(reader, beforeText);
      String afterZero = zeroText(k, reader, afterText);
      String beforeZero = zeroText(k, reader, beforeText);
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
    Image changedFrom = update && old != null && old.size != data.size ? old : null;
    Image image = delete ? before : after;
    List<String> changed = null;
    if (changedFrom != null) {
      changed = namesIn(changedFrom);
    } else if (image != null && image.known < n) {
      changed = namesIn(image);
    }
    contract[n] = beforeValues == null ? null : RowFactory.create(beforeValues);
    contract[n + 1] = changed;
    contract[n + 2] = zeros;
    String op = delete ? "delete" : update ? "update" : "insert";
    return RowFactory.create(op, bad, RowFactory.create(contract));
  }

  private static Object read(Function<String, Object> reader, String text) {
    return reader == null || text == null ? null : reader.apply(text);
  }

  private String zeroText(int k, Function<String, Object> reader, String text) {
    return zero[k] && reader != null && text != null && TidbText.zeroDate(text) ? text : null;
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

  /**
   * One row of a message by the final schema's positions: each column's text (JSON null as null), whether the row
   * names it, how many of the schema's columns it names ({@code known}) and how many members it has ({@code size}).
   */
  private static final class Image {
    final String[] texts;
    final boolean[] has;
    int known;
    int size;

    Image(int columns) {
      texts = new String[columns];
      has = new boolean[columns];
    }
  }

  /** What the typing reads of a message: its type and its rows. */
  private static final class Message {
    String type;
    List<Image> data;
    List<Image> old;

    /** The message, or null where it is not of the form the routing let through. */
    static Message parse(byte[] text, Map<String, Integer> positions) throws IOException {
      Message message = new Message();
      try (JsonParser parser = JSON.createParser(text)) {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
          return null;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String field = parser.currentName();
          JsonToken token = parser.nextToken();
          switch (field) {
            case "type" -> message.type = token == JsonToken.VALUE_STRING ? parser.getText() : null;
            case "data" -> message.data = rows(parser, token, positions);
            case "old" -> message.old = rows(parser, token, positions);
            default -> parser.skipChildren();
          }
        }
      }
      return message.type == null || message.data == null ? null : message;
    }

    private static List<Image> rows(JsonParser parser, JsonToken at, Map<String, Integer> positions)
        throws IOException {
      if (at != JsonToken.START_ARRAY) {
        parser.skipChildren();
        return null;
      }
      List<Image> rows = new ArrayList<>();
      JsonToken token;
      while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
        if (token != JsonToken.START_OBJECT) {
          throw new IOException("a row that is not an object");
        }
        Image row = new Image(positions.size());
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          Integer k = positions.get(parser.currentName());
          JsonToken value = parser.nextToken();
          if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
            throw new IOException("a value that is not a scalar");
          }
          row.size++;
          if (k != null) {
            if (row.has[k]) {
              throw new IOException("a column named twice");
            }
            row.has[k] = true;
            row.known++;
            row.texts[k] = value == JsonToken.VALUE_NULL ? null : parser.getText();
          }
        }
        rows.add(row);
      }
      return rows;
    }
  }
}
