package cdc.spark.rows;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One row image by the final schema's positions: each column's wire text (JSON null as null), whether the image
 * names it, how many of the schema's columns it names ({@code known}) and how many members it has ({@code size}).
 */
public final class Image {
  final String[] texts;
  final boolean[] has;
  int known;
  int size;

  private Image(int columns) {
    texts = new String[columns];
    has = new boolean[columns];
  }

  /** How many members the image has. */
  public int size() {
    return size;
  }

  /**
   * The object the parser is at ({@code START_OBJECT} read), up to its end. A scalar's text is its value; with
   * {@code objects}, an object member's text is the object's own text in {@code message} (Simple's TIMESTAMP), else
   * an object or an array is an error, as is a column named twice.
   */
  public static Image read(JsonParser parser, Map<String, Integer> positions, byte[] message, boolean objects)
      throws IOException {
    Image image = new Image(positions.size());
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      Integer k = positions.get(parser.currentName());
      JsonToken value = parser.nextToken();
      String text;
      if (value == JsonToken.START_OBJECT && objects) {
        int start = (int) parser.currentTokenLocation().getByteOffset();
        parser.skipChildren();
        int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
        if (start < 0 || end <= start) {
          throw new IOException("no offsets of an object");
        }
        text = new String(message, start, end - start, StandardCharsets.UTF_8);
      } else if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
        throw new IOException("a value that is not a scalar");
      } else {
        text = value == JsonToken.VALUE_NULL ? null : parser.getText();
      }
      image.size++;
      if (k != null) {
        if (image.has[k]) {
          throw new IOException("a column named twice");
        }
        image.has[k] = true;
        image.known++;
        image.texts[k] = text;
      }
    }
    return image;
  }
}
