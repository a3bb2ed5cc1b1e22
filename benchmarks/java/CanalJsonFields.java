package cdc.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/** A Canal-JSON message's top-level fields, each handed to a reader with the parser at its value. */
final class CanalJsonFields {
  private static final JsonFactory JSON = new JsonFactory();

  /** What a probe does with one field; a field it does not read it must skip ({@code skipChildren}). */
  @FunctionalInterface
  interface FieldReader {
    void read(String field, JsonToken token, JsonParser parser) throws IOException;
  }

  private CanalJsonFields() {}

  /** The fields every probe reads: the table, the change's type and the commit ts. */
  abstract static class Head {
    String database;
    String table;
    String type;
    long ts;

    /** Whether {@code field} is one of the head's (then read). */
    boolean readHead(String field, JsonParser parser) throws IOException {
      switch (field) {
        case "database" -> database = parser.getText();
        case "table" -> table = parser.getText();
        case "type" -> type = parser.getText();
        case "ts" -> ts = parser.getLongValue();
        default -> {
          return false;
        }
      }
      return true;
    }
  }

  static void read(String text, FieldReader reader) throws IOException {
    try (JsonParser parser = JSON.createParser(text)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        reader.read(field, parser.nextToken(), parser);
      }
    }
  }
}
