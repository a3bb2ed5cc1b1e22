package cdc.spark.rows;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

/** A message's top-level members, each handed to a reader with the parser at its value. */
public final class Members {
  private static final JsonFactory JSON = new JsonFactory();

  /** What is done with one member; a member it does not read it must skip ({@code skipChildren}). */
  @FunctionalInterface
  public interface Reader {
    void read(String field, JsonToken token, JsonParser parser) throws IOException;
  }

  private Members() {}

  /**
   * Reads {@code message}, one JSON object, member by member. False where it is not an object; with {@code strict},
   * also where a member is named twice or anything but blanks follows the object (the reader has then read it all).
   */
  public static boolean read(byte[] message, Reader reader, boolean strict) throws IOException {
    try (JsonParser parser = JSON.createParser(message)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return false;
      }
      Set<String> seen = strict ? new HashSet<>() : null;
      boolean once = true;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        once &= seen == null || seen.add(field);
        reader.read(field, parser.nextToken(), parser);
      }
      return !strict || (once && parser.nextToken() == null);
    }
  }
}
