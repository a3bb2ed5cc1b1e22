package cdc.spark.canal;

import cdc.spark.rows.Image;
import cdc.spark.rows.ImageRows;
import cdc.spark.rows.Members;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One table's Canal-JSON row messages typed in one pass ({@link ImageRows}): each row of {@code data} is a change;
 * a delete's image is its old one, an update's old image is its {@code old} row completed from its new one, and an
 * update whose {@code old} names fewer columns than its row names the changed ones.
 */
public final class CanalRows extends ImageRows {
  private static final long serialVersionUID = 1L;

  public CanalRows(String plan) {
    super(plan);
  }

  @Override
  protected List<Change> parse(byte[] message, Map<String, Integer> positions) throws IOException {
    Parsed parsed = new Parsed();
    Members.Reader read = (field, token, parser) -> {
      switch (field) {
        case "type" -> parsed.type = token == JsonToken.VALUE_STRING ? parser.getText() : null;
        case "data" -> parsed.data = rows(parser, token, positions, message);
        case "old" -> parsed.old = rows(parser, token, positions, message);
        default -> parser.skipChildren();
      }
    };
    if (!Members.read(message, read, false) || parsed.type == null || parsed.data == null) {
      return null;
    }
    return changes(parsed.type, parsed.data, parsed.old);
  }

  /**
   * The changes of a message of {@code type} with the row images {@code data} and the old ones {@code old} (as
   * many as {@code data} for an update; null otherwise, or ignored).
   */
  public static List<Change> changes(String type, List<Image> data, List<Image> old) {
    boolean update = type.equals("UPDATE");
    boolean delete = type.equals("DELETE");
    String op = delete ? "delete" : update ? "update" : "insert";
    List<Change> changes = new ArrayList<>(data.size());
    for (int i = 0; i < data.size(); i++) {
      Image row = data.get(i);
      Image before = update ? old.get(i) : null;
      Image changedFrom = before != null && before.size() != row.size() ? before : null;
      changes.add(delete ? new Change(op, null, row, null, null)
          : new Change(op, row, before, update ? row : null, changedFrom));
    }
    return changes;
  }

  /** What the typing reads of a message. */
  private static final class Parsed {
    String type;
    List<Image> data;
    List<Image> old;
  }

  private static List<Image> rows(JsonParser parser, JsonToken at, Map<String, Integer> positions, byte[] message)
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
      rows.add(Image.read(parser, positions, message, false));
    }
    return rows;
  }
}
