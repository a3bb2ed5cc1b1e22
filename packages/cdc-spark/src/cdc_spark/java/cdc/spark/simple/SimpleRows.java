package cdc.spark.simple;

import cdc.spark.rows.Image;
import cdc.spark.rows.ImageRows;
import cdc.spark.rows.Members;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * One table's Simple JSON row messages typed in one pass ({@link ImageRows}): one change per message, its new image
 * {@code data} (but for a delete), its old image {@code old} (but for an insert). A TIMESTAMP value is an object,
 * kept as its text for its reader.
 */
public final class SimpleRows extends ImageRows {
  private static final long serialVersionUID = 1L;

  public SimpleRows(String plan) {
    super(plan);
  }

  @Override
  protected List<Change> parse(byte[] message, Map<String, Integer> positions) throws IOException {
    Image[] images = new Image[2]; // data, old
    String[] type = new String[1];
    Members.Reader read = (field, token, parser) -> {
      switch (field) {
        case "type" -> type[0] = token == JsonToken.VALUE_STRING ? parser.getText() : null;
        case "data" -> images[0] = image(parser, token, positions, message);
        case "old" -> images[1] = image(parser, token, positions, message);
        default -> parser.skipChildren();
      }
    };
    if (!Members.read(message, read, false) || type[0] == null) {
      return null;
    }
    return changes(type[0], images[0], images[1]);
  }

  /** The change of a message of {@code type} with the images {@code data} and {@code old}; null: not a row type. */
  public static List<Change> changes(String type, Image data, Image old) {
    return switch (type) {
      case "INSERT" -> List.of(new Change("insert", data, null, null, null));
      case "UPDATE" -> List.of(new Change("update", data, old, null, null));
      case "DELETE" -> List.of(new Change("delete", null, old, null, null));
      default -> null;
    };
  }

  private static Image image(JsonParser parser, JsonToken at, Map<String, Integer> positions, byte[] message)
      throws IOException {
    if (at != JsonToken.START_OBJECT) {
      parser.skipChildren();
      return null;
    }
    return Image.read(parser, positions, message, true);
  }
}
