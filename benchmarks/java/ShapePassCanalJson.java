package cdc.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The shape pass over a Canal-JSON message in the JVM: its table, type and commit ts, and one hash of its type maps
 * and key names (what a shape is), with the rows skipped by Jackson's streaming parser, not read.
 *
 * <p>For bench_java_one_pass.py: what the first of a two-pass decoder's passes costs when it reads no value.
 */
public final class ShapePassCanalJson implements UDF1<String, Row> {
  private static final JsonFactory JSON = new JsonFactory();

  @Override
  public Row call(String text) throws IOException {
    String database = null;
    String table = null;
    String type = null;
    long ts = 0;
    long shape = 17;
    try (JsonParser parser = JSON.createParser(text)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        JsonToken token = parser.nextToken();
        switch (field) {
          case "database" -> database = parser.getText();
          case "table" -> table = parser.getText();
          case "type" -> type = parser.getText();
          case "ts" -> ts = parser.getLongValue();
          case "mysqlType", "sqlType", "pkNames" -> shape = hashed(parser, token, shape * 31 + field.hashCode());
          default -> parser.skipChildren();
        }
      }
    }
    return RowFactory.create(database, table, type, ts, shape);
  }

  /** {@code hash} carried over every name and scalar of the value the parser is at (an object, array or scalar). */
  private static long hashed(JsonParser parser, JsonToken at, long hash) throws IOException {
    int depth = at.isStructStart() ? 1 : 0;
    long carried = depth == 0 ? hash * 31 + parser.getText().hashCode() : hash * 31 + at.id();
    while (depth > 0) {
      JsonToken token = parser.nextToken();
      if (token.isStructStart()) {
        depth++;
      } else if (token.isStructEnd()) {
        depth--;
      }
      carried = carried * 31 + (token.isScalarValue() || token == JsonToken.FIELD_NAME
          ? parser.getText().hashCode() : token.id());
    }
    return carried;
  }
}
