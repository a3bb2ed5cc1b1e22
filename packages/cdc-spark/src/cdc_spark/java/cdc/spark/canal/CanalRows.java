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
    for (int k = 0; k < columns.length; k++) {
      columns[k] = names.get(k).asText();
      zero[k] = tree.get("zero").get(k).asBoolean();
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
    Message parsed;
    try {
      parsed = Message.parse(message);
    } catch (IOException | RuntimeException unreadable) {
      return null;
    }
    if (parsed == null) {
      return null;
    }
    List<Row> rows = new ArrayList<>(parsed.data.size());
    try {
      for (int i = 0; i < parsed.data.size(); i++) {
        rows.add(row(parsed, i, readers));
      }
    } catch (RuntimeException unreadable) { // a null row, say: the routing lets none through
      return null;
    }
    return rows;
  }

  private Row row(Message message, int i, List<Function<String, Object>> readers) {
    boolean update = "UPDATE".equals(message.type);
    boolean delete = "DELETE".equals(message.type);
    Map<String, String> data = message.data.get(i);
    Map<String, String> old = update && message.old != null && i < message.old.size() ? message.old.get(i) : null;
    Map<String, String> after = delete ? null : data;
    Map<String, String> before = delete ? data : old;
    Map<String, String> base = update ? data : null;
    int n = columns.length;
    Object[] values = new Object[n];
    Object[] beforeValues = new Object[n];
    Map<String, String> zeros = new HashMap<>();
    boolean bad = false;
    for (int k = 0; k < n; k++) {
      String name = columns[k];
      Function<String, Object> reader = readers.get(k);
      String afterText = after == null ? null : after.get(name);
      String beforeText = base != null && before != null && !before.containsKey(name) ? base.get(name)
          : before == null ? null : before.get(name);
      Object afterValue = read(reader, afterText);
      Object beforeValue = Objects.equals(beforeText, afterText) ? afterValue : read(reader, beforeText);
      String afterZero = zeroText(k, reader, afterText);
      String beforeZero = zeroText(k, reader, beforeText);
      bad |= afterText != null && afterValue == null && afterZero == null;
      bad |= beforeText != null && beforeValue == null && beforeZero == null;
      values[k] = delete ? beforeValue : afterValue;
      beforeValues[k] = beforeValue;
      String zeroOfRow = delete ? beforeZero : afterZero;
      if (zeroOfRow != null) {
        zeros.put(name, zeroOfRow);
      }
    }
    Map<String, String> changedFrom = update && old != null && old.size() != data.size() ? old : null;
    Map<String, String> image = delete ? before : after;
    List<String> changed = null;
    if (changedFrom != null) {
      changed = namesIn(changedFrom);
    } else if (image != null) {
      List<String> present = namesIn(image);
      changed = present.size() < n ? present : null;
    }
    Object[] contract = new Object[n + 3];
    System.arraycopy(values, 0, contract, 0, n);
    contract[n] = before == null ? null : RowFactory.create(beforeValues);
    contract[n + 1] = changed;
    contract[n + 2] = zeros.isEmpty() ? null : zeros;
    String op = delete ? "delete" : update ? "update" : "insert";
    return RowFactory.create(op, bad, RowFactory.create(contract));
  }

  private static Object read(Function<String, Object> reader, String text) {
    return reader == null || text == null ? null : reader.apply(text);
  }

  private String zeroText(int k, Function<String, Object> reader, String text) {
    return zero[k] && reader != null && text != null && TidbText.zeroDate(text) ? text : null;
  }

  /** The final schema's names that are keys of {@code image}, in the schema's order. */
  private List<String> namesIn(Map<String, String> image) {
    List<String> names = new ArrayList<>();
    for (String name : columns) {
      if (image.containsKey(name)) {
        names.add(name);
      }
    }
    return names;
  }

  /** What the typing reads of a message: its type and its rows' texts (JSON null as null). */
  private static final class Message {
    String type;
    List<Map<String, String>> data;
    List<Map<String, String>> old;

    /** The message, or null where it is not of the form the routing let through. */
    static Message parse(byte[] text) throws IOException {
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
            case "data" -> message.data = rows(parser, token);
            case "old" -> message.old = rows(parser, token);
            default -> parser.skipChildren();
          }
        }
      }
      return message.type == null || message.data == null ? null : message;
    }

    private static List<Map<String, String>> rows(JsonParser parser, JsonToken at) throws IOException {
      if (at != JsonToken.START_ARRAY) {
        parser.skipChildren();
        return null;
      }
      List<Map<String, String>> rows = new ArrayList<>();
      JsonToken token;
      while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
        if (token == JsonToken.VALUE_NULL) {
          rows.add(null);
          continue;
        }
        if (token != JsonToken.START_OBJECT) {
          throw new IOException("a row that is not an object");
        }
        Map<String, String> row = new HashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          String name = parser.currentName();
          JsonToken value = parser.nextToken();
          if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
            throw new IOException("a value that is not a scalar");
          }
          row.put(name, value == JsonToken.VALUE_NULL ? null : parser.getText());
        }
        rows.add(row);
      }
      return rows;
    }
  }
}
