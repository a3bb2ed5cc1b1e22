package cdc.spark.debezium;

import cdc.spark.rows.Members;
import cdc.spark.rows.Names;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The column names of a Debezium message's key, in order, joined by U+0000: its payload's members where it has a
 * payload object ({@code {"schema": ..., "payload": {...}}}), its own members otherwise (a schemaless key, or a
 * payload of null). Null where the key is not read: not a JSON object, a payload of another JSON type, a name given
 * twice, text after the document, not UTF-8 (such a message goes to the codec).
 */
public final class DebeziumKey implements UDF1<byte[], String> {
  private static final long serialVersionUID = 1L;

  @Override
  public String call(byte[] key) {
    if (key == null) {
      return null;
    }
    KeyNames read = new KeyNames();
    try {
      boolean wellFormed = Members.read(key, read, true);
      return wellFormed && !read.odd ? read.joined() : null;
    } catch (IOException | RuntimeException malformed) {
      return null;
    }
  }

  /** A key's top-level names and its payload's. */
  private static final class KeyNames implements Members.Reader {
    final Names top = new Names();
    Names payload; // null: no payload object
    boolean odd;

    @Override
    public void read(String field, JsonToken token, JsonParser parser) throws IOException {
      top.add(field); // Members reports a name given twice at the top
      if (!"payload".equals(field) || token == JsonToken.VALUE_NULL) {
        parser.skipChildren();
        return;
      }
      if (token != JsonToken.START_OBJECT) {
        odd = true;
        parser.skipChildren();
        return;
      }
      payload = new Names();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        odd |= !payload.add(parser.currentName());
        parser.nextToken();
        parser.skipChildren();
      }
    }

    String joined() {
      Names names = payload != null ? payload : top;
      StringBuilder joined = new StringBuilder();
      for (int i = 0; i < names.size(); i++) {
        if (i > 0) {
          joined.append('\u0000');
        }
        joined.append(names.get(i));
      }
      return joined.toString();
    }
  }
}
