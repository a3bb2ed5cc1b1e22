package cdc.spark.rows;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/** A message's top-level members, each handed to a reader with the parser at its value. */
public final class Members {
  // Names interned (Jackson's default, stated): Names compares them by reference
  static final JsonFactory JSON = JsonFactory.builder()
      .enable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
      .enable(JsonFactory.Feature.INTERN_FIELD_NAMES)
      .build();

  /** What is done with one member; a member it does not read it must skip ({@code skipChildren}). */
  @FunctionalInterface
  public interface Reader {
    void read(String field, JsonToken token, JsonParser parser) throws IOException;

    /**
     * Whether the member just read was the document's last and the reader has checked, from the message's bytes,
     * that nothing but blanks follows its object's close: the parser, left inside the member, is not read further.
     */
    default boolean finished() {
      return false;
    }
  }

  private Members() {}

  /**
   * Reads {@code message}, one JSON object, member by member. False where it is not an object; with {@code strict},
   * also where it is not well-formed UTF-8 (as Spark judges it), a member is named twice or anything but blanks
   * follows the object (the reader has then read it all).
   */
  public static boolean read(byte[] message, Reader reader, boolean strict) throws IOException {
    boolean utf8 = !strict || Utf8.valid(message);
    try (JsonParser parser = JSON.createParser(message)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return false;
      }
      Names seen = strict ? new Names() : null;
      boolean once = true;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        once &= seen == null || seen.add(field);
        reader.read(field, parser.nextToken(), parser);
        if (reader.finished()) {
          return !strict || (utf8 && once);
        }
      }
      return !strict || (utf8 && once && parser.nextToken() == null);
    }
  }
}
