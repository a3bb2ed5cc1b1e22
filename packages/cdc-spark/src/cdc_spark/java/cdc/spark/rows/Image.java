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

  /** An image of a schema of {@code columns} columns naming none yet, to {@link #put} members into as read. */
  public static Image empty(int columns) {
    return new Image(columns);
  }

  /**
   * One more member: its text at position {@code k} of the schema (null: not a column of it). False where the image
   * names that column already (it keeps the first text).
   */
  public boolean put(Integer k, String text) {
    size++;
    if (k == null) {
      return true;
    }
    if (has[k]) {
      return false;
    }
    has[k] = true;
    known++;
    texts[k] = text;
    return true;
  }

  /** How many members the image has. */
  public int size() {
    return size;
  }

  /** The text in {@code message} of the object the parser is at ({@code START_OBJECT} read), read to its end. */
  public static String objectText(JsonParser parser, byte[] message) throws IOException {
    int start = (int) parser.currentTokenLocation().getByteOffset();
    parser.skipChildren();
    int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
    if (start < 0 || end <= start) {
      throw new IOException("no offsets of an object");
    }
    return new String(message, start, end - start, StandardCharsets.UTF_8);
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
        text = objectText(parser, message);
      } else if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
        throw new IOException("a value that is not a scalar");
      } else {
        text = value == JsonToken.VALUE_NULL ? null : parser.getText();
      }
      if (!image.put(k, text)) {
        throw new IOException("a column named twice");
      }
    }
    return image;
  }
}
